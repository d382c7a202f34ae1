#!/usr/bin/env python3
"""Checks the layer boundaries the build promises (docs/ARCHITECTURE.md).

    python3 tests/boundaries.py BUILD_DIR

Reads the repository's C sources and the archives in BUILD_DIR and fails
(exit 1) when:
  include   a file includes a header its layer may not see: another
            layer's private header (core/src/, proto/src/, server/,
            clients/c/src/), or a public header above or beside its own
            layer (core sees no proto; the clients see the wire only);
  library   a layer includes a library it must not use (core: no jansson,
            msgpuck, libuv or libmicrohttpd; proto: no libuv or
            libmicrohttpd);
  prefix    an archive defines an external symbol without its library's
            prefix;
  public    a symbol of libcq (libcqp) with the public prefix cq_ (cqp_)
            that no CQ_API (CQP_API) declaration of core/include
            (proto/include) names, or that the build did not give default
            visibility;
  internal  an internal symbol (cq__, cqp__) with default visibility, or a
            CQ_API / CQP_API marker outside its public headers.
Every violation is one line naming the file or symbol and the rule.
Exits 0 when there is none, 2 on bad usage."""

import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The layers, by path (the longest prefix wins).
LAYERS = {
    "core/": "core",
    "proto/": "proto",
    "server/": "server",
    "clients/": "clients",
    "examples/": "examples",
    "tests/": "tests",
    "bench/": "bench",
}

# Header folders: who may include a header there. tests/ and bench/ test and
# measure the layers' internals, so they may see core's and proto's own.
HEADERS = [
    ("core/src/", "core's private headers", {"core", "tests", "bench"}),
    ("core/include/", "core's public headers", {"core", "proto", "server", "tests", "bench"}),
    ("proto/src/", "proto's private headers", {"proto", "tests"}),
    ("proto/include/", "proto's public headers", {"proto", "server", "tests", "bench"}),
    ("server/", "the server's own headers", {"server", "tests"}),
    ("clients/c/src/", "the C client's private headers", {"clients"}),
    ("clients/c/include/", "the C client's public header", {"clients", "examples", "tests", "bench"}),
    ("tests/", "the tests' headers", {"tests"}),
    ("bench/gen/", "the input generator's headers", {"bench", "tests"}),
    ("bench/", "the benchmarks' headers", {"bench"}),
]

# Where a quoted include is looked for after the includer's own folder: the
# union of the build's -I flags and the private folders, so a header is
# found wherever any layer could reach it, by a flag or by a stray one.
INCLUDE_DIRS = ["core/include", "proto/include", "clients/c/include", "server", "tests", "bench/gen",
                "core/src", "proto/src", "clients/c/src"]

# System headers a layer must not include (DESIGN.md, "Layers").
FORBIDDEN_LIBS = {
    "core": {"jansson.h", "msgpuck.h", "uv.h", "microhttpd.h"},
    "proto": {"uv.h", "microhttpd.h"},
}

# archive, prefix, and for the libraries with a marked public API: the
# folder of its public headers and the marker.
ARCHIVES = [
    ("libcq.a", "cq_", "core/include", "CQ_API"),
    ("libcqp.a", "cqp_", "proto/include", "CQP_API"),
    ("libcqd.a", "cqd_", None, None),
    # `collisiond replay` is a server subsystem in an archive of its own
    # only so that libcqd's users need not link it: the server's prefix.
    ("libcqr.a", "cqd_", None, None),
    ("libcqc.a", "cqc_", None, None),
]

SKIP_DIRS = {".git", "build", "node_modules"}
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^">]+)[">]', re.M)


def owner(path, table):
    """The value of the longest prefix of path in table (a dict), or None."""
    keys = [k for k in table if path.startswith(k)]
    return table[max(keys, key=len)] if keys else None


def header_rule(header):
    """(folder, what, allowed layers) for a header path, or None."""
    rules = [r for r in HEADERS if header.startswith(r[0])]
    return max(rules, key=lambda r: len(r[0])) if rules else None


def sources(root):
    """Every .c and .h file under root, as paths relative to it."""
    for d, dirs, files in os.walk(root):
        dirs[:] = sorted(x for x in dirs if x not in SKIP_DIRS)
        for f in sorted(files):
            if f.endswith((".c", ".h")):
                yield os.path.relpath(os.path.join(d, f), root)


