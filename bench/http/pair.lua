-- wrk script for `make bench-http`: POST /v1/pair with one box-box pair.
-- Two rotated boxes that overlap, so the answer is a typical one: a normal,
-- a depth, a four-point manifold and the SAT axis. run.sh sends this same
-- body once to learn the daemon's answer for nginx to serve, so keep the
-- wrk.body assignment on one line.
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = [[{"a":{"shape":{"type":"box","half_extents":[1,0.5,0.75]},"pose":{"position":[0,0,0],"rotation":[0,0,0,1]}},"b":{"shape":{"type":"box","half_extents":[0.6,0.4,0.6]},"pose":{"position":[0.3,0.85,0.1],"rotation":[0,0.2588190451025208,0,0.9659258262890683]}},"skin":0.01}]]
