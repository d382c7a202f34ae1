# The tests: the Check runner and the C client's suites, `make test` and
# `make asan`, the Python client's tests, the newcomer's clone, the soak.

TEST_SRC  := $(sort $(wildcard tests/*.c))
TEST_OBJ  := $(TEST_SRC:%.c=$(BUILD)/%.o)
TEST_BIN  := $(BUILD)/check_all
CHECK_CFLAGS = $(shell pkg-config --cflags check 2>/dev/null)
CHECK_LIBS   = $(shell pkg-config --libs check 2>/dev/null)

CQC_CHECK_SRC := $(sort $(wildcard clients/c/tests/*.c))
CQC_CHECK_OBJ := $(CQC_CHECK_SRC:%.c=$(BUILD)/%.o)
CQC_CHECK  := $(BUILD)/check_cqc

.PHONY: test asan test-pyclient newcomer-check hostile-soak

$(BUILD)/tests/%.o: tests/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(PKG_CFLAGS) $(CHECK_CFLAGS) -Itests -Iserver -Ibench/gen -MMD -MP -c $< -o $@

$(BUILD)/clients/c/tests/%.o: clients/c/tests/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CQC_CFLAGS) $(CHECK_CFLAGS) -MMD -MP -c $< -o $@

$(CQC_CHECK): $(CQC_CHECK_OBJ) $(LIBCQC)
	$(CC) $(SANITIZE) -o $@ $^ $(CQC_LIBS) $(CHECK_LIBS) $(LDLIBS)

$(TEST_BIN): $(TEST_OBJ) $(GEN_OBJ) $(LIBCQR) $(LIBCQD) $(LIBCQP) $(LIBCQ)
	$(CC) $(SANITIZE) -o $@ $(TEST_OBJ) $(GEN_OBJ) $(LIBCQR) $(LIBCQD) $(LIBCQP) $(LIBCQ) $(PKG_LIBS) $(CHECK_LIBS) $(LDLIBS)

# The box suites again on a build without SIMD (-DCQ_NO_SIMD, in
# $(BUILD)/scalar): there the scalar SAT and the Sutherland-Hodgman passes
# answer every box contact, as on a CPU neither x86 SSE2 nor aarch64 (and
# the passes without AVX2), which the suites above never run. Their own
# runner, check_main.c with their names alone; about 20 s of build and
# 15 s of tests.
SCALAR_SUITES := sat box_box box_clip
SCALAR_CHECK  := $(BUILD)/check_scalar
SCALAR_OBJ    := $(SCALAR_SUITES:%=$(BUILD)/tests/check_%.o) $(BUILD)/tests/testutil.o $(BUILD)/tests/check_main_scalar.o

$(BUILD)/tests/check_main_scalar.o: tests/check_main.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(CHECK_CFLAGS) -Itests '-DCQ_RUN_SUITES(X)=$(foreach s,$(SCALAR_SUITES),X($(s)))' -c $< -o $@

$(SCALAR_CHECK): $(SCALAR_OBJ) $(LIBCQ)
	$(CC) $(SANITIZE) -o $@ $(SCALAR_OBJ) $(LIBCQ) $(CHECK_LIBS) $(LDLIBS)

.PHONY: test-scalar
test-scalar: $(PAIRS_FILE)
	@$(MAKE) --no-print-directory -j$(JOBS) BUILD=$(BUILD)/scalar CFLAGS="$(CFLAGS) -DCQ_NO_SIMD" $(BUILD)/scalar/check_scalar
	CK_FORK=yes CQ_PAIRS_FILE=$(PAIRS_FILE) $(BUILD)/scalar/check_scalar

# The unit tests first, the end-to-end tests after: a broken module fails
# in seconds, with its own suite's message, before minutes of daemons.
# Every suite runs in one runner so that part ends with Check's one summary
# line; fuzz-regress replays the fuzzers' corpora. The end-to-end tests
# start the real daemon on ephemeral loopback ports, once with JSON bodies
# and once with MessagePack ones; the scenario modules then run again with
# their requests on the stream transport, in both encodings.
E2E_STREAM_MODULES := test_geometry test_world test_errors test_endpoints test_limits_documented
test: deps test-deps
	@$(MAKE) --no-print-directory -j$(JOBS) $(TEST_BIN) $(DAEMON) $(PAIRS_FILE) $(CQC_CHECK) $(EXAMPLES)
	@$(MAKE) --no-print-directory boundaries
	CK_FORK=yes CQ_PAIRS_FILE=$(PAIRS_FILE) $(TEST_BIN)
	@$(MAKE) --no-print-directory test-scalar
	CK_FORK=yes CQC_DAEMON=$(DAEMON) $(CQC_CHECK)
	@$(MAKE) --no-print-directory fuzz-regress
	$(PYTHON) tests/e2e/run.py $(DAEMON)
	$(PYTHON) tests/e2e/run.py $(DAEMON) --encoding msgpack
	$(PYTHON) tests/e2e/run.py $(DAEMON) --transport stream $(E2E_STREAM_MODULES)
	$(PYTHON) tests/e2e/run.py $(DAEMON) --transport stream --encoding msgpack $(E2E_STREAM_MODULES)
	$(PYCLIENT_TEST)

# The layers' includes and the archives' symbols (tests/boundaries.py),
# and the places docs/HACKING.md's checklists name (tests/checklists.py).
.PHONY: boundaries
boundaries: $(LIBCQ) $(LIBCQP) $(LIBCQD) $(LIBCQR) $(LIBCQC)
	$(PYTHON) tests/test_boundaries.py
	$(PYTHON) tests/boundaries.py $(BUILD)
	$(PYTHON) tests/test_checklists.py
	$(PYTHON) tests/checklists.py

# The Python client (clients/python) against the daemon, in both encodings,
# and its shard ring against deploy/nginx/ring.py (docs/CLIENTS.md (its Python section)).
PYCLIENT_TEST = CQ_DAEMON=$(DAEMON) $(PYTHON) -m unittest discover -s clients/python/tests -p 'test_*.py'

test-pyclient: deps test-deps
	@$(MAKE) --no-print-directory -j$(JOBS) $(DAEMON)
	$(PYCLIENT_TEST)

# Under the sanitizers the suites run one process each, $(JOBS) at a time
# (tests/run_suites.py): one after another they take most of CI's time.
# The same order as `make test`: the unit tests, then the end-to-end ones.
ASAN_SANITIZE := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
asan: deps test-deps
	@$(MAKE) --no-print-directory -j$(JOBS) BUILD=build/asan \
	  SANITIZE="$(ASAN_SANITIZE)" \
	  build/asan/check_all build/asan/collisiond build/asan/data/pairs-10000-11423.txt build/asan/check_cqc
	CQ_PAIRS_FILE=build/asan/data/pairs-10000-11423.txt ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  $(PYTHON) tests/run_suites.py build/asan/check_all tests/suites.h $(JOBS)
	ASAN_OPTIONS=detect_leaks=1 CQC_DAEMON=build/asan/collisiond build/asan/check_cqc
	ASAN_OPTIONS=detect_leaks=1 $(MAKE) --no-print-directory BUILD=build/asan SANITIZE="$(ASAN_SANITIZE)" fuzz-regress
	ASAN_OPTIONS=detect_leaks=1 $(PYTHON) tests/e2e/run.py build/asan/collisiond
	ASAN_OPTIONS=detect_leaks=1 $(PYTHON) tests/e2e/run.py build/asan/collisiond --encoding msgpack

# What a newcomer does: a clone of the committed tree alone, in an empty
# directory with no siblings, then the README's test and run commands
# (tests/newcomer/check.py). Uncommitted changes are not in the clone.
newcomer-check: test-deps
	$(PYTHON) tests/newcomer/check.py .

# Issue 25's soak (tests/hostile/soak.py): every hostile client of the issue
# at once for 60 s against a daemon with default settings (plus --token and a
# temporary --data-dir), while authorised clients over HTTP and the stream
# must each get their expected answer within 1 s; then a restart from the
# data directory. About 70 s. Its own target: it measures time, make test
# does not. Debian's python3 for msgpack.
hostile-soak: deps test-deps
	@$(MAKE) --no-print-directory -j$(JOBS) $(DAEMON)
	/usr/bin/python3 tests/hostile/soak.py $(DAEMON)

-include $(TEST_OBJ:.o=.d) $(CQC_CHECK_OBJ:.o=.d)
