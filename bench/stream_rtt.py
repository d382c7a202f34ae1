#!/usr/bin/env python3
"""Stream round trips (docs/PERFORMANCE.md, "The stream on the shared
handler pool"): N sequential /v1/pair requests (one in flight), then N
pipelined, on one stream connection; prints requests a second for each.

    taskset -c 0 python3 bench/stream_rtt.py build/collisiond [N]

The daemon runs with --threads 1 pinned to CPU 1; alternate binaries and
compare ratios within one run."""
import json, os, socket, subprocess, sys, tempfile, time
BIN = sys.argv[1]; N = int(sys.argv[2]) if len(sys.argv) > 2 else 5000
d = tempfile.mkdtemp(); pf = os.path.join(d, "ports")
p = subprocess.Popen(["taskset", "-c", "1", BIN, "--listen", "127.0.0.1:0", "--stream-listen", "127.0.0.1:0",
                      "--port-file", pf, "--data-dir", "", "--threads", "1", "--access-log", "off"],
                     stderr=subprocess.DEVNULL)
while not os.path.exists(pf) or not open(pf).read().strip():
    time.sleep(0.02)
hp, sp = map(int, open(pf).read().split())
line = json.dumps({"id": 1, "method": "POST", "path": "/v1/pair", "body": {
    "a": {"shape": {"type": "sphere", "radius": 1}},
    "b": {"shape": {"type": "sphere", "radius": 1}, "pose": {"position": [1.5, 0, 0]}}}}).encode() + b"\n"
s = socket.create_connection(("127.0.0.1", sp)); f = s.makefile("rb")
for _ in range(200):
    s.sendall(line); f.readline()
t = time.perf_counter()
for _ in range(N):
    s.sendall(line); f.readline()
seq = N / (time.perf_counter() - t)
t = time.perf_counter()
s.sendall(line * N)
for _ in range(N):
    f.readline()
pipe = N / (time.perf_counter() - t)
print("%s sequential %.0f req/s pipelined %.0f req/s" % (BIN, seq, pipe))
s.close(); p.terminate(); p.wait()
