#!/usr/bin/env python3
"""Issue 25's "Done when": every attack of the issue at once, for a
minute, against a daemon with its default settings (plus --token and a
temporary --data-dir), while authorised clients make a steady mix of
cheap requests over HTTP and the stream.

    /usr/bin/python3 tests/hostile/soak.py build/collisiond [--duration S] [--only A,B] [--list]

It passes when every authorised request got its expected answer within
1 s throughout, no attack got an answer the issue forbids, the daemon is
alive and answers at the end, stops on SIGTERM, and restarts from its
data directory with every acknowledged change. Prints a table per
client kind and request and per attack (count, p50, p99, max, failures),
then the clients per 5-second window. Exit status 0 on a pass, 1 on a
failure, 2 on a usage error. --only runs the named attacks alone (none:
the clients alone), to see which attack breaks the bound."""

import argparse
import multiprocessing
import os
import signal
import sys
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(1, os.path.join(HERE, "..", "e2e"))
sys.dont_write_bytecode = True  # leave no __pycache__ in the source tree

import attack_budget  # noqa: E402
import attack_cpu  # noqa: E402
import attack_memory  # noqa: E402
import attack_store  # noqa: E402
import attack_wire  # noqa: E402
import record  # noqa: E402
import victims  # noqa: E402
from attack import Context  # noqa: E402
from daemon import MEMORY_LIMIT, Daemon  # noqa: E402

ATTACKS = (attack_budget.ATTACKS + attack_memory.ATTACKS + attack_cpu.ATTACKS + attack_wire.ATTACKS
           + attack_store.ATTACKS)
# What an attack needs made before any attack starts: setup(daemon) -> None or why not.
SETUPS = dict(attack_memory.SETUPS, **attack_store.SETUPS, **attack_cpu.SETUPS)
TOKEN = "soak-token-25"
ATTACK_NICE = 10
STOP_TIMEOUT = 15.0
RESTART_READY = 20.0
GRACE = 2.0


def prepare(daemon, chosen):
    """Runs the chosen attacks' setups, one after another; a refused one
    is a failed attack row (the attack would do nothing)."""
    rec = record.Recorder(time.monotonic())
    for name, _ in chosen:
        if name in SETUPS:
            clock = record.Clock()
            problem = SETUPS[name](daemon)
            rec.add("attack", "setup " + name, clock.started, clock.latency(), problem, problem or "made")
    return rec.samples


def run_attack(name, fn, daemon, t0, deadline, workdir, out):
    """An attack's process: its samples are saved when it ends, or when
    the soak stops it at the deadline (its unanswered steps with them)."""
    os.nice(ATTACK_NICE)
    rec = record.Recorder(t0)
    ctx = Context(daemon, rec, deadline, workdir)

    def stop(*_):
        ctx.flush_in_flight()
        rec.save(out)
        os._exit(0)

    signal.signal(signal.SIGTERM, stop)
    try:
        fn(ctx)
    except Exception:
        rec.add("attack", name, time.monotonic(), 0.0, True, "the attack crashed: " + traceback.format_exc()[-300:])
    stop()


def run_victims(daemon, vs, t0, deadline, out, state_out):
    rec = record.Recorder(t0)
    expected = victims.run(daemon, rec, deadline, vs)
    rec.save(out)
    record.save_json(state_out, expected)


def start_processes(ctx, chosen, vs):
    mp = multiprocessing.get_context("fork")
    procs = []
    for name, fn in chosen:
        out = os.path.join(ctx["workdir"], "attack-%s.json" % name)
        p = mp.Process(target=run_attack, args=(name, fn, ctx["daemon"], ctx["t0"], ctx["deadline"],
                                                ctx["workdir"], out))
        procs.append((p, out))
    out = os.path.join(ctx["workdir"], "victims.json")
    v = mp.Process(target=run_victims, args=(ctx["daemon"], vs, ctx["t0"], ctx["deadline"], out, ctx["state"]))
    for p, _ in procs:
        p.start()
    v.start()
    return procs, (v, out)


def watch(daemon, deadline):
    """Until deadline: the daemon's peak RSS (MiB) and whether it died."""
    peak = 0.0
    while time.monotonic() < deadline:
        if not daemon.alive():
            return peak, False
        peak = max(peak, daemon.rss_mib())
        time.sleep(0.5)
    return peak, daemon.alive()


def collect(procs, victim):
    v, vout = victim
    v.join(victims.IO_TIMEOUT * 2 + GRACE)
    if v.is_alive():
        v.kill()
    time.sleep(GRACE)
    for p, _ in procs:
        if p.is_alive():
            p.terminate()
    for p, _ in procs:
        p.join(5)
        if p.is_alive():
            p.kill()
            p.join()
    return record.load([vout] + [out for _, out in procs])


