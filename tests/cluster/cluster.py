"""The cluster test's processes: collisiond shards and an nginx router, all on
loopback, all under one temporary directory, all stopped by Cluster.close()."""
import http.client
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "deploy", "nginx"))
import render  # noqa: E402
from ring import Ring  # noqa: E402,F401  (re-exported for run.py)

HOST = "127.0.0.1"


def free_ports(n):
    """n distinct loopback ports that were free a moment ago. Picked up front
    (not port 0) so a shard restarts on the port the router already knows."""
    socks = []
    try:
        for _ in range(n):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind((HOST, 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


class Response:
    def __init__(self, status, headers, body):
        self.status, self.headers, self.body = status, headers, body

    def json(self):
        return json.loads(self.body)


def request(port, method, path, body=None, timeout=10):
    """One request on a fresh connection; body: bytes, or a value sent as JSON."""
    if body is not None and not isinstance(body, bytes):
        body = json.dumps(body).encode()
    conn = http.client.HTTPConnection(HOST, port, timeout=timeout)
    try:
        conn.request(method, path, body=body, headers={"Content-Type": "application/json"})
        resp = conn.getresponse()
        return Response(resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read())
    finally:
        conn.close()


def stream_request(port, line, timeout=10):
    """One JSON-lines request over a new stream connection; the reply object."""
    with socket.create_connection((HOST, port), timeout=timeout) as s:
        s.sendall(json.dumps(line).encode() + b"\n")
        return json.loads(s.makefile("rb").readline())


def tail(path, lines=15):
    try:
        with open(path, "rb") as f:
            return b"".join(f.readlines()[-lines:]).decode(errors="replace")
    except OSError as e:
        return "(%s)" % e


def wait_until(what, ok, timeout=10.0, proc=None, log=None):
    """Polls ok() until it is true; fails after timeout or when proc exits."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            if ok():
                return
        except OSError:
            pass
        if proc is not None and proc.poll() is not None:
            raise RuntimeError("%s: the process exited with status %s\n%s" % (what, proc.returncode, tail(log)))
        if time.monotonic() > deadline:
            raise RuntimeError("%s: not within %.0f s\n%s" % (what, timeout, tail(log) if log else ""))
        time.sleep(0.02)


class Shard:
    """One collisiond with its own data directory, on fixed ports."""

    def __init__(self, daemon, root, index, http_port, stream_port):
        self.daemon, self.index = daemon, index
        self.http_port, self.stream_port = http_port, stream_port
        self.dir = os.path.join(root, "shard-%d" % index)
        self.data = os.path.join(self.dir, "data")
        self.log = os.path.join(self.dir, "collisiond.log")
        os.makedirs(self.dir)
        self.proc = None

    @property
    def server(self):
        """The name the router hashes (and connects to)."""
        return "%s:%d" % (HOST, self.http_port)

    def start(self):
        argv = [self.daemon, "--listen", self.server, "--stream-listen", "%s:%d" % (HOST, self.stream_port),
                "--data-dir", self.data, "--threads", "2"]
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log)
        wait_until("shard %d ready" % self.index, lambda: self.get("/readyz").status == 200,
                   proc=self.proc, log=self.log)

    def kill9(self):
        self.proc.kill()
        self.proc.wait()

    def stop(self):
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def get(self, path):
        return request(self.http_port, "GET", path)

    def worlds(self):
        r = self.get("/v1/worlds")
        if r.status != 200:
            raise RuntimeError("shard %d: GET /v1/worlds answered %d" % (self.index, r.status))
        return {w["name"] for w in r.json()["worlds"]}


def stream_module():
    """The stream module's file when this nginx loads it dynamically (Debian:
    libnginx-mod-stream), None when it is built in."""
    out = subprocess.run(["nginx", "-V"], capture_output=True, text=True, check=True).stderr
    if re.search(r"--with-stream(\s|$)", out):
        return None
    if "--with-stream=dynamic" not in out:
        raise RuntimeError("this nginx has no stream module")
    m = re.search(r"--modules-path=(\S+)", out)
    path = os.path.join(m.group(1) if m else "/usr/lib/nginx/modules", "ngx_stream_module.so")
    if not os.path.exists(path):
        raise RuntimeError("%s is missing: install libnginx-mod-stream (make deps)" % path)
    return path


class Router:
    """nginx as the current user, with a private prefix under the test's
    directory, running the config render.py makes for the shards."""

    def __init__(self, root, http_port):
        self.http_port = http_port
        self.prefix = os.path.join(root, "router")
        self.conf = os.path.join(self.prefix, "nginx.conf")
        self.errors = os.path.join(self.prefix, "error.log")
        os.makedirs(os.path.join(self.prefix, "tmp"))
        self.module = stream_module()
        self.proc = None
        self.ring = None

    def configure(self, shards, stream_ports):
        """Writes the config for shards (stream port i forwards to shard i)
        and checks it with nginx -t."""
        streams = [("%s:%d" % (HOST, p), "%s:%d" % (HOST, s.stream_port)) for p, s in zip(stream_ports, shards)]
        text = render.render("%s:%d" % (HOST, self.http_port), [s.server for s in shards], streams,
                             local=True, stream_module=self.module)
        with open(self.conf, "w") as f:
            f.write(text)
        self.ring = Ring([s.server for s in shards])
        subprocess.run(self._argv("-t", "-q"), check=True, stdout=subprocess.DEVNULL)

    def _argv(self, *extra):
        return ["nginx", "-p", self.prefix, "-c", self.conf, "-e", self.errors, *extra]

    def start(self):
        with open(os.path.join(self.prefix, "nginx.out"), "ab") as out:
            self.proc = subprocess.Popen(self._argv("-g", "daemon off;"), stdin=subprocess.DEVNULL,
                                         stdout=out, stderr=out)
        self._wait_ring()

    def reload(self):
        """SIGHUP: new workers with the new config; waits until they answer."""
        self.proc.send_signal(signal.SIGHUP)
        self._wait_ring()

    def _wait_ring(self):
        def serves_ring():
            # Several fresh connections in a row: old workers may still
            # accept a few while they shut down.
            return all(self.get("/healthz").headers.get("x-collisiond-ring") == self.ring.id for _ in range(5))
        wait_until("router on ring %s" % self.ring.id, serves_ring, proc=self.proc, log=self.errors)

    def stop(self):
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.terminate()  # nginx: fast shutdown
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def get(self, path):
        return request(self.http_port, "GET", path)

    def call(self, method, path, body=None):
        return request(self.http_port, method, path, body)


class Cluster:
    """Owns the temporary directory and every process; close() ends them all."""

    def __init__(self, daemon):
        self.daemon = os.path.abspath(daemon)
        self.root = tempfile.mkdtemp(prefix="collisiond-cluster-")
        # nginx started by root runs its workers as nobody: they must reach
        # their temporary files under the prefix.
        os.chmod(self.root, 0o755)
        self.shards = []
        self.router = None

    def add_shard(self, http_port, stream_port):
        s = Shard(self.daemon, self.root, len(self.shards), http_port, stream_port)
        self.shards.append(s)
        s.start()
        return s

    def add_router(self, http_port):
        self.router = Router(self.root, http_port)
        return self.router

    def logs(self):
        """The tail of every log, for a failure report."""
        parts = ["--- shard %d (%s)\n%s" % (s.index, s.log, tail(s.log)) for s in self.shards]
        if self.router:
            parts.append("--- router (%s)\n%s" % (self.router.errors, tail(self.router.errors)))
        return "\n".join(parts)

    def close(self):
        for s in self.shards:
            s.stop()
        if self.router:
            self.router.stop()
        shutil.rmtree(self.root, ignore_errors=True)
