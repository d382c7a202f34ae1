#!/usr/bin/env python3
"""Runs every Check suite of a runner, JOBS at a time, one process each.

    python3 tests/run_suites.py RUNNER SUITES_H [JOBS]

Each suite runs as `CK_RUN_SUITE=name RUNNER` (fork mode) with the caller's
environment; its output goes to RUNNER's directory as check-NAME.log and is
printed only when the suite fails. Ends with one line summing Check's
counts. Exits 0 when every suite passed, 1 otherwise, 2 on bad usage.

`make asan` uses it: under the sanitizers the suites take many minutes one
after another, and two cores halve that. (`make test` keeps the single
runner, whose output ends with Check's own summary line.)"""

import concurrent.futures
import os
import re
import subprocess
import sys
import time

# Started first, so the longest ones do not start last and run alone at the
# end; measured, and only the starting order depends on it.
HEAVY_FIRST = ["hull", "sap", "oom", "mesh", "sweep_random", "exact"]

COUNTS = re.compile(r"Checks: (\d+), Failures: (\d+), Errors: (\d+)")


def suites_of(header):
    """The suite names of suites.h's X(name) list, in its order."""
    with open(header) as f:
        return re.findall(r"X\((\w+)\)", f.read())


def run(runner, name):
    """Runs one suite; returns (name, exit status, log path, seconds)."""
    log = os.path.join(os.path.dirname(runner), "check-%s.log" % name)
    env = dict(os.environ, CK_RUN_SUITE=name, CK_FORK="yes")
    started = time.monotonic()
    with open(log, "w") as out:
        rc = subprocess.call([runner], env=env, stdout=out, stderr=subprocess.STDOUT)
    return name, rc, log, time.monotonic() - started


def main(argv):
    if len(argv) not in (2, 3):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    runner, header = os.path.abspath(argv[0]), argv[1]
    jobs = int(argv[2]) if len(argv) == 3 else os.cpu_count() or 1
    names = suites_of(header)
    if not names:
        print("run_suites: no X(name) in %s" % header, file=sys.stderr)
        return 2
    order = [n for n in HEAVY_FIRST if n in names] + [n for n in names if n not in HEAVY_FIRST]
    started = time.monotonic()
    totals, failed = [0, 0, 0], []
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        for name, rc, log, secs in pool.map(lambda n: run(runner, n), order):
            with open(log) as f:
                text = f.read()
            found = COUNTS.findall(text)
            for k in range(3):
                totals[k] += sum(int(c[k]) for c in found)
            ok = rc == 0 and found
            print("%-16s %6.1f s  %s" % (name, secs, "ok" if ok else "FAILED (exit %d)" % rc), flush=True)
            if not ok:
                failed.append(name)
                sys.stdout.write(text)
    print("%d suites, %d jobs, %.0f s: Checks: %d, Failures: %d, Errors: %d%s"
          % (len(names), jobs, time.monotonic() - started, totals[0], totals[1], totals[2],
             "; failed: " + " ".join(failed) if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