class Final:
    """The checks after the soak, as client rows: alive, stop, restart."""

    def __init__(self, rec):
        self.rec = rec

    def check(self, name, fn, bound=record.BOUND_S):
        clock = record.Clock()
        try:
            problem = fn()
        except Exception as e:
            problem = "%s: %s" % (type(e).__name__, e)
        self.rec.client(name, clock.started, clock.latency(), problem, group="final", bound=bound)
        return not problem


def answers(daemon, vs):
    def check():
        status, body = daemon.request("GET", "/healthz", timeout=5, source=victims.SOURCE)
        if status != 200 or victims.check_health(body):
            return "healthz: %s %s" % (status, body)
        status, body = daemon.request("GET", "/v1/worlds/%s/shapes/s" % vs[0].world, timeout=5,
                                      source=victims.SOURCE)
        return victims.check_shape(body) if status == 200 else "shape: status %s" % status
    return check


def stop_check(daemon):
    def check():
        rc, took = daemon.stop(STOP_TIMEOUT)
        if rc != 0:
            return "exit status %s after SIGTERM (%.1f s; none: killed after %.0f s)" % (rc, took, STOP_TIMEOUT)
        return None
    return check


def restart_check(daemon):
    def check():
        daemon.start()
        took = daemon.wait_ready(RESTART_READY)
        return None if took is not None else "not ready %.0f s after the restart: %s" % (
            RESTART_READY, daemon.log_tail(300))
    return check


def finish(daemon, vs, state, t0):
    """Alive and answering, then SIGTERM, the restart, the victims'
    worlds as acknowledged, and a last SIGTERM."""
    rec = record.Recorder(t0)
    final = Final(rec)
    final.check("alive and answering", answers(daemon, vs))
    final.check("SIGTERM stop", stop_check(daemon), None)
    if final.check("restart ready", restart_check(daemon), None):
        final.check("restored acknowledged writes",
                    lambda: "; ".join(victims.check_restored(daemon, state)) or None)
        final.check("answering after restart", answers(daemon, vs))
        final.check("SIGTERM stop after restart", stop_check(daemon), None)
    daemon.kill()
    return rec.samples


def parse(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("daemon", nargs="?")
    ap.add_argument("--duration", type=float, default=60.0)
    ap.add_argument("--only", help="comma-separated attack names (none: the clients alone)")
    ap.add_argument("--list", action="store_true", help="list the attacks and exit")
    return ap.parse_args(argv)


def choose(only):
    if only is None:
        return list(ATTACKS)
    names = [n for n in only.split(",") if n and n != "none"]
    known = dict(ATTACKS)
    bad = [n for n in names if n not in known]
    if bad:
        raise SystemExit("soak: unknown attack %s (--list)" % ", ".join(bad))
    return [(n, known[n]) for n in names]


def verdict(samples, peak, alive_during):
    failed = [r for r in record.rows(samples) if r["failures"]]
    lines = []
    if not alive_during:
        lines.append("the daemon died during the soak")
    lines += ["%s %s: %d failed" % (r["group"], r["name"], r["failures"]) for r in failed]
    print("\npeak RSS of the daemon: %.0f MiB (RLIMIT_AS %d MiB)" % (peak, MEMORY_LIMIT >> 20))
    print("FAIL:\n  " + "\n  ".join(lines) if lines else "PASS")
    return 1 if lines else 0


def main(argv):
    args = parse(argv)
    if args.list:
        print("\n".join(n for n, _ in ATTACKS))
        return 0
    chosen = choose(args.only)
    with tempfile.TemporaryDirectory(prefix="collisiond-soak-") as workdir:
        daemon = Daemon(os.path.abspath(args.daemon), workdir, TOKEN).start()
        try:
            if daemon.wait_ready(RESTART_READY) is None:
                print("soak: the daemon did not get ready: " + daemon.log_tail(), file=sys.stderr)
                return 1
            vs = victims.make(daemon)
            victims.setup(daemon, vs)
            prepared = prepare(daemon, chosen)
            t0 = time.monotonic()
            ctx = {"daemon": daemon, "t0": t0, "deadline": t0 + args.duration, "workdir": workdir,
                   "state": os.path.join(workdir, "state.json")}
            print("soak: %d attacks for %.0f s: %s" % (len(chosen), args.duration, ", ".join(n for n, _ in chosen)))
            sys.stdout.flush()
            procs, victim = start_processes(ctx, chosen, vs)
            peak, alive_during = watch(daemon, ctx["deadline"])
            samples = prepared + collect(procs, victim)
            samples += finish(daemon, vs, record.load_json(ctx["state"], {}), t0)
        finally:
            daemon.kill()
        print(record.table(samples))
        print()
        print(record.timeline(samples))
        return verdict(samples, peak, alive_during)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
