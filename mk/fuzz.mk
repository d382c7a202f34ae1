# Fuzzing (tests/fuzz/, docs/FUZZING.md).
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

# The report puts the failures last, each with its log's tail and the
# inputs it saved in base64 (at most 16 KiB each), so that the end of a CI
# log, often all that is kept of it, is enough to replay the failure:
# `base64 -d > input; build/fuzz_X input`.
fuzz-smoke: fuzz
	@rm -rf $(BUILD)/fuzz-artifacts; mkdir -p $(BUILD)/fuzz-artifacts
	@$(MAKE) --no-print-directory -k -j$(FUZZ_SMOKE_JOBS) $(FUZZ_TARGETS:%=fuzz-smoke-%); failed=; \
	for t in $(FUZZ_TARGETS); do \
	  rc=$$(cat $(BUILD)/fuzz-$$t.rc 2>/dev/null || echo none); \
	  if [ "$$rc" = 0 ]; then echo "== $$t (exit 0)"; grep -E '^Done|^stat::' $(BUILD)/fuzz-$$t.log; \
	  else failed="$$failed $$t"; fi; \
	done; \
	for t in $$failed; do \
	  echo "== $$t FAILED (exit $$(cat $(BUILD)/fuzz-$$t.rc 2>/dev/null || echo none))"; \
	  tail -n 80 $(BUILD)/fuzz-$$t.log; \
	  for a in $(BUILD)/fuzz-artifacts/$$t-*; do [ -f "$$a" ] || continue; \
	    echo "-- $$a, $$(stat -c %s "$$a") bytes, base64:"; head -c 16384 "$$a" | base64 -w 76; done; \
	done; \
	[ -z "$$failed" ] || { echo "fuzz-smoke failed:$$failed"; exit 1; }

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
$(FUZZ_OBJDIR)/server/ops/config.o: VERSION
$(FUZZ_OBJDIR)/server/ops/config.o: FUZZ_CFLAGS += -DCQD_VERSION='"$(VERSION)"'

fuzz-regress: $(FUZZ_REPLAY)
	$(foreach t,$(FUZZ_TARGETS),$(BUILD)/fuzz-replay/$(t) $(wildcard tests/fuzz/corpus/$(t) tests/fuzz/regress/$(t)) &&) true

-include $(FUZZ_LIB_OBJ:.o=.d) $(FUZZ_TARGETS:%=$(FUZZ_OBJDIR)/tests/fuzz/%.d) $(FUZZ_TARGETS:%=$(BUILD)/tests/fuzz/%.d) $(BUILD)/tests/fuzz/driver.d
