"""What the client's tests run against: the real collisiond on ephemeral
loopback ports, a proxy that can lose replies, and fake servers that stall
or send garbage.

The daemon is $CQ_DAEMON (default build/collisiond in the repository). The
tests' own MessagePack (to build and read frames apart from the client) is
python3-msgpack; an interpreter that does not see Debian's packages (a
pyenv build) takes it from /usr/lib/python3/dist-packages, as the e2e
tests do, so both encodings are tested whichever python3 runs them.
"""
import json
import os
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.dirname(HERE))  # clients/python: the package under test

try:
    import msgpack
except ImportError:
    sys.path.append("/usr/lib/python3/dist-packages")
    try:
        import msgpack
    except ImportError:
        msgpack = None

import collisiond_client  # noqa: E402  (after the path is set)

DAEMON = os.environ.get("CQ_DAEMON", os.path.join(REPO, "build", "collisiond"))
ENCODINGS = ("json", "msgpack")


class Daemon:
    """collisiond with --data-dir '' on ports it picks; stop() checks its exit."""

    def __init__(self, *flags):
        self.tmp = tempfile.TemporaryDirectory(prefix="pyclient-")
        ports = os.path.join(self.tmp.name, "ports")
        self.log = open(os.path.join(self.tmp.name, "stderr.log"), "wb")
        argv = [DAEMON, "--listen", "127.0.0.1:0", "--stream-listen", "127.0.0.1:0", "--port-file", ports,
                "--data-dir", "", "--threads", "2"] + list(flags)
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self.log)
        deadline, text = time.monotonic() + 15, ""
        while not text.endswith("\n"):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("collisiond did not start: %s" % self.log_text())
            try:
                with open(ports) as f:
                    text = f.read()
            except FileNotFoundError:
                time.sleep(0.01)
        self.http_port, self.port = (int(x) for x in text.split())

    def log_text(self):
        with open(self.log.name, "rb") as f:
            return f.read()[-2000:].decode(errors="replace")

    def client(self, encoding, **kw):
        return collisiond_client.Client("127.0.0.1", self.port, encoding=encoding, **kw)

    def stop(self):
        """SIGTERM; the exit status (0 is a clean shutdown)."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        self.tmp.cleanup()
        return self.proc.returncode


def per_encoding(module_globals, *mixins):
    """Defines, for each mixin Case and each encoding, the TestCase class
    CaseJson / CaseMsgpack with ENCODING set (MessagePack skipped when no
    msgpack can be imported)."""
    for mixin in mixins:
        for enc in ENCODINGS:
            name = "%s%s" % (mixin.__name__, enc.capitalize())
            cls = type(name, (mixin, unittest.TestCase), {"ENCODING": enc, "__module__": module_globals["__name__"]})
            if enc == "msgpack" and msgpack is None:
                cls = unittest.skip("python3-msgpack is not installed")(cls)
            module_globals[name] = cls


# ---- stand-ins for the daemon ----------------------------------------------

def free_port():
    """A loopback port nothing listens on (bound, then closed)."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class FakeServer:
    """A listener whose every connection is handed to handler(conn) on a
    thread of its own; the connections are closed by close()."""

    def __init__(self, handler):
        self.handler = handler
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.conns, self.accepted = [], 0
        self._stop = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while not self._stop:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.accepted += 1
            self.conns.append(conn)
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn):
        try:
            self.handler(conn)
        except OSError:
            pass

    def close(self):
        self._stop = True
        self.sock.close()
        for c in self.conns:
            try:
                c.close()
            except OSError:
                pass


def read_requests(conn, encoding, buf):
    """The next requests off a fake server's connection, decoded with the
    tests' own codecs (not the client's); [] at end of input."""
    while True:
        out = []
        if encoding == "msgpack":
            while len(buf) >= 5 and buf[0] == 0xCE:
                n = struct.unpack(">I", bytes(buf[1:5]))[0]
                if len(buf) < 5 + n:
                    break
                out.append(msgpack.unpackb(bytes(buf[5:5 + n]), raw=False))
                del buf[:5 + n]
        else:
            while b"\n" in buf:
                line, _, rest = bytes(buf).partition(b"\n")
                buf[:] = rest
                out.append(json.loads(line))
        if out:
            return out
        chunk = conn.recv(65536)
        if not chunk:
            return []
        buf += chunk


def encode_reply(reply, encoding):
    """One reply in encoding, by the tests' own codecs."""
    if encoding == "msgpack":
        payload = msgpack.packb(reply, use_bin_type=True)
        return b"\xce" + struct.pack(">I", len(payload)) + payload
    return json.dumps(reply).encode() + b"\n"


class Proxy:
    """A TCP proxy in front of the daemon's stream port that counts the
    bytes each way and can lose replies: with drop set (a count of
    connections to treat so), the first reply bytes that come back on a
    connection are thrown away and both sides closed, so the request was
    run but its answer never reaches the client."""

    def __init__(self, upstream_port):
        self.upstream_port = upstream_port
        self.drop = 0
        self.sent = bytearray()  # every byte the client sent, all connections
        self.lock = threading.Lock()
        self.server = FakeServer(self._serve)
        self.port = self.server.port

    def _serve(self, conn):
        up = socket.create_connection(("127.0.0.1", self.upstream_port))
        self.server.conns.append(up)
        threading.Thread(target=self._upward, args=(conn, up), daemon=True).start()
        while True:
            data = up.recv(65536)
            if not data:
                break
            with self.lock:
                dropping = self.drop > 0
                if dropping:
                    self.drop -= 1
            if dropping:
                break
            conn.sendall(data)
        for s in (conn, up):
            _shut(s)

    def _upward(self, conn, up):
        try:
            while True:
                data = conn.recv(65536)
                if not data:
                    break
                with self.lock:
                    self.sent += data
                up.sendall(data)
        except OSError:
            pass
        _shut(up)

    def close(self):
        self.server.close()


def _shut(s):
    try:
        s.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    s.close()
