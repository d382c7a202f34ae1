"""The shard of a world: the consistent-hash ring of the nginx router.

deploy/nginx/router.conf.in routes every request for a world with
`hash $collisiond_world consistent` over its `upstream` servers, each of
weight 1. nginx (ngx_http_upstream_hash_module, "chash") builds that ring
so: a server name written "HOST:PORT" is cut at its last colon ("unix:PATH"
is host PATH, no port); its base is CRC-32 of HOST, a NUL byte and PORT;
its 160 points are p1 = CRC-32(base bytes + 0 as 4 little-endian bytes)
and p(k+1) = CRC-32(base bytes + p(k) as 4 little-endian bytes), the CRC
continued from the base. The points are sorted (one kept per value), and
a key goes to the first point at or above CRC-32(key), wrapping past the
last. The stream port of the router forwards one port per shard, so a
stream client does the same computation to know which port to connect to.

Server names must be the text of the `upstream` block (--shard of
deploy/nginx/render.py): nginx hashes the text, not the address.
"""
import bisect
import hashlib
import struct
import zlib

POINTS = 160  # nginx: 160 points per unit of weight; the router gives each shard weight 1
_LE32 = struct.Struct("<I")


def split_server(name):
    """(host, port) of an upstream server name as nginx cuts it for hashing."""
    if name[:5].lower() == "unix:":
        return name[5:], ""
    cut = name.rfind(":")
    if cut < 0:
        return name, ""
    return name[:cut], name[cut + 1:]


def server_points(name):
    """The 160 ring points of one server name, in the order nginx makes them."""
    host, port = split_server(name)
    base = zlib.crc32(b"\0".join((host.encode("utf-8"), port.encode("utf-8"))))
    points, prev = [], 0
    for _ in range(POINTS):
        prev = zlib.crc32(_LE32.pack(prev), base)
        points.append(prev)
    return points


class ShardRing:
    """The ring of a list of shard names ("collisiond-0:7878", ...), as the
    router's `upstream collisiond_worlds` lists them; the order does not
    matter. owner(world) is the name of the shard holding world."""

    def __init__(self, shards):
        shards = list(shards)
        if not shards:
            raise ValueError("a ring needs at least one shard")
        if len(set(shards)) != len(shards):
            raise ValueError("a shard is listed twice: %r" % shards)
        self.shards = shards
        owner_of = {}
        for name in shards:
            for p in server_points(name):
                owner_of.setdefault(p, name)  # a collision keeps one point, as nginx does
        self._hashes = sorted(owner_of)
        self._owners = [owner_of[h] for h in self._hashes]

    @property
    def id(self):
        """The ring's short name, the router's X-Collisiond-Ring header: the
        first 12 hex digits of SHA-256 over the sorted names, one a line."""
        return hashlib.sha256("\n".join(sorted(self.shards)).encode("utf-8")).hexdigest()[:12]

    def owner(self, world):
        """The shard name that owns the world name world (a str)."""
        i = bisect.bisect_left(self._hashes, zlib.crc32(world.encode("utf-8")))
        return self._owners[i if i < len(self._owners) else 0]

    def index(self, world):
        """The position in shards of owner(world)."""
        return self.shards.index(self.owner(world))
