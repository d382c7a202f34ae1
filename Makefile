# collisiond build. `make help` lists the targets.

CC       ?= cc
BUILD    ?= build
PYTHON   ?= python3
# The release's version: this file is its one home (docs/RELEASING.md).
VERSION  := $(shell cat VERSION)
# Builds inside test, asan, fuzz, bench and run use every core.
JOBS     ?= $(shell nproc 2>/dev/null || echo 2)

CFLAGS   ?= -O2 -g
WARN     := -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes
ifdef CI
WARN     += -Werror
endif
ALL_CFLAGS = -std=c11 -D_POSIX_C_SOURCE=200809L -fvisibility=hidden $(WARN) $(CFLAGS) $(SANITIZE) \
             -Icore/include -Iproto/include
# core/src's headers are core's own: only core, and the tests and benchmarks
# that test or measure its internals, see them (tests/boundaries.py).
CORE_PRIVATE := $(BUILD)/core/%.o $(BUILD)/tests/%.o $(BUILD)/bench/%.o
$(CORE_PRIVATE): ALL_CFLAGS += -Icore/src
LDLIBS   := -lm -pthread
PKG_CFLAGS = $(shell pkg-config --cflags jansson libmicrohttpd libuv 2>/dev/null)
# msgpuck ships no .pc file; its libmsgpuck.a holds the non-inline copies
# and the tables (mp_type_hint) its header only declares.
PKG_LIBS   = $(shell pkg-config --libs jansson libmicrohttpd libuv 2>/dev/null) -lmsgpuck

# Debian packages building and running the daemon need (`make deps`). Each
# target that needs more installs it itself, through `make deps DEB_PKGS=...`:
# the tests (below), the cluster test, fuzzing and the benchmarks.
DEB_PKGS := gcc libc6-dev make pkg-config python3 \
            libmicrohttpd-dev libjansson-dev libuv1-dev libmsgpuck-dev libjs-three
# Check for the unit suites, prometheus_client as the e2e tests' exposition
# parser, msgpack as their MessagePack codec, git for newcomer-check's clone.
TEST_DEB_PKGS := check python3-prometheus-client python3-msgpack git

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

