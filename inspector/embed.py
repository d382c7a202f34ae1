#!/usr/bin/env python3
"""Writes the C table of server/api/inspector.h: embed.py OUT NAME=PATH ...

Each file becomes a byte array, so the daemon serves exactly the files it
was built with and reads nothing at run time."""
import sys


def main(out, pairs):
    lines = ['#include "api/inspector.h"']
    rows = []
    for i, pair in enumerate(pairs):
        name, path = pair.split("=", 1)
        with open(path, "rb") as f:
            data = f.read()
        lines.append("static const unsigned char a%d[] = {%s};" % (i, ",".join(str(b) for b in data) or "0"))
        rows.append('    {"%s", a%d, %d},' % (name, i, len(data)))
    lines.append("const cqd_asset cqd_inspector_assets[] = {")
    lines += rows
    lines.append("};")
    lines.append("const int cqd_inspector_asset_count = %d;" % len(rows))
    with open(out + ".tmp", "w") as f:
        f.write("\n".join(lines) + "\n")
    import os
    os.replace(out + ".tmp", out)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
