#!/usr/bin/env python3
"""End-to-end tests of collisiond: starts the real daemon on ephemeral
loopback ports and drives it over HTTP and the stream transport.

    python3 tests/e2e/run.py build/collisiond [-v] [NAME ...]

NAME selects tests whose id contains it (e.g. Stream, test_sweeps). Exits
0 when every test passed, 1 otherwise (the failures are printed with the
request, what was expected and what came back)."""

import os
import sys
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # leave no __pycache__ in the source tree

import harness  # noqa: E402


def main(argv):
    verbose = "-v" in argv
    args = [a for a in argv if a != "-v"]
    if not args or args[0].startswith("-"):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    daemon = os.path.abspath(args[0])
    if not os.access(daemon, os.X_OK):
        print("e2e: %s is not an executable" % daemon, file=sys.stderr)
        return 2
    harness.DAEMON = daemon

    loader = unittest.TestLoader()
    if args[1:]:
        loader.testNamePatterns = ["*%s*" % n for n in args[1:]]
    suite = loader.discover(HERE, pattern="test_*.py", top_level_dir=HERE)
    started = time.monotonic()
    result = unittest.TextTestRunner(stream=sys.stdout, verbosity=2 if verbose else 1).run(suite)
    took = time.monotonic() - started
    # a test with failing subtests counts once; a class that could not start
    # (setUpClass) counts as one failure besides its tests, which did not run
    cases = [getattr(t, "test_case", t) for t, _ in result.failures + result.errors]
    failed = {c.id() for c in cases}
    failed_tests = {c.id() for c in cases if hasattr(c, "_testMethodName")}
    bad = len(failed) + len(result.unexpectedSuccesses)
    passed = result.testsRun - len(failed_tests) - len(result.unexpectedSuccesses) - len(result.skipped)
    if result.testsRun == 0:
        print("e2e: no test ran", file=sys.stderr)
        return 1
    print("e2e: %.1f s against %s" % (took, daemon))
    print("e2e: %d passed, %d failed" % (passed, bad))
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
