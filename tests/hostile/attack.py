"""What every attack is given, and how it records what it did. An attack
is a function of a Context, run in a process of its own at a low CPU
priority (so measuring the victims is not starved by the attacker's own
Python), until ctx.deadline; each step it takes is one sample: how long
the daemon took to answer it, and whether the answer broke what issue 25
says it must be (a "failure" of an attack row is such a breach, not a
refusal: a refusal is the daemon defending itself)."""

import threading
import time

import rawhttp
from record import Clock


class Context:
    """An attack's view of the soak: the daemon's ports, token and binary,
    the deadline, a work directory, and the process's Recorder."""

    def __init__(self, daemon, rec, deadline, workdir):
        self.http_port = daemon.http_port
        self.stream_port = daemon.stream_port
        self.token = daemon.token
        self.binary = daemon.binary
        self.rec = rec
        self.deadline = deadline
        self.workdir = workdir
        self.lock = threading.RLock()  # the SIGTERM handler may interrupt a holder
        self.in_flight = {}

    def running(self):
        return time.monotonic() < self.deadline

    def left(self):
        return max(0.0, self.deadline - time.monotonic())

    def auth(self):
        return [("Authorization", "Bearer " + self.token)]

    def begin(self, name):
        """Starts a step; the returned clock goes to end(). A step still
        waiting when the process is stopped is recorded as unanswered."""
        clock = Clock()
        with self.lock:
            self.in_flight[id(clock)] = (name, clock)
        return clock

    def end(self, name, clock, breach=None, detail=""):
        with self.lock:
            self.in_flight.pop(id(clock), None)
        self.rec.add("attack", name, clock.started, clock.latency(), breach, breach or detail)

    def flush_in_flight(self):
        with self.lock:
            left = list(self.in_flight.values())
            self.in_flight.clear()
        for name, clock in left:
            self.rec.add("attack", name, clock.started, clock.latency(), False, "unanswered at the end")

    def exchange(self, name, payload, timeout, check=None, **kw):
        """One raw exchange as a step; check(answer) returns a breach or None."""
        clock = self.begin(name)
        a = rawhttp.exchange(self.http_port, payload, min(timeout, self.left() + 1), **kw)
        breach = check(a) if check else None
        self.end(name, clock, breach, "status %s" % a.status if a.status is not None
                 else "no answer (%s)" % ("closed" if a.closed else "gave up"))
        return a

    def authorised(self, name, method, path, body=None, timeout=30, check=None, **kw):
        """An authorised request with a JSON body, as a step."""
        payload = rawhttp.request_bytes(method, path, body, self.auth())
        return self.exchange(name, payload, timeout, check, **kw)

    def until_answered(self, name, method, path, body=None, timeout=30, **kw):
        """authorised() again, a second apart, while the daemon sheds it
        (503) or does not answer: an attacker retries what it is not
        refused. The last answer (a 2xx or a 4xx unless time ran out)."""
        while True:
            a = self.authorised(name, method, path, body, timeout, **kw)
            if not self.running() or (a.status is not None and a.status < 500):
                return a
            self.pause(1)

    def threads(self, n, target, *args):
        """Runs target(i, *args) on n threads and waits for them."""
        ts = [threading.Thread(target=target, args=(i,) + args, daemon=True) for i in range(n)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()

    def pause(self, seconds):
        time.sleep(min(seconds, self.left()))