TEST_SRC  := $(sort $(wildcard tests/*.c))
TEST_OBJ  := $(TEST_SRC:%.c=$(BUILD)/%.o)
TEST_BIN  := $(BUILD)/check_all
CHECK_CFLAGS = $(shell pkg-config --cflags check 2>/dev/null)
CHECK_LIBS   = $(shell pkg-config --libs check 2>/dev/null)

BENCH_SRC := $(sort $(wildcard bench/*.c))
BENCH_OBJ := $(BENCH_SRC:%.c=$(BUILD)/%.o)
BENCH_BIN := $(BUILD)/cq-bench

# The game tick over the wire (bench/tick, `make bench-tick`): a client of
# the daemon's HTTP and stream transports in JSON and MessagePack, and the
# same ticks in process through libcq.
TICK_SRC  := $(sort $(wildcard bench/tick/*.c))
TICK_OBJ  := $(TICK_SRC:%.c=$(BUILD)/%.o)
TICK_BIN  := $(BUILD)/cq-tick
TICK_LIBS := -lmsgpuck -ljansson

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
CQC_CHECK_SRC := $(sort $(wildcard clients/c/tests/*.c))
CQC_CHECK_OBJ := $(CQC_CHECK_SRC:%.c=$(BUILD)/%.o)
CQC_CHECK  := $(BUILD)/check_cqc
# The programs a user copies (examples/; `make examples` builds, runs nothing).
EXAMPLES   := $(BUILD)/examples/tick

.PHONY: all deps test-deps test asan bench run clean help newcomer-check examples

all: $(LIBCQ) $(LIBCQP) $(DAEMON) $(BENCH_BIN) $(GEN_BIN) $(LIBCQC)

help:
	@echo "make            build $(LIBCQ), $(LIBCQP), $(DAEMON), $(BENCH_BIN) and $(GEN_BIN)"
	@echo "make deps       install the Debian packages building and running need (only the missing ones)"
	@echo "make test       build, run the end-to-end tests against the daemon, then every Check suite"
	@echo "make boundaries fail on an include across the layers' private headers or an unprefixed symbol"
	@echo "make examples   build the client examples ($(EXAMPLES)) against $(LIBCQC)"
	@echo "make bench-client the C client's tick: encode + decode per tick beside the daemon's CPU"
	@echo "make test-pyclient  the Python client's tests (clients/python/tests) against the daemon, both encodings"
	@echo "make newcomer-check  clone the committed tree into an empty directory; run the README's commands there"
	@echo "make asan       the same tests with everything built under AddressSanitizer and UBSan"
	@echo "make fuzz       build the libFuzzer targets $(BUILD)/fuzz_* with clang and ASan/UBSan (docs/FUZZING.md)"
	@echo "make fuzz-smoke make fuzz, then run each target for 60 s, FUZZ_SMOKE_JOBS at a time; fails on any crash, leak or timeout"
	@echo "make fuzz-regress replay tests/fuzz/corpus and tests/fuzz/regress through the targets (part of test and asan)"
	@echo "make bench      collisiond vs Bullet, libccd and FCL on the same inputs, and worlds under game load: one table (docs/PERFORMANCE.md)"
	@echo "make bench-all  make bench plus the rows of make bench-http, make bench-tick and make bench-client"
	@echo "make bench-decode proto's check and decode of a tick's move batch, JSON and MessagePack, on CPU 0"
	@echo "make bench-http POST /v1/pair under wrk: collisiond, libmicrohttpd+jansson alone, nginx; contacts latency"
	@echo "make bench-tick the game tick over HTTP and the stream, JSON and MessagePack, beside libcq and Bullet in process"
	@echo "make run        start the daemon on 127.0.0.1:7878 (data in ./var/collisiond)"
	@echo "make cluster-test  three daemons behind the nginx router of deploy/: sharding, kill -9, rebalancing"
	@echo "make deploy-check  deploy/ against real validators: Kubernetes and compose schemas, promtool, nginx -t"
	@echo "make hostile-soak  every attack of issue 25 for a minute against a default daemon; authorised clients must get answers within 1 s"
	@echo "make inspector-test  eslint, then the web inspector in headless Chromium against the daemon (screenshots in $(BUILD)/inspector)"

deps:
	@missing=$$(for p in $(DEB_PKGS); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  sudo=; [ "$$(id -u)" -eq 0 ] || sudo=sudo; \
	  echo "installing:" $$missing; \
	  $$sudo apt-get update -qq && $$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	fi

test-deps:
	@$(MAKE) --no-print-directory deps DEB_PKGS="$(TEST_DEB_PKGS)"

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/tests/%.o: tests/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(PKG_CFLAGS) $(CHECK_CFLAGS) -Itests -Iserver -Ibench/gen -MMD -MP -c $< -o $@

$(BUILD)/proto/%.o: proto/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(PKG_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/server/%.o: server/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(PKG_CFLAGS) -Iserver -MMD -MP -c $< -o $@

# The client and its users see its public header alone, none of the daemon's.
CQC_CFLAGS = -std=c11 -D_POSIX_C_SOURCE=200809L -fvisibility=hidden $(WARN) $(CFLAGS) $(SANITIZE) -Iclients/c/include

$(BUILD)/clients/c/src/%.o: clients/c/src/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CQC_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/clients/c/tests/%.o: clients/c/tests/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CQC_CFLAGS) $(CHECK_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/examples/%.o: examples/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CQC_CFLAGS) -MMD -MP -c $< -o $@

$(LIBCQC): $(CQC_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/examples/%: $(BUILD)/examples/%.o $(LIBCQC)
	$(CC) $(SANITIZE) -o $@ $^ $(CQC_LIBS) $(LDLIBS)

examples: $(EXAMPLES)

$(CQC_CHECK): $(CQC_CHECK_OBJ) $(LIBCQC)
	$(CC) $(SANITIZE) -o $@ $^ $(CQC_LIBS) $(CHECK_LIBS) $(LDLIBS)

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
# its info.version must be the VERSION file's.
$(BUILD)/gen/openapi.c: docs/openapi.json VERSION
	@mkdir -p $(dir $@)
	$(PYTHON) -c 'import json, sys; d = open(sys.argv[1], "rb").read(); v = json.loads(d)["info"]["version"]; \
	  v == sys.argv[2] or sys.exit("docs/openapi.json: info.version %s is not VERSION %s" % (v, sys.argv[2])); \
	  print("#include <stddef.h>\nconst char cqd_openapi_json[] = {" + ",".join(str(b) for b in d) + ",0};"); \
	  print("const size_t cqd_openapi_len = %d;" % len(d))' $< $(VERSION) > $@.tmp && mv $@.tmp $@

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

$(TEST_BIN): $(TEST_OBJ) $(GEN_OBJ) $(LIBCQR) $(LIBCQD) $(LIBCQP) $(LIBCQ)
	$(CC) $(SANITIZE) -o $@ $(TEST_OBJ) $(GEN_OBJ) $(LIBCQR) $(LIBCQD) $(LIBCQP) $(LIBCQ) $(PKG_LIBS) $(CHECK_LIBS) $(LDLIBS)

$(BENCH_BIN): $(BENCH_OBJ) $(LIBCQ)
	$(CC) $(SANITIZE) -o $@ $(BENCH_OBJ) $(LIBCQ) $(LDLIBS)

$(TICK_BIN): $(TICK_OBJ) $(LIBCQ)
	$(CC) $(SANITIZE) -o $@ $(TICK_OBJ) $(LIBCQ) $(TICK_LIBS) $(LDLIBS)

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

# Every suite runs in one runner so the run ends with Check's one summary line.
# The end-to-end tests start the real daemon on ephemeral loopback ports,
# once with JSON bodies and once with MessagePack ones.
test: deps test-deps
	@$(MAKE) --no-print-directory -j$(JOBS) $(TEST_BIN) $(DAEMON) $(PAIRS_FILE) $(CQC_CHECK) $(EXAMPLES)
	@$(MAKE) --no-print-directory boundaries
	$(PYTHON) tests/e2e/run.py $(DAEMON)
	$(PYTHON) tests/e2e/run.py $(DAEMON) --encoding msgpack
	CK_FORK=yes CQ_PAIRS_FILE=$(PAIRS_FILE) $(TEST_BIN)
	CK_FORK=yes CQC_DAEMON=$(DAEMON) $(CQC_CHECK)
	$(PYCLIENT_TEST)
	@$(MAKE) --no-print-directory fuzz-regress

# The layers' includes and the archives' symbols (tests/boundaries.py).
.PHONY: boundaries
boundaries: $(LIBCQ) $(LIBCQP) $(LIBCQD) $(LIBCQR) $(LIBCQC)
	$(PYTHON) tests/test_boundaries.py
	$(PYTHON) tests/boundaries.py $(BUILD)

# The Python client (clients/python) against the daemon, in both encodings,
# and its shard ring against deploy/nginx/ring.py (docs/CLIENTS.md (its Python section)).
PYCLIENT_TEST = CQ_DAEMON=$(DAEMON) $(PYTHON) -m unittest discover -s clients/python/tests -p 'test_*.py'

.PHONY: test-pyclient
test-pyclient: deps test-deps
	@$(MAKE) --no-print-directory -j$(JOBS) $(DAEMON)
	$(PYCLIENT_TEST)

# Under the sanitizers the suites run one process each, $(JOBS) at a time
# (tests/run_suites.py): one after another they take most of CI's time.
asan: deps test-deps
	@$(MAKE) --no-print-directory -j$(JOBS) BUILD=build/asan \
	  SANITIZE="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer" \
	  build/asan/check_all build/asan/collisiond build/asan/data/pairs-10000-11423.txt build/asan/check_cqc
	ASAN_OPTIONS=detect_leaks=1 $(PYTHON) tests/e2e/run.py build/asan/collisiond
	ASAN_OPTIONS=detect_leaks=1 CQC_DAEMON=build/asan/collisiond build/asan/check_cqc
	ASAN_OPTIONS=detect_leaks=1 $(PYTHON) tests/e2e/run.py build/asan/collisiond --encoding msgpack
	CQ_PAIRS_FILE=build/asan/data/pairs-10000-11423.txt ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  $(PYTHON) tests/run_suites.py build/asan/check_all tests/suites.h $(JOBS)
	ASAN_OPTIONS=detect_leaks=1 $(MAKE) --no-print-directory BUILD=build/asan SANITIZE="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer" fuzz-regress

# ---- fuzzing (tests/fuzz/, docs/FUZZING.md) --------------------------------
# `make fuzz`: libFuzzer targets, everything but main.c rebuilt with clang and
# the sanitizers into $(FUZZ_OBJDIR). `make fuzz-regress`: the same targets
# with tests/fuzz/driver.c instead of libFuzzer (any CC, this build's flags),
# replaying the committed corpus and every input that once crashed.
FUZZ_DEB_PKGS := clang libclang-rt-14-dev
FUZZ_TARGETS  := fuzz_request fuzz_store fuzz_geometry fuzz_msgpack fuzz_differential
FUZZ_CC       := clang
FUZZ_OBJDIR   := $(BUILD)/fuzzobj
FUZZ_SAN      := -fsanitize=address,undefined -fno-sanitize-recover=all
FUZZ_CFLAGS    = -std=c11 -D_POSIX_C_SOURCE=200809L -fvisibility=hidden $(filter-out -Werror,$(WARN)) \
                 -g -O1 $(FUZZ_SAN) -Icore/include -Iproto/include -Iserver $(PKG_CFLAGS)
$(FUZZ_OBJDIR)/core/%.o $(FUZZ_OBJDIR)/tests/%.o: FUZZ_CFLAGS += -Icore/src
FUZZ_LIB_OBJ  := $(CORE_SRC:%.c=$(FUZZ_OBJDIR)/%.o) $(PROTO_SRC:%.c=$(FUZZ_OBJDIR)/%.o) \
                 $(SERVER_SRC:%.c=$(FUZZ_OBJDIR)/%.o) $(FUZZ_OBJDIR)/gen/openapi.o $(FUZZ_OBJDIR)/gen/inspector.o
FUZZ_BIN      := $(FUZZ_TARGETS:%=$(BUILD)/%)
FUZZ_REPLAY   := $(FUZZ_TARGETS:%=$(BUILD)/fuzz-replay/%)
# One minute per target, FUZZ_SMOKE_JOBS at a time (each log in
# $(BUILD)/fuzz-*.log): by default one per core, so each target has a core
# for its whole minute and reaches as far in it on any machine of that
# size, rather than five sharing two cores by the scheduler's whim.
# A fixed seed and an emptied scratch corpus make every run, here or in CI,
# try the same inputs in the same order (as far as its minute reaches): a
# gate must not pass or fail by luck. Discovery is the longer runs with
# other seeds (docs/FUZZING.md). The committed seeds are read only.
FUZZ_SMOKE_JOBS ?= $(JOBS)
FUZZ_SMOKE    := -seed=1 -max_total_time=60 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1

.PHONY: fuzz fuzz-deps fuzz-smoke fuzz-regress
# Kept, so a rebuild relinks only what changed.
.SECONDARY: $(FUZZ_TARGETS:%=$(FUZZ_OBJDIR)/tests/fuzz/%.o) $(FUZZ_TARGETS:%=$(BUILD)/tests/fuzz/%.o) \
            $(BUILD)/tests/fuzz/driver.o

fuzz-deps:
	@$(MAKE) --no-print-directory deps DEB_PKGS="$(FUZZ_DEB_PKGS)"

fuzz: deps fuzz-deps
	@$(MAKE) --no-print-directory -j$(JOBS) $(FUZZ_BIN)

$(FUZZ_OBJDIR)/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -MMD -MP -c $< -o $@

$(FUZZ_OBJDIR)/gen/openapi.o: $(BUILD)/gen/openapi.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -c $< -o $@

$(FUZZ_OBJDIR)/gen/inspector.o: $(BUILD)/gen/inspector.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -c $< -o $@

$(FUZZ_OBJDIR)/libfuzzcq.a: $(FUZZ_LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/fuzz_%: $(FUZZ_OBJDIR)/tests/fuzz/fuzz_%.o $(FUZZ_OBJDIR)/libfuzzcq.a
	$(FUZZ_CC) $(FUZZ_SAN) -fsanitize=fuzzer -o $@ $^ $(PKG_LIBS) $(LDLIBS)

fuzz-smoke: fuzz
	@mkdir -p $(BUILD)/fuzz-artifacts
	@$(MAKE) --no-print-directory -k -j$(FUZZ_SMOKE_JOBS) $(FUZZ_TARGETS:%=fuzz-smoke-%); fail=0; \
	for t in $(FUZZ_TARGETS); do \
	  echo "== $$t (exit $$(cat $(BUILD)/fuzz-$$t.rc))"; \
	  if [ "$$(cat $(BUILD)/fuzz-$$t.rc)" = 0 ]; then grep -E '^Done|^stat::' $(BUILD)/fuzz-$$t.log; \
	  else tail -n 80 $(BUILD)/fuzz-$$t.log; fail=1; fi; \
	done; exit $$fail

# One target's smoke minute; it records its exit code for fuzz-smoke's
# report rather than failing, so every target runs and is reported.
fuzz-smoke-%:
	@rm -rf $(BUILD)/fuzz-corpus/$*; mkdir -p $(BUILD)/fuzz-corpus/$*; \
	dict=; [ ! -f tests/fuzz/$*.dict ] || dict=-dict=tests/fuzz/$*.dict; \
	$(BUILD)/$* $(FUZZ_SMOKE) -artifact_prefix=$(BUILD)/fuzz-artifacts/$*- $$dict \
	  $(BUILD)/fuzz-corpus/$* tests/fuzz/corpus/$* >$(BUILD)/fuzz-$*.log 2>&1; echo $$? >$(BUILD)/fuzz-$*.rc

$(BUILD)/fuzz-replay/%: $(BUILD)/tests/fuzz/%.o $(BUILD)/tests/fuzz/driver.o $(LIBCQD) $(LIBCQP) $(LIBCQ)
	@mkdir -p $(dir $@)
	$(CC) $(SANITIZE) -o $@ $^ $(PKG_LIBS) $(LDLIBS)

# Only config.c reads the version (cqd_version).
$(BUILD)/server/ops/config.o $(FUZZ_OBJDIR)/server/ops/config.o: VERSION
$(BUILD)/server/ops/config.o: ALL_CFLAGS += -DCQD_VERSION='"$(VERSION)"'
$(FUZZ_OBJDIR)/server/ops/config.o: FUZZ_CFLAGS += -DCQD_VERSION='"$(VERSION)"'

fuzz-regress: $(FUZZ_REPLAY)
	$(foreach t,$(FUZZ_TARGETS),$(BUILD)/fuzz-replay/$(t) $(wildcard tests/fuzz/corpus/$(t) tests/fuzz/regress/$(t)) &&) true

# `make bench`: cq-bench beside its peers (bench/peers: Bullet, libccd, FCL) on
# the same inputs, one table (bench/table.py; docs/PERFORMANCE.md). Only the
# benchmark needs the peers' packages, so `make deps` leaves them out.
PEER_DEB_PKGS := g++ libbullet-dev libccd-dev libfcl-dev
PEER_SRC      := $(sort $(wildcard bench/peers/*.cpp))
PEER_BIN      := $(BUILD)/cq-peers
# N:FRAMES per world (cq-gen scene N 7); fewer frames at 100,000 keep a run short.
BENCH_WORLDS  ?= 10000:100 100000:20
BENCH_RUNS    ?= 3
# The CPU every benchmark program runs on (table.py: the first allowed; -1: any).
BENCH_CPU     ?=
BENCH_N       := $(foreach w,$(BENCH_WORLDS),$(firstword $(subst :, ,$(w))))

# bullet.pc adds -std=c++11; the later -std=c++17 wins.
$(PEER_BIN): $(PEER_SRC) bench/peers/peers.h
	@mkdir -p $(dir $@)
	$(CXX) -O2 -g -Wall -Wextra $$(pkg-config --cflags bullet ccd fcl) -std=c++17 -o $@ $(PEER_SRC) \
	  $$(pkg-config --libs bullet ccd fcl)

$(DATA)/scene-%-7.txt: $(GEN_BIN)
	@mkdir -p $(DATA)
	$(GEN_BIN) scene $* 7 > $@.tmp && mv $@.tmp $@

$(DATA)/rays-100000-99-in-%.txt: $(DATA)/scene-%-7.txt $(GEN_BIN)
	$(GEN_BIN) rays 100000 99 $$(head -n 1 $< | cut -d' ' -f1) > $@.tmp && mv $@.tmp $@

# Worlds under game load (issue 21; docs/PERFORMANCE.md "Worlds under game
# load"): `cq-bench load` once a round (bench/load.c) and, once, the daemon
# over HTTP (bench/world_load/run.py, Debian's python3 for msgpack and
# numpy). LOAD_MOVE N:FRAMES of coherent motion, LOAD_TELEPORT N for the
# mass moves, LOAD_PUT N:REPS for one PUT; LOAD_HTTP= (empty) skips the
# HTTP part.
LOAD_DEB_PKGS := python3 python3-msgpack python3-numpy util-linux
LOAD_MOVE     ?= 1000:200 10000:100 100000:20
LOAD_TELEPORT ?= 10000 100000
LOAD_PUT      ?= 60000:200
LOAD_HTTP     ?= $(BUILD)/bench-world-load.txt
LOAD_HTTP_ARGS ?=
LOAD_N        := $(sort $(foreach w,$(LOAD_MOVE) $(LOAD_PUT),$(firstword $(subst :, ,$(w)))) $(LOAD_TELEPORT) \
                   $(if $(LOAD_HTTP),10000 60000))

bench: deps
	@$(MAKE) --no-print-directory deps DEB_PKGS="$(PEER_DEB_PKGS) $(LOAD_DEB_PKGS)"
	@$(MAKE) --no-print-directory -j$(JOBS) $(BENCH_BIN) $(PEER_BIN) $(PAIRS_FILE) $(if $(LOAD_HTTP),$(DAEMON)) \
	  $(sort $(BENCH_N:%=$(DATA)/scene-%-7.txt) $(LOAD_N:%=$(DATA)/scene-%-7.txt)) $(BENCH_N:%=$(DATA)/rays-100000-99-in-%.txt)
	$(if $(LOAD_HTTP),/usr/bin/python3 bench/world_load/run.py --daemon $(DAEMON) --data $(DATA) --work $(BUILD) \
	  $(if $(BENCH_CPU),--daemon-cpu $(BENCH_CPU)) $(LOAD_HTTP_ARGS) --raw $(LOAD_HTTP) > /dev/null)
	$(PYTHON) bench/table.py --cq $(BENCH_BIN) --peers $(PEER_BIN) --pairs $(PAIRS_FILE) --data $(DATA) \
	  $(BENCH_WORLDS:%=--world %) --runs $(BENCH_RUNS) $(if $(BENCH_CPU),--cpu $(BENCH_CPU)) --raw $(BUILD)/bench-raw $(if $(BENCH_HTTP),--http $(BENCH_HTTP)) \
	  $(if $(BENCH_TICK),--tick $(BENCH_TICK)) $(if $(BENCH_CLIENT),--client $(BENCH_CLIENT)) \
	  $(LOAD_MOVE:%=--load-move %) $(LOAD_TELEPORT:%=--load-teleport %) \
	  $(LOAD_PUT:%=--load-put %) $(if $(LOAD_HTTP),--load-http $(LOAD_HTTP))

# bench plus bench-http's, bench-tick's and bench-client's rows (needs wrk and nginx).
.PHONY: bench-all
bench-all:
	@mkdir -p $(BUILD)
	$(MAKE) --no-print-directory bench-http > $(BUILD)/bench-http.txt || { cat $(BUILD)/bench-http.txt; exit 1; }
	$(MAKE) --no-print-directory bench-tick > $(BUILD)/bench-tick.txt || { cat $(BUILD)/bench-tick.txt; exit 1; }
	$(MAKE) --no-print-directory bench-client > $(BUILD)/bench-client.txt || { cat $(BUILD)/bench-client.txt; exit 1; }
	@$(MAKE) --no-print-directory bench BENCH_HTTP=$(BUILD)/bench-http.txt BENCH_TICK=$(BUILD)/bench-tick-raw.txt \
	  BENCH_CLIENT=$(BUILD)/bench-client-raw.txt

# Only the HTTP benchmark needs these, so `make deps` leaves them out.
BENCH_DEB_PKGS := wrk nginx
# libmicrohttpd and jansson alone, set up as the daemon sets them up (bench/http/floor.c).
FLOOR_BIN      := $(BUILD)/http-floor

$(FLOOR_BIN): bench/http/floor.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(PKG_CFLAGS) -o $@ $< $(PKG_LIBS) $(LDLIBS)

.PHONY: bench-http
bench-http: deps
	@$(MAKE) --no-print-directory deps DEB_PKGS="$(BENCH_DEB_PKGS) $(TICK_DEB_PKGS)"
	@$(MAKE) --no-print-directory -j$(JOBS) $(DAEMON) $(FLOOR_BIN) $(SCENE_FILE) $(TICK_BIN)
	bench/http/run.sh $(DAEMON) $(SCENE_FILE) $(FLOOR_BIN) $(TICK_BIN)

# `make bench-tick`: the game tick over the wire (bench/tick/run.py;
# docs/PERFORMANCE.md "The game tick over the wire"). N:TICKS per scene
# (cq-gen scene N 7), fewer ticks at 100,000 so a run takes a few minutes;
# the daemon on TICK_DAEMON_CPU, the client on TICK_CLIENT_CPU (by default
# the first two CPUs this process may use).
TICK_DEB_PKGS   := libmsgpuck-dev util-linux
TICK_WORLDS     ?= 1000:50 10000:20 100000:5
TICK_WARMUP     ?= 2
TICK_RUNS       ?= 3
TICK_DAEMON_CPU ?=
TICK_CLIENT_CPU ?=
TICK_N          := $(foreach w,$(TICK_WORLDS),$(firstword $(subst :, ,$(w))))

.PHONY: bench-tick
bench-tick: deps
	@$(MAKE) --no-print-directory deps DEB_PKGS="$(PEER_DEB_PKGS) $(TICK_DEB_PKGS)"
	@$(MAKE) --no-print-directory -j$(JOBS) $(DAEMON) $(TICK_BIN) $(PEER_BIN) $(TICK_N:%=$(DATA)/scene-%-7.txt)
	$(PYTHON) bench/tick/run.py --daemon $(DAEMON) --tick $(TICK_BIN) --peers $(PEER_BIN) --data $(DATA) \
	  $(TICK_WORLDS:%=--world %) --warmup $(TICK_WARMUP) --runs $(TICK_RUNS) \
	  $(if $(TICK_DAEMON_CPU),--daemon-cpu $(TICK_DAEMON_CPU)) $(if $(TICK_CLIENT_CPU),--client-cpu $(TICK_CLIENT_CPU)) \
	  --raw $(BUILD)/bench-tick-raw.txt

# `make bench-decode`: proto's check and decode of a tick's move batch, in
# JSON and MessagePack, 10,000 and 100,000 moves (bench/decode/main.c;
# docs/PERFORMANCE.md, "Decoding a tick's batch"), on one CPU.
DECODE_BENCH_BIN := $(BUILD)/cq-bench-decode
DECODE_CPU       ?= 0
DECODE_ARGS      ?=

$(DECODE_BENCH_BIN): $(BUILD)/bench/decode/main.o $(LIBCQP) $(LIBCQ)
	$(CC) $(SANITIZE) -o $@ $^ $(PKG_LIBS) $(LDLIBS)

$(BUILD)/bench/decode/%.o: bench/decode/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(PKG_CFLAGS) -MMD -MP -c $< -o $@

.PHONY: bench-decode
bench-decode: deps
	@$(MAKE) --no-print-directory -j$(JOBS) $(DECODE_BENCH_BIN)
	taskset -c $(DECODE_CPU) $(DECODE_BENCH_BIN) $(DECODE_ARGS)

# `make bench-client`: the C client's tick (examples/tick on libcqc) at
# 10,000 and 100,000 boxes, its encode + decode per tick beside the daemon's
# CPU for the tick (bench/client/run.py; docs/CLIENTS.md). N:TICKS per run;
# its --raw file feeds `make bench BENCH_CLIENT=$(BUILD)/bench-client-raw.txt`.
CLIENT_WORLDS ?= 10000:60 100000:10
CLIENT_RUNS   ?= 3

.PHONY: bench-client
bench-client: deps
	@$(MAKE) --no-print-directory deps DEB_PKGS="util-linux"
	@$(MAKE) --no-print-directory -j$(JOBS) $(DAEMON) $(EXAMPLES)
	$(PYTHON) bench/client/run.py --daemon $(DAEMON) --tick $(BUILD)/examples/tick \
	  $(CLIENT_WORLDS:%=--world %) --runs $(CLIENT_RUNS) --raw $(BUILD)/bench-client-raw.txt

# Three daemons and the nginx router of deploy/nginx on loopback, run for real
# (tests/cluster/run.py; docs/DEPLOY.md).
# nginx and its stream module for the router (Debian starts nginx on port 80
# once installed: `systemctl disable --now nginx` on a machine that should not).
CLUSTER_DEB_PKGS := nginx libnginx-mod-stream

.PHONY: cluster-test
cluster-test: deps
	@$(MAKE) --no-print-directory deps DEB_PKGS="$(CLUSTER_DEB_PKGS)"
	@$(MAKE) --no-print-directory -j$(JOBS) $(DAEMON)
	$(PYTHON) tests/cluster/run.py $(DAEMON)

# What a newcomer does: a clone of the committed tree alone, in an empty
# directory with no siblings, then the README's test and run commands
# (tests/newcomer/check.py). Uncommitted changes are not in the clone.
newcomer-check: test-deps
	$(PYTHON) tests/newcomer/check.py .

# The deployment files against the Kubernetes OpenAPI and compose-spec
# schemas (npm, pinned in tests/deploy/package-lock.json), promtool, nginx -t
# and tests/cluster/check_manifests.py (tests/deploy/run.sh; docs/DEPLOY.md).
.PHONY: deploy-check
deploy-check: deps
	@$(MAKE) --no-print-directory deps DEB_PKGS="$(CLUSTER_DEB_PKGS) python3-yaml"
	@# A machine's own node (nodesource's nodejs bundles npm) is used as it is.
	@command -v npm >/dev/null || $(MAKE) --no-print-directory deps DEB_PKGS="nodejs npm"
	@$(MAKE) --no-print-directory -j$(JOBS) $(DAEMON)
	tests/deploy/run.sh $(DAEMON)

# Issue 25's soak (tests/hostile/soak.py): every hostile client of the issue
# at once for 60 s against a daemon with default settings (plus --token and a
# temporary --data-dir), while authorised clients over HTTP and the stream
# must each get their expected answer within 1 s; then a restart from the
# data directory. About 70 s. Its own target: it measures time, make test
# does not. Debian's python3 for msgpack.
.PHONY: hostile-soak
hostile-soak: deps test-deps
	@$(MAKE) --no-print-directory -j$(JOBS) $(DAEMON)
	/usr/bin/python3 tests/hostile/soak.py $(DAEMON)

# The web inspector in headless Chromium (tests/inspector/run.sh; docs/INSPECTOR.md):
# Debian's chromium (and its driver), playwright-core and eslint from npm,
# pinned by tests/inspector/package-lock.json.
INSPECTOR_DEB_PKGS := chromium chromium-driver
.PHONY: inspector-test
inspector-test: deps
	@$(MAKE) --no-print-directory deps DEB_PKGS="$(INSPECTOR_DEB_PKGS)"
	@command -v npm >/dev/null || $(MAKE) --no-print-directory deps DEB_PKGS="nodejs npm"
	@$(MAKE) --no-print-directory -j$(JOBS) $(DAEMON)
	tests/inspector/run.sh $(DAEMON) $(BUILD)/inspector

run: deps
	@$(MAKE) --no-print-directory -j$(JOBS) $(DAEMON)
	@mkdir -p var
	$(DAEMON) --data-dir var/collisiond

clean:
	rm -rf $(BUILD)

-include $(CORE_OBJ:.o=.d) $(PROTO_OBJ:.o=.d) $(SERVER_OBJ:.o=.d) $(REPLAY_OBJ:.o=.d) $(BUILD)/server/main.d $(TEST_OBJ:.o=.d) $(BENCH_OBJ:.o=.d)
-include $(GEN_OBJ:.o=.d) $(BUILD)/bench/gen/main.d $(TICK_OBJ:.o=.d) $(BUILD)/bench/decode/main.d
-include $(CQC_OBJ:.o=.d) $(CQC_CHECK_OBJ:.o=.d) $(EXAMPLES:%=%.d)
-include $(FUZZ_LIB_OBJ:.o=.d) $(FUZZ_TARGETS:%=$(FUZZ_OBJDIR)/tests/fuzz/%.d) $(FUZZ_TARGETS:%=$(BUILD)/tests/fuzz/%.d) $(BUILD)/tests/fuzz/driver.d
