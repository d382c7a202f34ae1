"""A synchronous client of the stream transport (docs/API.md, section 11),
with pipelining.

One Client is one connection (opened on first use, reopened after a drop).
A call writes its request and reads its reply; a Pipeline queues calls and
sends them in one write, then reads their replies, which the daemon answers
in order. Not thread-safe: one Client per thread.

The reconnect rule. When the connection fails (closed, reset, timed out,
garbage from the server), the replies already read are kept and the
connection is closed. Each request whose reply was not read ends in
ConnectionLost, or OutcomeUnknown when it is a mutation (it may have been
applied): a mutation is never sent twice. With retry_reads (the default),
when the connection closed or reset (not on a timeout or garbage) and every
request left is a read, they are sent once more on a new connection. The
next call after a failure opens a new connection.
"""
import select
import socket
import time

from . import errors
from .api import Api
from .codec import codec_for


class Reply:
    """The answer to one queued call, filled when its pipeline runs: result()
    is the decoded body (None for a 204) or raises the call's error."""

    __slots__ = ("call", "status", "request_id", "headers", "_value", "_error")

    def __init__(self, call):
        self.call = call
        self.status = self.request_id = self.headers = self._value = self._error = None

    @property
    def done(self):
        return self.status is not None or self._error is not None

    @property
    def error(self):
        """The call's exception, or None."""
        return self._error

    def result(self):
        if self._error is not None:
            raise self._error
        if self.status is None:
            raise RuntimeError("%s %s has not run: execute() its pipeline" % (self.call.method, self.call.path))
        return self._value

    def _fill(self, envelope):
        self.status = status = envelope.get("status")
        self.request_id = envelope.get("request_id")
        self.headers = envelope.get("headers") or {}
        body = envelope.get("body")
        if not isinstance(status, int):
            self._error = errors.ProtocolError("a reply without an integer status: %r" % (envelope,))
        elif status >= 400:
            self._error = errors.problem_error(status, body, self.request_id, self.headers,
                                               self.call.method, self.call.path)
        else:
            self._value = body

    def _lose(self, reason, timed_out, cause):
        cls = errors.OutcomeUnknown if self.call.mutation else errors.ConnectionLost
        self._error = cls(self.call.method, self.call.path, reason, timed_out)
        self._error.__cause__ = cause


class _Failure(Exception):
    """Internal: the connection failed after `answered` replies were read."""

    def __init__(self, reason, cause, retryable, timed_out=False):
        super().__init__(reason)
        self.reason, self.cause, self.retryable, self.timed_out = reason, cause, retryable, timed_out


