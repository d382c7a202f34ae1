"""Reads a Prometheus text exposition on stdin with the official Python
client's parser (Debian's python3-prometheus-client) and writes its
families as JSON on stdout: [{"name", "type", "documentation", "samples":
[[name, labels, value], ...]}, ...]. A parse error exits with status 1 and
the error on stderr.

test_exposition.py runs it under an interpreter that has the package (the
Debian one, /usr/bin/python3, when the tests run under another), so the
exposition is judged by a parser that shares nothing with ours."""

import json
import sys

from prometheus_client.parser import text_string_to_metric_families


def main():
    text = sys.stdin.read()
    try:
        families = [{"name": f.name, "type": f.type, "documentation": f.documentation,
                     "samples": [[s.name, dict(s.labels), s.value] for s in f.samples]}
                    for f in text_string_to_metric_families(text)]
    except Exception as e:  # the parser raises ValueError, and others on odd input
        print("%s: %s" % (type(e).__name__, e), file=sys.stderr)
        return 1
    json.dump(families, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
