"""Attacks on memory. Item 2: worlds of "capacity" 65536 (about 20
bytes each, tens of MB of preallocation each) created one after another;
they are journaled, so the restart after the soak must hold them again.
Item 3's replies held: stream connections pipelining exports of a
13 MB world and never reading a byte. Item 10's cost: every shape of a world
rewritten again and again, so the journal passes the snapshot threshold (64 MiB
by default) and snapshots run while the others are served."""

import json
import socket

CAPACITY = 65536  # the default --max-world-capacity: the budget, not the cap, refuses them
CAPACITY_WORLDS = 400
BIG_SHAPES = 80000        # an export of about 13 MB
STREAM_CONNECTIONS = 40
PIPELINED = 8
HOLD_S = 20.0
JOURNAL_SHAPES = 40000    # a batch of about 3 MB
JOURNAL_EVERY = 1.0


def spread_spheres(n, prefix):
    """n unit spheres on a grid 3 apart: no two touch, so no pairs."""
    side = int(round(n ** (1 / 3))) + 1
    shapes = []
    for i in range(n):
        x, y, z = i % side, (i // side) % side, i // (side * side)
        shapes.append({"id": "%s%d" % (prefix, i), "shape": {"type": "sphere", "radius": 1},
                       "pose": {"position": [3.0 * x, 3.0 * y, 3.0 * z]}})
    return {"settings": {"capacity": 1024}, "shapes": shapes}


def capacity(ctx):
    """Item 2: every refusal is the daemon's right; none is a breach."""
    for i in range(CAPACITY_WORLDS):
        if not ctx.running():
            return
        ctx.authorised("2 capacity world", "PUT", "/v1/worlds/cap-%d" % i, {"capacity": CAPACITY}, timeout=20)


def unread_stream(i, ctx, frames):
    """One connection pipelining exports it never reads, with a small
    receive buffer so the daemon holds what it answered; closed after
    HOLD_S (so a daemon that cuts such clients off sooner and one that
    does not see the same load) and opened again."""
    while ctx.running():
        clock = ctx.begin("3 stream unread exports")
        s = socket.socket()
        try:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            s.settimeout(5)
            s.connect(("127.0.0.1", ctx.stream_port))
            s.sendall(frames)
        except OSError as e:
            ctx.end("3 stream unread exports", clock, None, "%s" % e)
            s.close()
            ctx.pause(1)
            continue
        ctx.pause(HOLD_S)
        s.close()
        ctx.end("3 stream unread exports", clock, None, "held")


def create(daemon, path, body):
    """A world an attack needs, made before any attack starts (a budget
    the capacity attack filled first would refuse it, and the attack
    would then do nothing): None, or why it was not made."""
    status, got = daemon.request("PUT", path, body, timeout=60)
    return None if status == 201 else "PUT %s: status %s %s" % (path, status, str(got)[:200])


def setup_stream_replies(daemon):
    return create(daemon, "/v1/worlds/sbig", spread_spheres(BIG_SHAPES, "s"))


def stream_replies(ctx):
    line = json.dumps({"id": 1, "method": "GET", "path": "/v1/worlds/sbig/export",
                       "headers": {"Authorization": "Bearer " + ctx.token}}).encode() + b"\n"
    ctx.threads(STREAM_CONNECTIONS, unread_stream, ctx, line * PIPELINED)


def setup_journal(daemon):
    return create(daemon, "/v1/worlds/jbig", spread_spheres(JOURNAL_SHAPES, "j"))


def refused(a):
    """A rewrite refused other than by shedding: the journal does not grow."""
    if a.status is not None and a.status != 200 and a.status != 503:
        return "the rewrite was refused (status %s): the attack does nothing" % a.status
    return None


def journal(ctx):
    """Item 10's cost: the journal grows by a rewrite of every shape a
    second. A batch that upserts the shapes the world holds takes no new
    shape slot, so the capacity attack's budget cannot refuse it."""
    body = json.dumps({"upsert": spread_spheres(JOURNAL_SHAPES, "j")["shapes"]}).encode()
    while ctx.running():
        ctx.authorised("10 journal rewrite", "POST", "/v1/worlds/jbig/batch", body, timeout=30, check=refused)
        ctx.pause(JOURNAL_EVERY)


ATTACKS = [("capacity", capacity), ("stream-replies", stream_replies), ("journal", journal)]
SETUPS = {"stream-replies": setup_stream_replies, "journal": setup_journal}
