-- wrk script for `make bench-http`: POST /v1/pair with pair.lua's request
-- as a MessagePack body (run.sh writes it with `cq-tick json2mp` and names
-- the file in PAIR_MP_BODY), asking for a MessagePack answer.
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/msgpack"
wrk.headers["Accept"] = "application/msgpack"
local f = assert(io.open(os.getenv("PAIR_MP_BODY"), "rb"))
wrk.body = f:read("*a")
f:close()
