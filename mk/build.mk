# The libraries, the daemon, the generator and its inputs, the C client and
# the examples, and the sources generated from docs/ and inspector/.

CORE_SRC  := $(sort $(wildcard core/src/*.c))
CORE_OBJ  := $(CORE_SRC:%.c=$(BUILD)/%.o)
LIBCQ     := $(BUILD)/libcq.a

PROTO_SRC := $(sort $(wildcard proto/src/*.c))
PROTO_OBJ := $(PROTO_SRC:%.c=$(BUILD)/%.o)
LIBCQP    := $(BUILD)/libcqp.a

# The server minus main() is a library too, so unit tests can link it; its
# subsystems are server/*/ (docs/ARCHITECTURE.md). `collisiond replay`, a
# client of a running daemon, is an archive of its own that only the
# binary's main() and the tests link.
SERVER_SRC := $(sort $(filter-out server/replay/%,$(wildcard server/*/*.c)))
SERVER_OBJ := $(SERVER_SRC:%.c=$(BUILD)/%.o) $(BUILD)/gen/openapi.o $(BUILD)/gen/inspector.o
LIBCQD     := $(BUILD)/libcqd.a
REPLAY_SRC := $(sort $(wildcard server/replay/*.c))
REPLAY_OBJ := $(REPLAY_SRC:%.c=$(BUILD)/%.o)
LIBCQR     := $(BUILD)/libcqr.a
DAEMON     := $(BUILD)/collisiond

# The project's input generator (bench/gen): its library part is linked into
# the Check runner too, which tests it directly (tests/check_gen.c).
GEN_OBJ   := $(BUILD)/bench/gen/gen.o
GEN_BIN   := $(BUILD)/cq-gen

# Deterministic inputs from $(GEN_BIN) (the same files as the benchmarks).
DATA       := $(BUILD)/data
PAIRS_FILE := $(DATA)/pairs-10000-11423.txt
SCENE_FILE := $(DATA)/scene-10000-7.txt
RAYS_FILE  := $(DATA)/rays-100000-99.txt

# The C client (clients/c; docs/CLIENTS.md): build/libcqc.a and its header
# clients/c/include/cqc.h; it needs only msgpuck, and jansson for JSON mode.
CQC_SRC    := $(sort $(wildcard clients/c/src/*.c))
CQC_OBJ    := $(CQC_SRC:%.c=$(BUILD)/%.o)
LIBCQC     := $(BUILD)/libcqc.a
CQC_LIBS   := -lmsgpuck -ljansson -lm
# The programs a user copies (examples/; `make examples` builds, runs nothing).
EXAMPLES   := $(BUILD)/examples/tick

.PHONY: examples run clean

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/proto/%.o: proto/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(PKG_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/server/%.o: server/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(PKG_CFLAGS) -Iserver -MMD -MP -c $< -o $@

# Only config.c reads the version (cqd_version).
$(BUILD)/server/ops/config.o: VERSION
$(BUILD)/server/ops/config.o: ALL_CFLAGS += -DCQD_VERSION='"$(VERSION)"'

$(BUILD)/clients/c/src/%.o: clients/c/src/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CQC_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/examples/%.o: examples/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CQC_CFLAGS) -MMD -MP -c $< -o $@

$(LIBCQC): $(CQC_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/examples/%: $(BUILD)/examples/%.o $(LIBCQC)
	$(CC) $(SANITIZE) -o $@ $^ $(CQC_LIBS) $(LDLIBS)

examples: $(EXAMPLES)

$(LIBCQ): $(CORE_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(LIBCQP): $(PROTO_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(LIBCQD): $(SERVER_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(LIBCQR): $(REPLAY_OBJ)
	@rm -f $@
	ar rcs $@ $^

# The OpenAPI document is compiled in, so the binary serves what docs/ says;
# the script refuses one whose info.version is not the VERSION file's.
$(BUILD)/gen/openapi.c: tools/embed_openapi.py docs/openapi.json VERSION
	@mkdir -p $(dir $@)
	$(PYTHON) tools/embed_openapi.py $@ docs/openapi.json $(VERSION)

$(BUILD)/gen/openapi.o: $(BUILD)/gen/openapi.c
	$(CC) $(ALL_CFLAGS) -c $< -o $@

# The web inspector (docs/INSPECTOR.md) is compiled in the same way: its own
# files and three.js r111 as Debian's libjs-three installs it (not vendored).
THREE_DIR     := /usr/share/javascript/three
INSPECTOR_SRC := $(foreach f,$(sort $(wildcard inspector/www/*)),$(notdir $(f))=$(f)) \
                 three.min.js=$(THREE_DIR)/build/three.min.js \
                 OrbitControls.js=$(THREE_DIR)/examples/js/controls/OrbitControls.js \
                 ConvexHull.js=$(THREE_DIR)/examples/js/math/ConvexHull.js \
                 ConvexGeometry.js=$(THREE_DIR)/examples/js/geometries/ConvexGeometry.js
$(BUILD)/gen/inspector.c: inspector/embed.py $(foreach p,$(INSPECTOR_SRC),$(lastword $(subst =, ,$(p))))
	@mkdir -p $(dir $@)
	$(PYTHON) inspector/embed.py $@ $(INSPECTOR_SRC)

$(BUILD)/gen/inspector.o: $(BUILD)/gen/inspector.c
	$(CC) $(ALL_CFLAGS) -Iserver -c $< -o $@

$(DAEMON): $(BUILD)/server/main.o $(LIBCQR) $(LIBCQD) $(LIBCQP) $(LIBCQ)
	$(CC) $(SANITIZE) -o $@ $(BUILD)/server/main.o $(LIBCQR) $(LIBCQD) $(LIBCQP) $(LIBCQ) $(PKG_LIBS) $(LDLIBS)

$(GEN_BIN): $(BUILD)/bench/gen/main.o $(GEN_OBJ)
	$(CC) $(SANITIZE) -o $@ $^ $(LDLIBS)

$(PAIRS_FILE): $(GEN_BIN)
	@mkdir -p $(DATA)
	$(GEN_BIN) pairs 10000 11423 > $@.tmp && mv $@.tmp $@

$(SCENE_FILE): $(GEN_BIN)
	@mkdir -p $(DATA)
	$(GEN_BIN) scene 10000 7 > $@.tmp && mv $@.tmp $@

# The rays fill the scene's cube: L is the first number of the scene file.
$(RAYS_FILE): $(SCENE_FILE) $(GEN_BIN)
	$(GEN_BIN) rays 100000 99 $$(head -n 1 $(SCENE_FILE) | cut -d' ' -f1) > $@.tmp && mv $@.tmp $@

run: deps
	@$(MAKE) --no-print-directory -j$(JOBS) $(DAEMON)
	@mkdir -p var
	$(DAEMON) --data-dir var/collisiond

clean:
	rm -rf $(BUILD)

-include $(CORE_OBJ:.o=.d) $(PROTO_OBJ:.o=.d) $(SERVER_OBJ:.o=.d) $(REPLAY_OBJ:.o=.d) $(BUILD)/server/main.d
-include $(GEN_OBJ:.o=.d) $(BUILD)/bench/gen/main.d $(CQC_OBJ:.o=.d) $(EXAMPLES:%=%.d)
