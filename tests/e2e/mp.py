"""python3-msgpack (Debian's, `make test-deps`) as the tests' MessagePack
encoder and decoder: an implementation independent of the daemon's. The
tests may run under another interpreter than Debian's (a pyenv build that
does not see /usr/lib/python3/dist-packages); msgpack is then taken from
there, appended last so nothing the interpreter has is shadowed."""

import sys

try:
    import msgpack
except ImportError:
    sys.path.append("/usr/lib/python3/dist-packages")
    try:
        import msgpack
    except ImportError as e:
        raise ImportError("the e2e tests need python3-msgpack: apt-get install python3-msgpack (make test-deps)") from e

MEDIA = "application/msgpack"


def packb(value):
    """value in MessagePack, floats as float64 as the daemon writes them."""
    return msgpack.packb(value, use_bin_type=True)


def unpackb(data):
    """Exactly one MessagePack value; strings must be UTF-8."""
    return msgpack.unpackb(data, raw=False, strict_map_key=True)


def request(d, method, path, value=None, accept=True, headers=None):
    """A request whose body (when value is not None) is MessagePack, asking
    for a MessagePack answer when accept."""
    h = dict(headers or {})
    data = None
    if value is not None:
        data = packb(value)
        h["Content-Type"] = MEDIA
    if accept:
        h["Accept"] = MEDIA
    return d.request(method, path, data=data, headers=h)
