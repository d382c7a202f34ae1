# The benchmarks (docs/PERFORMANCE.md): cq-bench in process beside its peers,
# over HTTP, the game tick over the wire, proto's decode, the C client.

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

$(BENCH_BIN): $(BENCH_OBJ) $(LIBCQ)
	$(CC) $(SANITIZE) -o $@ $(BENCH_OBJ) $(LIBCQ) $(LDLIBS)

$(TICK_BIN): $(TICK_OBJ) $(LIBCQ)
	$(CC) $(SANITIZE) -o $@ $(TICK_OBJ) $(LIBCQ) $(TICK_LIBS) $(LDLIBS)

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

.PHONY: bench
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

-include $(BENCH_OBJ:.o=.d) $(TICK_OBJ:.o=.d) $(BUILD)/bench/decode/main.d
