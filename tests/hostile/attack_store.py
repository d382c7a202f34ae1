"""Item 5: `collisiond replay` run by the operator, with the token, on a
record file an attacker wrote: a request id that smuggles a DELETE of a
world. The record must be refused by its line number (exit status 2)
and the world still be there. Item 9: worlds of attacker-chosen names
created and deleted, a few hundred a second, while /metrics is scraped: the
per-world series stay within --metrics-worlds (100 by default) plus the
one world="(other)"."""

import os
import re
import subprocess
import time

import rawhttp

WORLD = "replay-victim"
REPLAY_EVERY = 3.0
REPLAY_TIMEOUT = 20
METRICS_WORLDS = 100
SCRAPE_EVERY = 2.0
CHURN_PAUSE = 0.005


def record_line(token_world):
    rid = "x\\r\\nContent-Length: 0\\r\\n\\r\\nDELETE /v1/worlds/%s HTTP/1.1\\r\\nHost: a" % token_world
    return ('{"seq":1,"method":"GET","path":"/healthz","request_id":"%s","status":200,'
            '"response":{"status":"ok"}}\n' % rid)


def replay_once(ctx, path):
    clock = ctx.begin("5 replay injection")
    argv = [ctx.binary, "replay", path, "--against", "http://127.0.0.1:%d" % ctx.http_port, "--token", ctx.token]
    try:
        p = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=REPLAY_TIMEOUT)
        err = p.stderr.decode("utf-8", "replace")
        breach = None if p.returncode == 2 and ":1: not a record" in err else (
            "replay exited %d: %s" % (p.returncode, (p.stdout.decode() + err)[-200:]))
    except subprocess.TimeoutExpired:
        breach = "replay still running after %d s" % REPLAY_TIMEOUT
    a = ctx.authorised("5 replay injection", "GET", "/v1/worlds/" + WORLD, timeout=10)
    if breach is None and a.status == 404:
        breach = "the injected DELETE ran: the world is gone"
    ctx.end("5 replay injection", clock, breach)


def setup_replay(daemon):
    """The victim world, made before the capacity attack can fill the budget."""
    status, got = daemon.request("PUT", "/v1/worlds/" + WORLD, {})
    return None if status == 201 else "PUT %s: status %s %s" % (WORLD, status, str(got)[:200])


def replay(ctx):
    path = os.path.join(ctx.workdir, "hostile-record.jsonl")
    with open(path, "w") as f:
        f.write(record_line(WORLD))
    while ctx.running():
        replay_once(ctx, path)
        ctx.pause(REPLAY_EVERY)


WORLD_LABEL = re.compile(rb'world="((?:[^"\\]|\\.)*)"')


def scrape(ctx):
    clock = ctx.begin("9 churn /metrics scrape")
    a = rawhttp.exchange(ctx.http_port, rawhttp.request_bytes("GET", "/metrics", headers=ctx.auth()), 10,
                         cap=64 << 20)
    labels = set(WORLD_LABEL.findall(a.body)) if a.status == 200 else set()
    breach = None
    if len(labels) > METRICS_WORLDS + 1:
        breach = "%d world labels in /metrics (bound %d and (other))" % (len(labels), METRICS_WORLDS)
    ctx.end("9 churn /metrics scrape", clock, breach, "status %s, %d world labels" % (a.status, len(labels)))


def churn(ctx):
    i = 0
    next_scrape = time.monotonic()
    while ctx.running():
        name = "churn-%d-%s" % (i, os.urandom(4).hex())
        ctx.authorised("9 churn create+delete", "PUT", "/v1/worlds/" + name, {"shapes": [
            {"id": "s", "shape": {"type": "sphere", "radius": 1}}]}, timeout=10)
        ctx.authorised("9 churn create+delete", "DELETE", "/v1/worlds/" + name, timeout=10)
        i += 1
        ctx.pause(CHURN_PAUSE)
        if time.monotonic() >= next_scrape:
            scrape(ctx)
            next_scrape = time.monotonic() + SCRAPE_EVERY


ATTACKS = [("replay", replay), ("churn", churn)]
SETUPS = {"replay": setup_replay}
