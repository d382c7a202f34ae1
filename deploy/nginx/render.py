#!/usr/bin/env python3
"""Writes the router's nginx.conf for a list of shards, from router.conf.in.

    render.py --listen 0.0.0.0:7878 \\
        --shard collisiond-0:7878 --shard collisiond-1:7878 --shard collisiond-2:7878 \\
        --stream 7879=collisiond-0:7879 --stream 7880=collisiond-1:7879 --stream 7881=collisiond-2:7879 \\
        -o nginx.conf

--shard names the shards' HTTP listeners exactly as nginx should hash them
(the ring is computed from this text: keep names stable, and keep the order
when re-rendering). --stream LISTEN=UPSTREAM forwards one router port to one
shard's stream listener. --local keeps the pid file, logs and temporary
files under the prefix nginx runs with (nginx -p DIR), for an nginx started
by an unprivileged user; without it (containers) logs go to stdout/stderr,
the pid file to /tmp and temporary files to /var/cache/nginx, the only
paths a read-only root filesystem must leave writable.
--stream-module loads nginx's stream module from a file (Debian packages it
as libnginx-mod-stream; the nginx.org images have it built in).
"""
import argparse
import os
import re
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ring import Ring  # noqa: E402

TEMPLATE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "router.conf.in")
STREAM_SECTION = "\n# The stream transport"


def render(listen, shards, streams=(), local=False, stream_module=None):
    """The nginx.conf text. streams: (listen, upstream) pairs."""
    if not shards:
        raise ValueError("at least one --shard is needed")
    with open(TEMPLATE, encoding="utf-8") as f:
        text = f.read()
    main = []
    if stream_module and streams:
        main.append("load_module %s;" % stream_module)
    if local:
        main += ["pid nginx.pid;", "error_log error.log warn;"]
    else:
        # A container with a read-only root filesystem, run as a non-root
        # user: the pid file goes to /tmp and the temporary files to
        # /var/cache/nginx, both writable volumes (emptyDir or tmpfs).
        main += ["pid /tmp/nginx.pid;", "error_log stderr warn;"]
    http_main = []
    for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"):
        # The nginx.org image's own paths, given explicitly so the config
        # does not depend on how the nginx binary was built.
        path = "tmp/%s" % kind if local else "/var/cache/nginx/%s_temp" % kind.replace("client_body", "client")
        http_main.append("    %s_temp_path %s;" % (kind, path))
    fill = {
        "@MAIN@": "\n".join(main),
        "@HTTP_MAIN@": "\n".join(http_main),
        "@HTTP_LOG@": "    access_log %s collisiond;" % ("access.log" if local else "/dev/stdout"),
        "@WORLD_SERVERS@": "\n".join("        server %s max_fails=0;" % s for s in shards),
        "@ANY_SERVERS@": "\n".join("        server %s;" % s for s in shards),
        "@HTTP_LISTEN@": "        listen %s;" % listen,
        "@RING@": Ring(shards).id,
        "@STREAM_SERVERS@": "\n\n".join(
            "    server {\n        listen %s;\n        proxy_pass %s;\n    }" % (lst, up) for lst, up in streams),
    }
    if not streams:
        cut = text.index(STREAM_SECTION)
        text = text[:cut + 1]
    for key, value in fill.items():
        text = text.replace(key, value)
    left = re.findall(r"@[A-Z_]+@", text)
    if left:
        raise ValueError("router.conf.in has unfilled placeholders: %s" % ", ".join(sorted(set(left))))
    # A placeholder that expands to nothing leaves a blank line: drop runs.
    return re.sub(r"\n{3,}", "\n\n", text)


def _stream(spec):
    listen, sep, upstream = spec.partition("=")
    if not sep or not listen or not upstream:
        raise argparse.ArgumentTypeError("expected LISTEN=UPSTREAM, got %r" % spec)
    return listen, upstream


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--listen", default="0.0.0.0:7878", help="the router's HTTP listener")
    ap.add_argument("--shard", action="append", required=True, help="a shard's HTTP listener (repeat)")
    ap.add_argument("--stream", action="append", type=_stream, default=[],
                    help="LISTEN=UPSTREAM: a router port forwarded to a shard's stream listener (repeat)")
    ap.add_argument("--local", action="store_true", help="pid, logs and temporary files under the prefix")
    ap.add_argument("--stream-module", help="load the stream module from this file")
    ap.add_argument("-o", "--output", help="write here instead of standard output")
    args = ap.parse_args(argv)
    text = render(args.listen, args.shard, args.stream, args.local, args.stream_module)
    if args.output:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
