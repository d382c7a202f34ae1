#!/usr/bin/env python3
"""Which shard owns a world: nginx's `hash $collisiond_world consistent` ring.

The router (deploy/nginx/router.conf.in) sends every request for a world to
the upstream server nginx's consistent hash picks for the world's name. This
is the same computation in Python (nginx's ngx_http_upstream_hash_module,
Ketama-style: 160 points per server of weight 1, each point the CRC-32 of
"HOST\\0PORT" followed by the previous point; a key goes to the first point
at or after CRC-32(key), wrapping around). It lets an operator see, before
reloading the router, which worlds a new ring moves (`moves`), and a stream
client find the shard (and so the router's stream port) of a world (`owner`).

Server names must be written exactly as in the nginx `upstream` block
("collisiond-0:7878", not a resolved address): nginx hashes the text.

    ring.py owner --shard 127.0.0.1:7001 --shard 127.0.0.1:7002 arena lobby
    ring.py moves --old A:7878 --old B:7878 --new A:7878 --new B:7878 --new C:7878 w1 w2 …
"""
import argparse
import bisect
import hashlib
import sys
import zlib

POINTS_PER_SERVER = 160  # nginx: weight * 160; the router gives every shard weight 1


def _host_port(server):
    """Splits a server name the way nginx does before hashing it."""
    if server[:5].lower() == "unix:":
        return server[5:], ""
    head, sep, tail = server.rpartition(":")
    if sep and tail.isdigit():
        return head, tail
    if sep and tail == "":
        return head, ""
    return server, ""


class Ring:
    """The consistent-hash ring of a list of upstream server names."""

    def __init__(self, servers):
        if not servers:
            raise ValueError("a ring needs at least one server")
        self.servers = list(servers)
        points = []
        for server in self.servers:
            host, port = _host_port(server)
            base = zlib.crc32(host.encode() + b"\0" + port.encode())
            prev = 0
            for _ in range(POINTS_PER_SERVER):
                prev = zlib.crc32(prev.to_bytes(4, "little"), base)
                points.append((prev, server))
        points.sort(key=lambda p: p[0])
        # nginx keeps one point per hash value (a collision between two
        # servers is a 1-in-2^32 event per pair of points).
        self._points = [p for i, p in enumerate(points) if i == 0 or p[0] != points[i - 1][0]]
        self._hashes = [p[0] for p in self._points]

    @property
    def id(self):
        """A short name for this set of servers (the router's X-Collisiond-Ring
        header); like the ring itself, it does not depend on their order."""
        return hashlib.sha256("\n".join(sorted(self.servers)).encode()).hexdigest()[:12]

    def owner(self, world):
        """The server that owns world (a str)."""
        h = zlib.crc32(world.encode())
        i = bisect.bisect_left(self._hashes, h)
        return self._points[i % len(self._points)][1]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    o = sub.add_parser("owner", help="print WORLD SERVER for each world")
    o.add_argument("--shard", action="append", required=True, help="upstream server name, as in nginx.conf")
    o.add_argument("worlds", nargs="+")
    m = sub.add_parser("moves", help="print WORLD OLD NEW for each world the new ring places elsewhere")
    m.add_argument("--old", action="append", required=True, help="a server of the current ring")
    m.add_argument("--new", action="append", required=True, help="a server of the next ring")
    m.add_argument("worlds", nargs="+")
    args = ap.parse_args(argv)
    if args.cmd == "owner":
        ring = Ring(args.shard)
        for w in args.worlds:
            print(w, ring.owner(w))
    else:
        old, new = Ring(args.old), Ring(args.new)
        for w in args.worlds:
            if old.owner(w) != new.owner(w):
                print(w, old.owner(w), new.owner(w))
    return 0


if __name__ == "__main__":
    sys.exit(main())
