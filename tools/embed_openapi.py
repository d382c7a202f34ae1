#!/usr/bin/env python3
"""Writes the C array of server/api/openapi.h: embed_openapi.py OUT JSON VERSION

The document becomes a NUL-terminated byte array, so the daemon serves
exactly the file it was built with. The build fails, writing nothing, when
the document's info.version is not VERSION: the binary must never serve a
contract that names another release (docs/RELEASING.md)."""
import json
import os
import sys


def c_source(data):
    """The C file for the document's bytes, as server/api/openapi.h declares it."""
    return ("#include <stddef.h>\n"
            "const char cqd_openapi_json[] = {" + ",".join(str(b) for b in data) + ",0};\n"
            "const size_t cqd_openapi_len = %d;\n" % len(data))


def main(out, path, version):
    with open(path, "rb") as f:
        data = f.read()
    found = json.loads(data)["info"]["version"]
    if found != version:
        sys.exit("%s: info.version %s is not VERSION %s" % (path, found, version))
    # Through a temporary file, so an interrupted build leaves no half array.
    with open(out + ".tmp", "w") as f:
        f.write(c_source(data))
    os.replace(out + ".tmp", out)


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__.splitlines()[0])
    main(*sys.argv[1:])
