"""Shard-aware access: one Client per shard, each world's calls sent to the
shard the router's ring (ring.ShardRing) gives it."""
from .client import Client
from .ring import ShardRing


def parse_address(text):
    """(host, port) of "HOST:PORT" or "[IPV6]:PORT"."""
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not host:
        raise ValueError("an address is HOST:PORT, not %r" % (text,))
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    return host, int(port)


class ShardedClient:
    """The shards of a cluster behind the nginx router of deploy/nginx.

    shards: the shard names exactly as the router's upstream block (render.py
    --shard) lists them, "collisiond-0:7878", ...: the ring hashes this text.
    streams: where to open each shard's stream, in the same order (or a dict
    by name): "HOST:PORT" or (host, port), the shard's own --stream-listen or
    the router port that forwards to it (render.py --stream LISTEN=...).
    Other keyword arguments go to every Client (token, encoding, timeout, ...).
    """

    def __init__(self, shards, streams, **client_options):
        self.ring = ShardRing(shards)
        if isinstance(streams, dict):
            streams = [streams[s] for s in self.ring.shards]
        streams = list(streams)
        if len(streams) != len(self.ring.shards):
            raise ValueError("%d shards but %d stream addresses" % (len(self.ring.shards), len(streams)))
        self._address = {s: (parse_address(a) if isinstance(a, str) else tuple(a))
                         for s, a in zip(self.ring.shards, streams)}
        self._options = client_options
        self._clients = {}

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def shard_of(self, world):
        """The shard name that holds world."""
        return self.ring.owner(world)

    def client(self, world):
        """The Client (one per shard, opened on first use) of world's shard:
        every call and pipeline for world goes through it."""
        shard = self.ring.owner(world)
        c = self._clients.get(shard)
        if c is None:
            host, port = self._address[shard]
            c = self._clients[shard] = Client(host, port, **self._options)
        return c

    def close(self):
        for c in self._clients.values():
            c.close()
        self._clients.clear()
