"""Item 3's HTTP answers held: many connections each ask for the export
of a world of 80,000 shapes (about 13 MB, more than a socket's send
buffer takes) and read nothing, with a small receive buffer so the
daemon holds what it answered. Without --max-http-reply-total, 150 of
them held 2.5 GiB until --timeout; with it, the answers held stay near
the total, and the authorised clients' small requests are served."""

import socket

import attack_memory

BIG_SHAPES = 80000
HTTP_CONNECTIONS = 150
HOLD_S = 20.0


def unread_http(i, ctx, request):
    """One connection asking for the export it never reads; closed after
    HOLD_S and opened again."""
    while ctx.running():
        clock = ctx.begin("3 http unread exports")
        s = socket.socket()
        try:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            s.settimeout(5)
            s.connect(("127.0.0.1", ctx.http_port))
            s.sendall(request)
        except OSError as e:
            ctx.end("3 http unread exports", clock, None, "%s" % e)
            s.close()
            ctx.pause(1)
            continue
        ctx.pause(HOLD_S)
        s.close()
        ctx.end("3 http unread exports", clock, None, "held")


def http_replies(ctx):
    a = ctx.until_answered("3 http world import", "PUT", "/v1/worlds/hbig",
                           attack_memory.spread_spheres(BIG_SHAPES, "h"), 60)
    if a.status not in (200, 201):
        # without its world the attack holds nothing: a setup the soak must see fail
        clock = ctx.begin("3 http world import")
        ctx.end("3 http world import", clock, "the world was not created (status %s)" % a.status)
        return
    request = ("GET /v1/worlds/hbig/export HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n\r\n"
               % ctx.token).encode()
    ctx.threads(HTTP_CONNECTIONS, unread_http, ctx, request)


ATTACKS = [("http-replies", http_replies)]
