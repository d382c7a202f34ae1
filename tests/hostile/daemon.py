"""The daemon under soak: the real binary with its default settings, but
for ephemeral loopback ports, a token and a temporary data directory,
under an address-space limit so an attack that wins cannot take the
shared machine's memory with it (a failed allocation is then the
daemon's to answer)."""

import http.client
import json
import os
import resource
import signal
import subprocess
import time

from harness import wait_for_ports

# RLIMIT_AS of the daemon: a ceiling for the machine's sake, far above
# what a default daemon needs for its clients.
MEMORY_LIMIT = 4 << 30


class Daemon:
    """One collisiond process; start() may be called again after stop()
    to restart it on the same data directory (new ports)."""

    def __init__(self, binary, workdir, token):
        self.binary = binary
        self.token = token
        self.data_dir = os.path.join(workdir, "data")
        self.port_file = os.path.join(workdir, "ports")
        self.log_path = os.path.join(workdir, "stderr.log")
        self.proc = None
        self.http_port = self.stream_port = None
        self.starts = 0

    def argv(self):
        return [self.binary, "--listen", "127.0.0.1:0", "--stream-listen", "127.0.0.1:0",
                "--port-file", self.port_file, "--data-dir", self.data_dir, "--token", self.token]

    def start(self):
        """Starts it and waits for the port file; the recovery of the data
        directory may still run (see wait_ready)."""
        if os.path.exists(self.port_file):
            os.unlink(self.port_file)
        self.starts += 1
        log = open(self.log_path, "ab")
        log.write(b"--- start %d\n" % self.starts)
        log.flush()
        self.proc = subprocess.Popen(self.argv(), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=log, preexec_fn=_limit_memory)
        log.close()
        self.http_port, self.stream_port = wait_for_ports(self.proc, self.port_file, self.log_tail)
        return self

    def wait_ready(self, timeout):
        """Seconds until /readyz answered 200, or None after timeout."""
        t0 = time.monotonic()
        while time.monotonic() - t0 < timeout:
            if self.proc.poll() is not None:
                return None
            try:
                if self.request("GET", "/readyz", timeout=1)[0] == 200:
                    return time.monotonic() - t0
            except OSError:
                pass
            time.sleep(0.05)
        return None

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def stop(self, timeout):
        """SIGTERM and wait; (exit status, seconds taken), or, past timeout,
        SIGKILL and (None, timeout)."""
        if not self.alive():
            return (self.proc.returncode if self.proc else None), 0.0
        t0 = time.monotonic()
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=timeout), time.monotonic() - t0
        except subprocess.TimeoutExpired:
            self.kill()
            return None, timeout

    def kill(self):
        if self.alive():
            self.proc.kill()
            self.proc.wait()

    def auth(self):
        return {"Authorization": "Bearer " + self.token}

    def request(self, method, path, body=None, timeout=10.0, source=None):
        """One authorised request on a fresh connection (from the address
        source, if given): (status, decoded JSON or raw bytes)."""
        conn = http.client.HTTPConnection("127.0.0.1", self.http_port, timeout=timeout, source_address=source)
        try:
            data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
            headers = dict(self.auth(), **({"Content-Type": "application/json"} if data is not None else {}))
            conn.request(method, path, body=data, headers=headers)
            r = conn.getresponse()
            raw = r.read()
            try:
                return r.status, json.loads(raw) if raw else None
            except ValueError:
                return r.status, raw
        finally:
            conn.close()

    def log_tail(self, n=1500):
        try:
            with open(self.log_path, "rb") as f:
                text = f.read().decode("utf-8", "replace")
        except OSError:
            return "(no log)"
        return text[-n:]

    def rss_mib(self):
        """Resident memory of the daemon now, MiB (0 when it is gone)."""
        try:
            with open("/proc/%d/status" % self.proc.pid) as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1]) / 1024.0
        except (OSError, AttributeError):
            pass
        return 0.0


def _limit_memory():
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
