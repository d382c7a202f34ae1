"""Item 1: squatting on the buffer budget. Connections declare the
largest body there is (16 MiB, --max-body's default) on a PUT, send one
byte of it, then a byte every few seconds: about 3 KB sent across 33
connections for all of --max-buffered's 512 MiB. Some carry no token
(nothing may be reserved, and no 100 Continue sent, before the token is
checked), some carry it (an authorised client too must pay for what it
holds: bytes charged as they arrive, or a minimum body rate)."""

import socket

import rawhttp

DECLARED = 16 << 20
CONNECTIONS = 33
TRICKLE_EVERY = 2.0
RECONNECT_PAUSE = 0.5


def head(ctx, authorised, expect=False):
    headers = [("Content-Type", "application/json"), ("Content-Length", str(DECLARED))]
    if authorised:
        headers += ctx.auth()
    if expect:
        headers.append(("Expect", "100-continue"))
    lines = ["PUT /v1/worlds/squat HTTP/1.1", "Host: x"] + ["%s: %s" % kv for kv in headers]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def hold(ctx, name, payload, expect):
    """One squatting connection: the head (and a first byte unless it
    waits for 100 Continue), then a byte every TRICKLE_EVERY s until the
    daemon answers or closes. The step lasts as long as the daemon lets
    the reservation stand; its breach is a 100 Continue to a request that
    carries no token."""
    clock = ctx.begin(name)
    breach, status = None, None
    try:
        s = socket.create_connection(("127.0.0.1", ctx.http_port), timeout=TRICKLE_EVERY)
    except OSError as e:
        ctx.end(name, clock, None, "connect: %s" % e)
        return
    try:
        s.sendall(payload if expect else payload + b"{")
        data = b""
        while ctx.running():
            try:
                b = s.recv(4096)
            except socket.timeout:
                b = None
            if b == b"":
                break
            if b:
                data += b
                got = rawhttp.head_of(data)
                if got and got[0] == 100:
                    if "unauth" in name:
                        breach = "100 Continue sent to a request without a token"
                    data = got[2]
                    continue
                if got:
                    status = got[0]
                    break
            s.sendall(b" ")
    except OSError:
        pass
    finally:
        s.close()
    ctx.end(name, clock, breach, "status %s" % status)


def squatter(i, ctx, name, authorised):
    expect = i % 8 == 0
    payload = head(ctx, authorised, expect)
    while ctx.running():
        hold(ctx, name + (" expect" if expect else ""), payload, expect)
        ctx.pause(RECONNECT_PAUSE)


def squat_unauthorised(ctx):
    ctx.threads(CONNECTIONS, squatter, ctx, "1 squat unauth", False)


def squat_authorised(ctx):
    ctx.threads(CONNECTIONS, squatter, ctx, "1 squat auth", True)


ATTACKS = [("squat-unauth", squat_unauthorised), ("squat-auth", squat_authorised)]
