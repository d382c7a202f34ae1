#!/usr/bin/env python3
"""End-to-end tests of collisiond: starts the real daemon on ephemeral
loopback ports and drives it over HTTP and the stream transport.

    python3 tests/e2e/run.py build/collisiond [-v] [--encoding json|msgpack] [--transport http|stream] [NAME ...]

NAME selects tests whose id contains it (e.g. Stream, test_sweeps).
--encoding (or the environment's CQ_E2E_ENCODING; default json) is the
encoding of every body the tests send and receive: run the suite once in
each to cover both (tests of JSON text itself are skipped in msgpack, each
with its reason, listed at the end). --transport (or CQ_E2E_TRANSPORT;
default http) is where the scenario tests' requests go (harness.TRANSPORT:
stream sends each on a persistent stream connection, so the same
scenarios check that transport's answers). Exits 0 when every test passed, 1
otherwise (the failures are printed with the request, what was expected
and what came back), 2 on a usage error."""

import os
import sys
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # leave no __pycache__ in the source tree


def parse(argv):
    """(verbose, {"encoding", "transport"}, positional arguments), or None
    on a usage error."""
    verbose, rest = False, []
    options = {"encoding": os.environ.get("CQ_E2E_ENCODING") or "json",
               "transport": os.environ.get("CQ_E2E_TRANSPORT") or "http"}
    i = 0
    while i < len(argv):
        a = argv[i]
        name = a[2:].split("=", 1)[0] if a.startswith("--") else None
        if a == "-v":
            verbose = True
        elif name in options and "=" in a:
            options[name] = a.split("=", 1)[1]
        elif name in options and i + 1 < len(argv):
            options[name] = argv[i + 1]
            i += 1
        elif a.startswith("-"):
            return None
        else:
            rest.append(a)
        i += 1
    return verbose, options, rest


def main(argv):
    parsed = parse(argv)
    if parsed is None or not parsed[2]:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    verbose, options, args = parsed
    encoding, transport = options["encoding"], options["transport"]
    try:
        import harness
    except ImportError as e:  # python3-msgpack missing (mp.py says so)
        print("e2e: %s" % e, file=sys.stderr)
        return 2
    if encoding not in harness.ENCODINGS:
        print("e2e: unknown encoding %r (%s)" % (encoding, " or ".join(harness.ENCODINGS)), file=sys.stderr)
        return 2
    if transport not in harness.TRANSPORTS:
        print("e2e: unknown transport %r (%s)" % (transport, " or ".join(harness.TRANSPORTS)), file=sys.stderr)
        return 2
    daemon = os.path.abspath(args[0])
    if not os.access(daemon, os.X_OK):
        print("e2e: %s is not an executable" % daemon, file=sys.stderr)
        return 2
    harness.DAEMON = daemon
    harness.ENCODING = encoding
    harness.TRANSPORT = transport

    loader = unittest.TestLoader()
    if args[1:]:
        loader.testNamePatterns = ["*%s*" % n for n in args[1:]]
    suite = loader.discover(HERE, pattern="test_*.py", top_level_dir=HERE)
    started = time.monotonic()
    result = unittest.TextTestRunner(stream=sys.stdout, verbosity=2 if verbose else 1).run(suite)
    took = time.monotonic() - started
    # a test with failing subtests counts once; a class that could not start
    # (setUpClass) counts as one failure besides its tests, which did not run;
    # a class skipped whole counts as one skip
    cases = [getattr(t, "test_case", t) for t, _ in result.failures + result.errors]
    failed = {c.id() for c in cases}
    failed_tests = {c.id() for c in cases if hasattr(c, "_testMethodName")}
    skipped_tests = [t for t, _ in result.skipped if hasattr(t, "_testMethodName")]
    bad = len(failed) + len(result.unexpectedSuccesses)
    passed = result.testsRun - len(failed_tests) - len(result.unexpectedSuccesses) - len(skipped_tests)
    if result.testsRun == 0:
        print("e2e: no test ran", file=sys.stderr)
        return 1
    for t, reason in result.skipped:
        print("e2e: skipped %s: %s" % (t.id() if hasattr(t, "_testMethodName") else t, reason))
    print("e2e: %.1f s against %s, encoding %s, transport %s" % (took, daemon, encoding, transport))
    print("e2e: %d passed, %d failed, %d skipped" % (passed, bad, len(result.skipped)))
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