class Client(Api):
    """A connection to one collisiond stream listener.

    host, port: the stream listener (--stream-listen, default 127.0.0.1:7879),
    or a router's stream port forwarding to it. token: the bearer token, sent
    with every request. encoding: "auto" (MessagePack when python3-msgpack is
    installed, else JSON lines), "msgpack" or "json". timeout: seconds one
    call or one pipeline may take from its write to its last reply.
    connect_timeout: seconds to open the connection. retry_reads: see the
    module's reconnect rule. Every call returns the decoded answer body or
    raises an errors.CollisiondError.
    """

    def __init__(self, host="127.0.0.1", port=7879, token=None, encoding="auto", timeout=10.0,
                 connect_timeout=5.0, retry_reads=True):
        self.host, self.port = host, port
        self.timeout, self.connect_timeout, self.retry_reads = timeout, connect_timeout, retry_reads
        self.codec = codec_for(encoding)
        self.encoding = self.codec.name
        self._headers = {"Authorization": "Bearer " + token} if token else None
        self._sock = None
        self._buf = bytearray()
        self._next_id = 1
        self.reconnects = 0  # connections opened after the first one
        # Seconds spent encoding requests and decoding replies, and the
        # exchanges (calls or pipelines) run: the client's own share of a tick.
        self.timings = {"encode_s": 0.0, "decode_s": 0.0, "exchanges": 0}

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def connect(self):
        """Opens the connection now (calls open it when needed). ConnectError
        when it cannot be opened."""
        if self._sock is not None:
            return
        try:
            sock = socket.create_connection((self.host, self.port), timeout=self.connect_timeout)
        except OSError as e:
            raise errors.ConnectError("cannot connect to %s:%s: %s" % (self.host, self.port, e)) from e
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if self._next_id > 1:
            self.reconnects += 1
        self._sock, self._buf = sock, bytearray()
        self.codec.reset()

    def close(self):
        """Closes the connection; the next call opens a new one."""
        if self._sock is not None:
            try:
                self._sock.close()
            finally:
                self._sock = None
                self._buf = bytearray()

    @property
    def connected(self):
        return self._sock is not None

    def pipeline(self):
        """A Pipeline on this connection: queue calls, then execute() them in
        one write (or use it as a context manager, which executes on exit)."""
        return Pipeline(self)

    def _submit(self, call):
        reply = Reply(call)
        self.run([reply])
        return reply.result()

    # ---- the exchange ----------------------------------------------------

    def run(self, replies):
        """Sends the calls of replies (a list of Reply) in one write and fills
        each from its reply, in order, by the reconnect rule."""
        left, retried = replies, False
        while left:
            if self._sock is not None and self._closed_by_peer():
                self.close()  # an idle connection the daemon closed: nothing was lost
            try:
                self.connect()
            except errors.ConnectError as e:
                if not retried:
                    raise  # nothing was sent
                for r in left:  # reads sent once already: lost, not unknown
                    r._lose("no reply, and no new connection: %s" % e, False, e)
                return
            try:
                self._exchange(left)
                return
            except _Failure as f:
                self.close()
                left = [r for r in left if not r.done]
                if f.retryable and self.retry_reads and not retried and not any(r.call.mutation for r in left):
                    retried = True
                    continue
                for r in left:
                    r._lose(f.reason, f.timed_out, f.cause)
                return

    def _closed_by_peer(self):
        """Whether the daemon has closed this connection while it was idle
        (it closes quiet ones after 10 x its --timeout)."""
        try:
            readable, _, _ = select.select([self._sock], [], [], 0)
            return bool(readable) and self._sock.recv(1, socket.MSG_PEEK) == b""
        except OSError:
            return True

    def _exchange(self, replies):
        deadline = time.monotonic() + self.timeout
        first = self._next_id
        t0 = time.perf_counter()
        data = self._encode(replies, first)
        self.timings["encode_s"] += time.perf_counter() - t0
        self.timings["exchanges"] += 1
        self._next_id = first + len(replies)
        self._send(data, deadline)
        ready, k = [], 0
        while k < len(replies):
            if not ready:
                ready = self._receive(deadline)
                ready.reverse()
            env = ready.pop()
            # A refusal the daemon could not tie to its request (over
            # --max-buffered, an unreadable line) comes with id null, in
            # that request's place: it answers the request due.
            shed = env.get("id") is None and isinstance(env.get("status"), int) and env["status"] >= 400
            if env.get("id") != first + k and not shed:
                raise _Failure("protocol", errors.ProtocolError(
                    "reply id %r where %d was due" % (env.get("id"), first + k)), False)
            replies[k]._fill(env)
            k += 1
        if ready:
            raise _Failure("protocol", errors.ProtocolError("%d replies nobody asked for" % len(ready)), False)

    def _encode(self, replies, first):
        out, encode = [], self.codec.encode
        for k, r in enumerate(replies):
            c = r.call
            env = {"id": first + k, "method": c.method, "path": c.path}
            headers = self._headers
            if c.request_id is not None:
                headers = dict(headers or {}, **{"X-Request-Id": c.request_id})
            if headers:
                env["headers"] = headers
            if c.body is not None:
                env["body"] = c.body
            out.append(encode(env))
        return b"".join(out)

    def _send(self, data, deadline):
        sock = self._sock
        view = memoryview(data)
        try:
            while view:
                sock.settimeout(_left(deadline))
                view = view[sock.send(view):]
        except socket.timeout as e:
            raise _Failure("timed out writing the requests", e, False, True)
        except OSError as e:
            raise _Failure("the connection failed while writing: %s" % e, e, True)

    def _receive(self, deadline):
        """The next replies decoded (at least one)."""
        sock, buf = self._sock, self._buf
        while True:
            t0 = time.perf_counter()
            try:
                got = self.codec.decode(buf)
            except errors.ProtocolError as e:
                raise _Failure("protocol: %s" % e, e, False)
            finally:
                self.timings["decode_s"] += time.perf_counter() - t0
            if got:
                return got
            try:
                sock.settimeout(_left(deadline))
                chunk = sock.recv(1 << 20)
            except socket.timeout as e:
                raise _Failure("timed out after %g s" % self.timeout, e, False, True)
            except OSError as e:
                raise _Failure("the connection failed: %s" % e, e, True)
            if not chunk:
                cut = " inside a reply" if buf else ""
                raise _Failure("the server closed the connection" + cut, None, not buf)
            buf += chunk


def _left(deadline):
    """Seconds to the deadline, at least a little so a late call still
    reports a timeout rather than blocking."""
    return max(deadline - time.monotonic(), 1e-3)


class Pipeline(Api):
    """Calls queued on a Client: each returns a Reply; execute() sends them
    all in one write and reads their replies in order. The game tick is one
    pipeline: a move batch, then contacts and ray casts that see its moves."""

    def __init__(self, client):
        self.client = client
        self.replies = []

    def __len__(self):
        return len(self.replies)

    def __enter__(self):
        return self

    def __exit__(self, exc_type, *exc):
        if exc_type is None and self.replies:
            self.execute(raise_errors=False)

    def _submit(self, call):
        reply = Reply(call)
        self.replies.append(reply)
        return reply

    def execute(self, raise_errors=True):
        """Runs the queued calls and empties the queue. Returns their results
        in order; the first error is raised once every reply is in (the
        Replies keep each one), or with raise_errors=False it stands in the
        list in its call's place."""
        replies, self.replies = self.replies, []
        if not replies:
            return []
        self.client.run(replies)
        if raise_errors:
            for r in replies:
                if r.error is not None:
                    raise r.error
            return [r.result() for r in replies]
        return [r.error if r.error is not None else r.result() for r in replies]
