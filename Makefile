# collisiond build. `make help` lists the targets. The common variables,
# the default goal and help are here; the rules are in mk/, one file per
# concern: build.mk (libraries, daemon, clients, generated sources), test.mk,
# fuzz.mk, bench.mk, deploy.mk and inspector.mk.

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
# The client and its users see its public header alone, none of the daemon's.
CQC_CFLAGS = -std=c11 -D_POSIX_C_SOURCE=200809L -fvisibility=hidden $(WARN) $(CFLAGS) $(SANITIZE) -Iclients/c/include
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

# Named here, before the includes define its prerequisites (below).
.DEFAULT_GOAL := all

# In this order: each file's := variables and prerequisites expand as it is
# read, so a file names only what the ones before it define.
include mk/build.mk mk/test.mk mk/fuzz.mk mk/bench.mk mk/deploy.mk mk/inspector.mk

.PHONY: all deps test-deps help

all: $(LIBCQ) $(LIBCQP) $(DAEMON) $(BENCH_BIN) $(GEN_BIN) $(LIBCQC)

help:
	@echo "make            build $(LIBCQ), $(LIBCQP), $(DAEMON), $(BENCH_BIN) and $(GEN_BIN)"
	@echo "make deps       install the Debian packages building and running need (only the missing ones)"
	@echo "make test       build, run every Check suite and fuzz-regress, then the end-to-end tests against the daemon"
	@echo "make test-scalar the box suites (sat, box_box, box_clip) on a -DCQ_NO_SIMD build in $(BUILD)/scalar (part of test)"
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
