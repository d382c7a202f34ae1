#!/usr/bin/env python3
"""Moves every world to the shard the router's ring gives it.

Run it right after the router was reloaded with a new list of shards
(docs/DEPLOY.md, "Adding or removing a shard"):

    rebalance.py --router http://127.0.0.1:7878 \\
        --shard collisiond-0:7878 --shard collisiond-1:7878 --shard collisiond-2:7878 --shard collisiond-3:7878

--shard names every shard exactly as the router's nginx.conf does (the ring
hashes that text) and must be reachable from here as http://NAME. For each
world found on a shard the ring does not give it to, the tool

  1. exports it from the shard that holds it  (GET  /v1/worlds/{w}/export),
  2. imports it through the router            (PUT  /v1/worlds/{w}),
  3. checks the new shard's export is the same document, read directly,
  4. deletes it from the old shard            (DELETE /v1/worlds/{w}).

It refuses to start when the router answers for another set of shards (its
X-Collisiond-Ring header differs: reload the router first) or when a world
is held by two shards (resolve that by hand). --dry-run prints the plan.
Exit status 0 when every misplaced world was moved, 1 otherwise.
"""
import argparse
import http.client
import json
import os
import sys
import urllib.parse

sys.dont_write_bytecode = True  # leave no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "nginx"))
from ring import Ring  # noqa: E402


class Client:
    """HTTP/1.1 requests to one base URL, one connection at a time."""

    def __init__(self, base, token=None, timeout=60):
        url = urllib.parse.urlsplit(base if "://" in base else "http://" + base)
        if url.scheme != "http":
            raise ValueError("only http:// is supported: %s" % base)
        self.host, self.port = url.hostname, url.port or 80
        self.token, self.timeout = token, timeout

    def request(self, method, path, body=None):
        """(status, headers with lower-case names, body bytes)."""
        headers = {"Content-Type": "application/json"}
        if self.token:
            headers["Authorization"] = "Bearer " + self.token
        conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
        try:
            conn.request(method, path, body=body, headers=headers)
            resp = conn.getresponse()
            return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
        finally:
            conn.close()


def world_path(world, suffix=""):
    """World names are [A-Za-z0-9._:-] (docs/API.md): nothing to escape."""
    return "/v1/worlds/" + world + suffix


def plan(shards, ring, token=None):
    """[(world, holder, owner)] for misplaced worlds, and [(world, holders)]
    for worlds held by more than one shard."""
    held = {}
    for shard in shards:
        status, _, body = Client(shard, token).request("GET", "/v1/worlds")
        if status != 200:
            raise RuntimeError("GET http://%s/v1/worlds: status %d" % (shard, status))
        for w in json.loads(body)["worlds"]:
            held.setdefault(w["name"], []).append(shard)
    moves, twice = [], []
    for world in sorted(held):
        if len(held[world]) > 1:
            twice.append((world, held[world]))
        elif held[world][0] != ring.owner(world):
            moves.append((world, held[world][0], ring.owner(world)))
    return moves, twice


def move(world, holder, owner, router, token=None, out=sys.stdout):
    """Moves one world; True when it is on owner and gone from holder."""
    old, new = Client(holder, token), Client(owner, token)
    status, _, doc = old.request("GET", world_path(world, "/export"))
    if status != 200:
        print("%s: export from %s failed: status %d" % (world, holder, status), file=out)
        return False
    status, _, body = router.request("PUT", world_path(world), doc)
    if status not in (200, 201):
        print("%s: import through the router failed: status %d %s" % (world, status, body[:200]), file=out)
        return False
    status, _, copy = new.request("GET", world_path(world, "/export"))
    if status != 200 or json.loads(copy) != json.loads(doc):
        print("%s: %s does not hold the same document after the import (status %d); %s keeps it"
              % (world, owner, status, holder), file=out)
        return False
    status, _, _ = old.request("DELETE", world_path(world))
    if status != 204:
        print("%s: copied to %s but DELETE on %s answered %d: delete it there by hand"
              % (world, owner, holder, status), file=out)
        return False
    print("moved %s %s -> %s (%d shapes)" % (world, holder, owner, len(json.loads(doc)["shapes"])), file=out)
    return True


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--router", required=True, help="the router's base URL (http://HOST:PORT)")
    ap.add_argument("--shard", action="append", required=True, help="a shard, as named in nginx.conf (repeat)")
    ap.add_argument("--token", default=os.environ.get("COLLISIOND_TOKEN"), help="bearer token ($COLLISIOND_TOKEN)")
    ap.add_argument("--dry-run", action="store_true", help="print the moves, change nothing")
    args = ap.parse_args(argv)
    ring = Ring(args.shard)
    try:
        moves, twice = plan(args.shard, ring, args.token)
    except (OSError, RuntimeError) as e:
        print("cannot list the shards' worlds: %s" % e)
        return 1
    for world, holders in twice:
        print("%s is held by %s: resolve by hand" % (world, ", ".join(holders)))
    if args.dry_run:
        for world, holder, owner in moves:
            print("would move %s %s -> %s" % (world, holder, owner))
        return 0 if not twice else 1
    if twice:
        return 1
    router = Client(args.router, args.token)
    status, headers, _ = router.request("GET", "/healthz")
    if headers.get("x-collisiond-ring") != ring.id:
        print("the router serves ring %s, these shards make ring %s (status %d): reload it first"
              % (headers.get("x-collisiond-ring"), ring.id, status))
        return 1
    done = 0
    for world, holder, owner in moves:
        try:
            done += move(world, holder, owner, router, args.token)
        except OSError as e:  # nothing is deleted before the copy checked out
            print("%s: %s; %s still holds it" % (world, e, holder))
    print("moved %d of %d misplaced worlds" % (done, len(moves)))
    return 0 if done == len(moves) else 1


if __name__ == "__main__":
    sys.exit(main())
