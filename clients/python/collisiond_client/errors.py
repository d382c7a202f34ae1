"""One exception hierarchy for everything a call can end in other than its
answer.

    CollisiondError
    ├── ProblemError            the daemon answered an error (status >= 400)
    │   ├── BadRequest          400 (malformed-*, wrong-type, unknown-field, missing-field, invalid-value)
    │   ├── Unauthorized        401
    │   ├── NotFound            404 (not-found, no-route)
    │   ├── MethodNotAllowed    405 (.allow)
    │   ├── PayloadTooLarge     413
    │   ├── OverLimit           422
    │   ├── InternalError       500
    │   └── Unavailable         503 (.retry_after, None when retrying cannot help)
    └── TransportError          no answer was read
        ├── ConnectError        the connection could not be made: nothing was sent
        ├── ProtocolError       the server's bytes are not replies (the cause of a ConnectionLost)
        └── ConnectionLost      the request was sent (or may have been) and its reply is lost
            └── OutcomeUnknown  ... and it was a mutation: it may or may not have been applied

A ProblemError carries the problem's members (docs/API.md, section 8):
status, type (the URN), slug (its last part: branch on it), title, detail,
pointer (the RFC 6901 path of the field at fault, or None) and request_id.
"""

PROBLEM_PREFIX = "urn:collisiond:problem:"


class CollisiondError(Exception):
    """Base of every error this client raises."""


class ProblemError(CollisiondError):
    """The daemon answered with an error status and a problem body."""

    def __init__(self, status, problem, request_id=None, headers=None, method=None, path=None):
        problem = problem if isinstance(problem, dict) else {"detail": problem}
        self.status = status
        self.problem = problem
        self.type = problem.get("type")
        self.slug = self.type[len(PROBLEM_PREFIX):] if isinstance(self.type, str) and \
            self.type.startswith(PROBLEM_PREFIX) else None
        self.title = problem.get("title")
        self.detail = problem.get("detail")
        self.pointer = problem.get("pointer")
        self.request_id = request_id
        self.headers = dict(headers or {})
        self.method, self.path = method, path
        where = " at %s" % self.pointer if self.pointer is not None else ""
        super().__init__("%s %s: %d %s%s: %s" % (method, path, status, self.slug or self.title, where, self.detail))


class BadRequest(ProblemError):
    """400: the request is malformed or holds a value out of its domain."""


class Unauthorized(ProblemError):
    """401: the token is missing or wrong."""


class NotFound(ProblemError):
    """404: no such world or shape (slug not-found), or no such endpoint (no-route)."""


class MethodNotAllowed(ProblemError):
    """405: .allow lists the methods the path takes."""

    @property
    def allow(self):
        return self.headers.get("Allow")


class PayloadTooLarge(ProblemError):
    """413: over --max-body or --max-request-memory."""


class OverLimit(ProblemError):
    """422: a well-formed request over a per-request limit."""


class InternalError(ProblemError):
    """500: a bug in the daemon; report it with .request_id."""


class Unavailable(ProblemError):
    """503: not ready, draining, shedding load, out of memory, or (problem
    type urn:collisiond:problem:timeout) a query stopped at the server's
    --request-timeout: ask for less. Nothing changed; .retry_after is the
    seconds to wait (None: retrying cannot help)."""

    @property
    def retry_after(self):
        value = self.headers.get("Retry-After")
        try:
            return float(value) if value is not None else None
        except ValueError:
            return None


_BY_STATUS = {400: BadRequest, 401: Unauthorized, 404: NotFound, 405: MethodNotAllowed,
              413: PayloadTooLarge, 422: OverLimit, 500: InternalError, 503: Unavailable}


def problem_error(status, body, request_id=None, headers=None, method=None, path=None):
    """The ProblemError subclass for status (ProblemError itself for a status
    the table lacks), built from the reply's body."""
    cls = _BY_STATUS.get(status, ProblemError)
    return cls(status, body, request_id, headers, method, path)


class TransportError(CollisiondError):
    """No answer could be read for the request."""


class ConnectError(TransportError):
    """The connection could not be opened (refused, unreachable, timed out):
    nothing was sent, so the request can be sent again as it is."""


class ProtocolError(TransportError):
    """The server sent bytes that are not replies in order: a frame without
    its mark, a line that is not JSON, a reply for another request. The
    connection is closed; the requests it carried end in ConnectionLost."""


class ConnectionLost(TransportError):
    """The request went out (or may have) and its reply was not read: the
    connection closed, failed, timed out (.timed_out) or carried garbage
    (.__cause__ is the ProtocolError). A read (a query, a GET) changes
    nothing and may be sent again."""

    def __init__(self, method, path, reason, timed_out=False):
        self.method, self.path, self.reason, self.timed_out = method, path, reason, timed_out
        super().__init__("%s %s: no reply (%s)" % (method, path, reason))


class OutcomeUnknown(ConnectionLost):
    """A mutation (PUT, DELETE, a batch) whose reply was lost: the daemon may
    or may not have applied it. The client never resends it; read the world
    back (get_world, get_shape, export) before deciding to."""