def resolve(root, includer, name):
    """The repository path a quoted include names, or None (not ours)."""
    for d in [os.path.dirname(includer)] + INCLUDE_DIRS:
        p = os.path.normpath(os.path.join(d, name))
        if not p.startswith("..") and os.path.isfile(os.path.join(root, p)):
            return p
    return None


def line_of(text, pos):
    return text.count("\n", 0, pos) + 1


def include_violations(root, path, text):
    """The include and library rules for one file."""
    layer = owner(path, LAYERS)
    for m in INCLUDE.finditer(text):
        where = "%s:%d" % (path, line_of(text, m.start()))
        if m.group(1) == "<":
            if m.group(2) in FORBIDDEN_LIBS.get(layer, ()):
                yield "%s: includes <%s>: %s uses no %s (rule library)" % (where, m.group(2), layer, m.group(2))
            continue
        header = resolve(root, path, m.group(2))
        rule = header_rule(header) if header else None
        if rule and layer and layer not in rule[2]:
            yield "%s: includes %s, one of %s, which only %s may include (rule include)" % (
                where, header, rule[1], ", ".join(sorted(rule[2])))


def marker_violations(path, text):
    """CQ_API and CQP_API belong to their public headers alone."""
    for _, _, public, marker in ARCHIVES:
        if not marker or path.startswith(public + "/"):
            continue
        for m in re.finditer(r"\b%s\b" % marker, text):
            yield "%s:%d: %s outside %s/ (rule internal)" % (path, line_of(text, m.start()), marker, public)


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def declared(root, folder, marker):
    """The names the marker declares in the headers of folder."""
    names = set()
    for path in sources(os.path.join(root, folder)):
        text = strip_comments(open(os.path.join(root, folder, path), encoding="utf-8").read())
        text = re.sub(r"^\s*#.*?(?<!\\)$", " ", text, flags=re.M | re.S)
        for m in re.finditer(r"\b%s\b([^;{]*)" % marker, text):
            head = m.group(1).split("(")[0] if "(" in m.group(1) else m.group(1).split("[")[0]
            ids = re.findall(r"[A-Za-z_]\w*", head)
            if ids:
                names.add(ids[-1])
    return names


def symbols(archive):
    """(member, name, visibility) of every external symbol archive defines."""
    out = subprocess.run(["readelf", "-sW", archive], check=True, capture_output=True, text=True).stdout
    member = None
    for line in out.splitlines():
        m = re.match(r"File: .*\((.*)\)$", line)
        if m:
            member = m.group(1)
            continue
        f = line.split()
        if len(f) == 8 and f[0].endswith(":") and f[4] in ("GLOBAL", "WEAK", "UNIQUE") and f[6] != "UND":
            yield member, f[7], f[5]


def symbol_violations(root, build, seen):
    for archive, prefix, public, marker in ARCHIVES:
        path = os.path.join(build, archive)
        api = declared(root, public, marker) if public else None
        for member, name, vis in symbols(path):
            seen["symbols"] += 1
            where = "%s(%s): %s" % (path, member, name)
            if not name.startswith(prefix):
                yield "%s: defined without the %s prefix (rule prefix)" % (where, prefix)
            elif api is None:
                continue
            elif name.startswith(prefix + "_"):
                if vis == "DEFAULT":
                    yield "%s: internal but exported (rule internal)" % where
            elif name not in api:
                yield "%s: no %s declaration in %s/ names it; internals are %s_ (rule public)" % (
                    where, marker, public, prefix)
            elif vis != "DEFAULT":
                yield "%s: declared %s but built hidden (rule public)" % (where, marker)


def violations(root, build, seen):
    """Every violation; seen counts the files, includes and symbols read."""
    for path in sources(root):
        text = open(os.path.join(root, path), encoding="utf-8").read()
        seen["files"] += 1
        seen["includes"] += len(INCLUDE.findall(text))
        yield from include_violations(root, path, text)
        yield from marker_violations(path, text)
    yield from symbol_violations(root, build, seen)


def main(argv):
    if len(argv) != 2:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    seen = {"files": 0, "includes": 0, "symbols": 0}
    bad = list(violations(ROOT, argv[1], seen))
    for v in bad:
        print(v)
    print("boundaries: %(files)d files, %(includes)d includes, %(symbols)d symbols:" % seen,
          "%d violation%s" % (len(bad), "" if len(bad) == 1 else "s"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
