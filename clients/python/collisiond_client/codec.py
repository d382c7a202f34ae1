"""The stream's two encodings (docs/API.md, section 11): MessagePack frames
and JSON lines. Each codec turns a request envelope into bytes and cuts the
replies out of the bytes received, in order, without knowing anything of
the API above it.

MessagePack is Debian's python3-msgpack (or any `msgpack` on the path); the
module works without it, on JSON lines only.
"""
import json
import struct

try:
    import msgpack
except ImportError:  # the stdlib-only fallback: JSON lines
    msgpack = None

from .errors import ProtocolError

FRAME_MARK = 0xCE
_PREFIX = struct.Struct(">BI")
# A reply the client refuses to hold: a frame longer than this is taken as
# garbage (the daemon's own --max-body defaults to 16 MiB, and a raycast or
# contacts answer stays within a few times a request's size).
MAX_REPLY = 1 << 30


def have_msgpack():
    """Whether MessagePack frames are available (python3-msgpack imported)."""
    return msgpack is not None


class MsgpackCodec:
    """Length-prefixed frames: 0xce, N as 4 bytes big-endian, an envelope map."""

    name = "msgpack"

    def __init__(self):
        if msgpack is None:
            raise RuntimeError("MessagePack needs python3-msgpack (apt-get install python3-msgpack)")
        self._packer = msgpack.Packer(use_bin_type=True, use_single_float=False)

    def reset(self):
        """Nothing to forget: a frame's prefix says where it ends."""

    def encode(self, envelope):
        """The frame (bytes) of one request envelope (a dict)."""
        payload = self._packer.pack(envelope)
        return _PREFIX.pack(FRAME_MARK, len(payload)) + payload

    def decode(self, buf):
        """The whole replies at the start of buf (a bytearray), which loses
        their bytes; a reply cut short stays in buf for the next read."""
        out, at, end = [], 0, len(buf)
        while end - at >= 5:
            mark, n = _PREFIX.unpack_from(buf, at)
            if mark != FRAME_MARK or n == 0 or n > MAX_REPLY:
                raise ProtocolError("not a reply frame at byte %d: %s" % (at, bytes(buf[at:at + 5]).hex()))
            if end - at - 5 < n:
                break
            out.append(self._unpack(bytes(buf[at + 5:at + 5 + n])))
            at += 5 + n
        del buf[:at]
        return out

    @staticmethod
    def _unpack(payload):
        try:
            value = msgpack.unpackb(payload, raw=False, strict_map_key=False)
        except Exception as e:  # msgpack's errors are not all ValueErrors
            raise ProtocolError("a reply frame is not MessagePack: %s: %s" % (type(e).__name__, e)) from None
        if not isinstance(value, dict):
            raise ProtocolError("a reply frame holds a %s, not an envelope map" % type(value).__name__)
        return value


class JsonCodec:
    """Newline-delimited JSON: one request object a line, one reply a line."""

    name = "json"

    def __init__(self):
        self._dumps = json.JSONEncoder(separators=(",", ":"), allow_nan=False, ensure_ascii=False).encode
        self._scanned = 0  # bytes of buf already searched for a newline: a long line is searched once

    def reset(self):
        """Forget the scan of the last buffer (a new connection starts one)."""
        self._scanned = 0

    def encode(self, envelope):
        try:
            return self._dumps(envelope).encode("utf-8") + b"\n"
        except ValueError as e:  # NaN or infinity: JSON cannot write them
            raise ValueError("a request value JSON cannot carry: %s" % e) from None

    def decode(self, buf):
        out, at = [], 0
        while True:
            nl = buf.find(b"\n", max(at, self._scanned))
            if nl < 0:
                break
            line = bytes(buf[at:nl])
            at = nl + 1
            if line.strip():
                out.append(self._parse(line))
        if len(buf) - at > MAX_REPLY:
            raise ProtocolError("a reply line longer than %d bytes" % MAX_REPLY)
        del buf[:at]
        self._scanned = len(buf)
        return out

    @staticmethod
    def _parse(line):
        try:
            value = json.loads(line.decode("utf-8"))
        except ValueError as e:
            raise ProtocolError("a reply line is not JSON: %s: %r" % (e, line[:80])) from None
        if not isinstance(value, dict):
            raise ProtocolError("a reply line holds a %s, not an object" % type(value).__name__)
        return value


def codec_for(encoding):
    """The codec of "msgpack", "json" or "auto" (MessagePack when available)."""
    if encoding == "auto":
        encoding = "msgpack" if msgpack is not None else "json"
    if encoding == "msgpack":
        return MsgpackCodec()
    if encoding == "json":
        return JsonCodec()
    raise ValueError("encoding must be 'auto', 'msgpack' or 'json', not %r" % (encoding,))
