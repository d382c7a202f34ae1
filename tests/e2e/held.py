"""Requests held in flight deterministically (docs/API.md "Load
shedding"): a raycast whose answer the client does not read, so the daemon
cannot finish sending it and the request keeps its admission slot until
the client closes. Used wherever a test needs --max-inflight full."""

import socket

import harness
from harness import encode_body

# Flags a daemon needs for held answers: MHD must not close an idle held
# connection (and free its slot) while the test works, and the raycast may
# pass the default ray and body limits.
FLAGS = ("--timeout", "60", "--max-rays", "10000000", "--max-body", "1G")

FLOOR = {"shape": {"type": "box", "half_extents": [1000, 1, 1000]}, "pose": {"position": [0, 0, 0]}}


def send_buffer_max():
    """The most a TCP socket's send buffer grows to on this host
    (tcp_wmem's third field): what the kernel may take of an unread answer."""
    try:
        with open("/proc/sys/net/ipv4/tcp_wmem") as f:
            return int(f.read().split()[2])
    except (OSError, IndexError, ValueError):
        return 16 << 20


def post(path, body):
    """The bytes of an HTTP request POSTing body to path in the run's
    encoding, asking for the answer in it."""
    data = encode_body(body)
    media = harness.MEDIA_TYPES[harness.ENCODING].encode()
    return (b"POST %s HTTP/1.1\r\nHost: t\r\nContent-Type: %s\r\nAccept: %s\r\n"
            b"Content-Length: %d\r\n\r\n" % (path.encode(), media, media, len(data))) + data


def hold_answers(case, n):
    """n requests in flight on case's daemon (a world "big" with a floor
    is made for them). Each answer (about 60 bytes a ray) is twice what the
    daemon's send buffer may grow to, whatever the host's TCP settings, and
    the client's receive buffer is 4 KiB. Returns the sockets once every
    answer has begun, so each holds its slot from then on; the caller
    closes them."""
    case.ok("PUT", "/v1/worlds/big", {}, status=201)
    case.ok("PUT", "/v1/worlds/big/shapes/floor", FLOOR, status=201)
    count = max(100000, 2 * send_buffer_max() // 60)
    rays = [{"origin": [i * 0.01, 10, 0], "direction": [0, -1, 0]} for i in range(count)]
    request = post("/v1/worlds/big/raycast", {"rays": rays})
    held = []
    try:
        for _ in range(n):
            s = socket.socket()
            held.append(s)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            s.settimeout(60)
            s.connect(("127.0.0.1", case.daemon.http_port))
            s.sendall(request)
        for s in held:
            case.assertEqual(s.recv(12, socket.MSG_PEEK), b"HTTP/1.1 200", "a held raycast")
    except BaseException:
        for s in held:
            s.close()
        raise
    return held
