"""collisiond_client: a Python client of collisiond's stream transport.

    from collisiond_client import Client, geometry as g
    with Client("127.0.0.1", 7879, token=None) as c:
        c.create_world("arena", skin=0.01)
        c.put_shape("arena", "crate", g.box(0.5, 0.5, 0.5), g.pose((0, 0.5, 0)))
        with c.pipeline() as p:
            moved = p.move("arena", ["crate"], [(0.1, 0.5, 0)])
            hits = p.contacts("arena", dt=1 / 60)
        print(hits.result()["pairs"])

MessagePack frames when python3-msgpack is importable, JSON lines
otherwise (Client(encoding=...) chooses). docs/CLIENTS.md (its Python section) is the
guide: the calls, pipelining, errors, the reconnect rule and sharding.
"""
from . import errors, geometry
from .api import Call, is_mutation, moves, segment
from .client import Client, Pipeline, Reply
from .codec import have_msgpack
from .errors import (BadRequest, CollisiondError, ConnectError, ConnectionLost, InternalError,
                     MethodNotAllowed, NotFound, OutcomeUnknown, OverLimit, PayloadTooLarge,
                     ProblemError, ProtocolError, TransportError, Unauthorized, Unavailable)
from .ring import ShardRing
from .shards import ShardedClient, parse_address

__version__ = "0.1.0"

__all__ = ["Client", "Pipeline", "Reply", "ShardRing", "ShardedClient", "Call", "moves", "segment",
           "is_mutation", "parse_address", "have_msgpack", "errors", "geometry",
           "CollisiondError", "ProblemError", "BadRequest", "Unauthorized", "NotFound", "MethodNotAllowed",
           "PayloadTooLarge", "OverLimit", "InternalError", "Unavailable", "TransportError",
           "ConnectError", "ProtocolError", "ConnectionLost", "OutcomeUnknown"]
