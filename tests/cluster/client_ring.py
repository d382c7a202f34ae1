"""The Python client's shard choice (clients/python, collisiond_client)
against the real nginx router: the ring a stream client computes must be
the one nginx routes by, or its worlds end up on shards the router never
sends their HTTP requests to."""
import http.client
import os
import sys

from cluster import HOST, REPO

sys.path.insert(0, os.path.join(REPO, "clients", "python"))
from collisiond_client import ShardedClient, ShardRing  # noqa: E402

NAMES = 10000  # world names asked of the router: as many as the C ring is held to against ring.py


class _Router:
    """One keep-alive HTTP connection to the router, opened again when nginx closes it."""

    def __init__(self, port):
        self.port, self.conn = port, None

    def head_of(self, path):
        """(status, upstream, ring) of GET path."""
        for attempt in (0, 1):
            try:
                if self.conn is None:
                    self.conn = http.client.HTTPConnection(HOST, self.port, timeout=10)
                self.conn.request("GET", path)
                r = self.conn.getresponse()
                r.read()
                if r.getheader("connection", "").lower() == "close":
                    self.conn.close()
                    self.conn = None
                return r.status, r.getheader("x-collisiond-upstream"), r.getheader("x-collisiond-ring")
            except (http.client.HTTPException, OSError):
                self.conn = None
                if attempt:
                    raise

    def close(self):
        if self.conn is not None:
            self.conn.close()


def check_client_ring(router_port, shards, stream_ports, check, tag):
    """For NAMES world names that exist nowhere, the shard nginx sends their
    GET to (the X-Collisiond-Upstream of the shard's 404) is the client's
    ShardRing.owner, under the same ring id; then worlds created through the
    client's ShardedClient, on the router's stream ports, are found through
    the router's HTTP port on the shard the client chose. They are deleted
    again, so the scenario's own worlds are as they were."""
    names = [s.server for s in shards]
    ring = ShardRing(names)
    router = _Router(router_port)
    wrong, ring_ids = [], set()
    try:
        for i in range(NAMES):
            world = "ring-%s-%05d" % (tag, i)
            status, upstream, ring_id = router.head_of("/v1/worlds/%s" % world)
            ring_ids.add(ring_id)
            if status != 404 or upstream != ring.owner(world):
                wrong.append((world, status, upstream, ring.owner(world)))
        check(not wrong, "%d of %d names: nginx and the Python client's ring disagree, e.g. %s"
              % (len(wrong), NAMES, wrong[:3]))
        check(ring_ids == {ring.id}, "the router's ring %s, the client's %s" % (sorted(map(str, ring_ids)), ring.id))
        print("  the Python client's ring agrees with nginx on %d of %d names (%s)"
              % (NAMES - len(wrong), NAMES, tag))
        streams = ["%s:%d" % (HOST, p) for p in stream_ports[:len(shards)]]
        made = ["client-%s-%02d" % (tag, i) for i in range(12)]
        with ShardedClient(names, streams, encoding="json", timeout=10) as sc:
            for w in made:
                sc.client(w).create_world(w)
            for w in made:
                status, upstream, _ = router.head_of("/v1/worlds/%s" % w)
                check(status == 200 and upstream == sc.shard_of(w),
                      "%s, made on %s through the client, answered %d through the router from %s"
                      % (w, sc.shard_of(w), status, upstream))
            for w in made:
                sc.client(w).delete_world(w)
    finally:
        router.close()
