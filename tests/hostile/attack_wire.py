"""The cheap wire attacks, items 4, 7, 8, 11 and 12, sent over and over
on fresh connections while everything else runs: what the daemon answers
them is pinned by the issue and docs/API.md, so any other answer is a
breach. Smuggling (item 4) hides a DELETE of a world behind a request
two parties could frame differently: it must be answered 400 at once,
the connection closed, and the world still be there."""

import json
import socket

import rawhttp

WORLD = "smuggle-victim"
ROUND_PAUSE = 0.2
ANSWER_BOUND = 5.0
PAIR = {"a": {"shape": {"type": "sphere", "radius": 1}},
        "b": {"shape": {"type": "sphere", "radius": 1}, "pose": {"position": [3, 0, 0]}}}
BIG_ID = "18446744073709551616"
# An answer shed under load is the daemon defending itself, never a breach.
SHED = 503


def chunked(data):
    return b"%x\r\n%s\r\n0\r\n\r\n" % (len(data), data)


def smuggling_cases(token):
    body = json.dumps(PAIR).encode()
    hidden = ("DELETE /v1/worlds/%s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n\r\n"
              % (WORLD, token)).encode()

    def head(*lines):
        return ("POST /v1/pair HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\n"
                "%s\r\n" % (token, "".join(l + "\r\n" for l in lines))).encode()

    n = len(body)
    return {
        "CL and TE": head("Content-Length: %d" % len(chunked(body)), "Transfer-Encoding: chunked")
        + chunked(body) + hidden,
        "two CL": head("Content-Length: %d" % n, "Content-Length: %d" % (n + len(hidden))) + body + hidden,
        "TE space colon": head("Transfer-Encoding : chunked") + chunked(body) + hidden,
        "TE gzip": head("Transfer-Encoding: gzip") + body,
        "TE chunked, chunked": head("Transfer-Encoding: chunked, chunked") + chunked(body) + hidden,
    }


def refused_and_closed(case):
    def check(a):
        if a.status == SHED:
            return None
        if a.status != 400 or not a.closed:
            return "%s: status %s, closed %s after %.1f s (want 400 and a close at once)" % (
                case, a.status, a.closed, a.elapsed)
        return None
    return check


def status_is(case, want):
    def check(a):
        return None if a.status in (want, SHED) else "%s: status %s, want %s" % (case, a.status, want)
    return check


def smuggling(ctx, cases):
    for case, payload in cases.items():
        ctx.exchange("4 smuggling", payload, ANSWER_BOUND, refused_and_closed(case), wait_close=True)
    ctx.authorised("4 smuggling", "GET", "/v1/worlds/" + WORLD, timeout=ANSWER_BOUND,
                   check=lambda a: "the hidden DELETE ran: the world is gone" if a.status == 404 else None)


def paths(ctx):
    for path in ("/v1/worlds/w%00x", "/v1/worlds/%s%%2fshapes%%2fa" % WORLD):
        ctx.exchange("7 NUL or slash in a segment", rawhttp.request_bytes("GET", path, headers=ctx.auth()),
                     ANSWER_BOUND, status_is(path, 400))


def versions_and_queries(ctx):
    ctx.exchange("8 HEAD, HTTP/1.9, long query", rawhttp.request_bytes("HEAD", "/healthz"), ANSWER_BOUND,
                 status_is("HEAD /healthz", 200), head_only=True)
    ctx.exchange("8 HEAD, HTTP/1.9, long query", rawhttp.request_bytes("GET", "/healthz", version="HTTP/1.9"),
                 ANSWER_BOUND, status_is("HTTP/1.9 (served as 1.1, docs/API.md)", 200))
    query = "&".join("a" for _ in range(3000))
    ctx.exchange("8 HEAD, HTTP/1.9, long query",
                 rawhttp.request_bytes("GET", "/v1/worlds?" + query, headers=ctx.auth() + [("Connection", "close")]),
                 ANSWER_BOUND, status_is("3000 parameters", 200))


def tokens(ctx):
    bearer = "Bearer " + ctx.token
    ctx.exchange("11 token blanks, two Authorization",
                 rawhttp.request_bytes("GET", "/v1/worlds", headers=[("Authorization", bearer + " ")]),
                 ANSWER_BOUND, status_is("a trailing blank", 200))
    ctx.exchange("11 token blanks, two Authorization",
                 rawhttp.request_bytes("GET", "/v1/worlds", headers=[("Authorization", bearer),
                                                                     ("Authorization", "Bearer wrong")]),
                 ANSWER_BOUND, status_is("two Authorization headers", 400))


def stream_id(ctx):
    clock = ctx.begin("12 stream id past 64 bits")
    line = ('{"id":%s,"method":"POST","path":"/v1/pair","headers":{"Authorization":"Bearer %s"},"body":%s}\n'
            % (BIG_ID, ctx.token, json.dumps(PAIR))).encode()
    want = ('{"id":%s,"status":200,' % BIG_ID).encode()
    got = b""
    try:
        with socket.create_connection(("127.0.0.1", ctx.stream_port), timeout=ANSWER_BOUND) as s:
            s.sendall(line)
            while b"\n" not in got:
                b = s.recv(65536)
                if not b:
                    break
                got += b
    except OSError as e:
        got = str(e).encode()
    breach = None if got.startswith(want) or b'"status":503' in got[:80] else (
        "reply %r, want it to start %r" % (got[:120], want))
    ctx.end("12 stream id past 64 bits", clock, breach)


def wire(ctx):
    ctx.until_answered("4 smuggling", "PUT", "/v1/worlds/" + WORLD, {}, ANSWER_BOUND)
    cases = smuggling_cases(ctx.token)
    while ctx.running():
        smuggling(ctx, cases)
        paths(ctx)
        versions_and_queries(ctx)
        tokens(ctx)
        stream_id(ctx)
        ctx.pause(ROUND_PAUSE)


ATTACKS = [("wire", wire)]
