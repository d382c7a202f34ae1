"""The client's shard ring against two others: deploy/nginx/ring.py (the
deploy tooling's model of nginx's ring, written apart from the client) on
10,000 names and several shard lists, and a brute force over the points
that reads nginx's rule literally. The cluster test (tests/cluster) checks
the client against the real nginx router."""
import os
import sys
import unittest
import zlib

from support import REPO
from collisiond_client import ShardRing, ShardedClient, parse_address

sys.path.insert(0, os.path.join(REPO, "deploy", "nginx"))
sys.dont_write_bytecode = True
import ring as deploy_ring  # noqa: E402

NAMES = ["w%05d" % i for i in range(5000)] + ["arena-%d:lobby.%x" % (i, i * 7919) for i in range(5000)]
SHARD_LISTS = [
    ["127.0.0.1:7001", "127.0.0.1:7002", "127.0.0.1:7003"],
    ["collisiond-0:7878", "collisiond-1:7878", "collisiond-2:7878", "collisiond-3:7878"],
    ["collisiond-shard-%d.collisiond.default.svc:7878" % i for i in range(7)],
    ["[::1]:7878", "unix:/run/collisiond.sock", "solo"],
    ["only:1"],
]


def brute_owner(shards, world):
    """nginx's rule read literally: every server's 160 points, each the CRC-32
    of "HOST\\0PORT" and the previous point's 4 little-endian bytes; the
    key's point is the smallest one at or above CRC-32(key), else the
    smallest of all."""
    points = []
    for s in shards:
        if s.lower().startswith("unix:"):
            host, port = s[5:], ""
        elif ":" in s:
            host, port = s[:s.rindex(":")], s[s.rindex(":") + 1:]
        else:
            host, port = s, ""
        prev = 0
        for _ in range(160):
            prev = zlib.crc32(host.encode() + b"\x00" + port.encode() + prev.to_bytes(4, "little"))
            points.append((prev, s))
    key = zlib.crc32(world.encode())
    above = [p for p in points if p[0] >= key]
    return min(above or points)[1]


class Ring(unittest.TestCase):
    def test_agrees_with_the_deploy_ring(self):
        for shards in SHARD_LISTS:
            mine, theirs = ShardRing(shards), deploy_ring.Ring(shards)
            differ = [n for n in NAMES if mine.owner(n) != theirs.owner(n)]
            self.assertEqual(differ, [], shards)
            self.assertEqual(mine.id, theirs.id)

    def test_agrees_with_the_brute_force(self):
        for shards in SHARD_LISTS[:3]:
            ring = ShardRing(shards)
            for n in NAMES[::50] + NAMES[1::97]:
                self.assertEqual(ring.owner(n), brute_owner(shards, n), (shards, n))

    def test_every_shard_gets_a_share(self):
        shards = SHARD_LISTS[1]
        ring = ShardRing(shards)
        counts = {s: 0 for s in shards}
        for n in NAMES:
            counts[ring.owner(n)] += 1
        # 160 points each: no shard near empty or holding most of the names.
        for s, k in counts.items():
            self.assertTrue(len(NAMES) / 8 < k < len(NAMES) / 2, counts)

    def test_order_does_not_matter(self):
        a, b = ShardRing(SHARD_LISTS[1]), ShardRing(list(reversed(SHARD_LISTS[1])))
        self.assertTrue(all(a.owner(n) == b.owner(n) for n in NAMES[:2000]))
        self.assertEqual(a.id, b.id)

    def test_a_new_shard_takes_only_from_the_others(self):
        three, four = ShardRing(SHARD_LISTS[1][:3]), ShardRing(SHARD_LISTS[1])
        for n in NAMES:
            if three.owner(n) != four.owner(n):
                self.assertEqual(four.owner(n), SHARD_LISTS[1][3])

    def test_bad_lists(self):
        for bad in ([], ["a:1", "a:1"]):
            with self.assertRaises(ValueError):
                ShardRing(bad)


class Sharded(unittest.TestCase):
    def test_picks_the_owners_address(self):
        shards = SHARD_LISTS[0]
        streams = ["127.0.0.1:%d" % (8001 + i) for i in range(3)]
        sc = ShardedClient(shards, streams, encoding="json")
        ring = deploy_ring.Ring(shards)
        for n in NAMES[:300]:
            c = sc.client(n)
            self.assertEqual((c.host, c.port), ("127.0.0.1", 8001 + shards.index(ring.owner(n))))
            self.assertFalse(c.connected)  # opened on first use
        self.assertEqual(len({id(sc.client(n)) for n in NAMES[:300]}), 3)  # one client per shard
        by_name = ShardedClient(shards, dict(zip(shards, streams)))
        self.assertEqual(by_name.client("arena").port, sc.client("arena").port)
        with self.assertRaises(ValueError):
            ShardedClient(shards, streams[:2])

    def test_addresses(self):
        self.assertEqual(parse_address("collisiond-0:7879"), ("collisiond-0", 7879))
        self.assertEqual(parse_address("[::1]:7879"), ("::1", 7879))
        for bad in ("nohost", ":7879", "h:port"):
            with self.assertRaises(ValueError):
                parse_address(bad)
