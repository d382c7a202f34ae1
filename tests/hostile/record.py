"""What the soak measured: one sample per request (or attack step), kept
by each process in a Recorder and written to a JSON file when it ends, so
the parent can sum the processes up in one table."""

import json
import time

# An authorised request slower than this failed (issue 25, "Done when").
BOUND_S = 1.0
# Failure details kept per row, for the report: the first ones explain.
KEEP_DETAILS = 3


class Recorder:
    """Samples of one process: (group, name, start offset s, latency s,
    failed, detail). group is "client" or "attack"."""

    def __init__(self, t0):
        self.t0 = t0
        self.samples = []

    def add(self, group, name, started, latency, failed, detail=""):
        self.samples.append((group, name, round(started - self.t0, 4), latency, bool(failed), detail))

    def client(self, name, started, latency, problem, group="client", bound=BOUND_S):
        """An authorised request: failed when problem is set or it took
        longer than bound (None: its own checks bound it)."""
        if not problem and bound is not None and latency > bound:
            problem = "took %.3f s (bound %.1f s)" % (latency, bound)
        self.add(group, name, started, latency, problem, problem or "")

    def save(self, path):
        with open(path, "w") as f:
            json.dump(list(self.samples), f)  # a copy: other threads may still append


class Clock:
    """Times one step: started is when it began, latency() how long since."""

    def __init__(self):
        self.started = time.monotonic()

    def latency(self):
        return time.monotonic() - self.started


def load(paths):
    out = []
    for p in paths:
        try:
            with open(p) as f:
                out.extend(tuple(s) for s in json.load(f))
        except (OSError, ValueError):
            pass
    return out


def percentile(sorted_values, q):
    if not sorted_values:
        return 0.0
    i = min(len(sorted_values) - 1, int(q * len(sorted_values)))
    return sorted_values[i]


def rows(samples):
    """One row per (group, name): count, p50, p99, max, failures, details."""
    by = {}
    for group, name, started, latency, failed, detail in samples:
        by.setdefault((group, name), []).append((latency, failed, detail, started))
    out = []
    for (group, name), got in sorted(by.items()):
        lat = sorted(g[0] for g in got)
        bad = [g for g in got if g[1]]
        out.append({"group": group, "name": name, "count": len(got), "p50": percentile(lat, 0.5),
                    "p99": percentile(lat, 0.99), "max": lat[-1], "failures": len(bad),
                    "details": ["t=%.1fs %s" % (b[3], b[2]) for b in bad[:KEEP_DETAILS]],
                    "answers": answers(g[2] for g in got if not g[1])})
    return out


def answers(details):
    """What an attack's steps got, most frequent first: "status 201 x28, ..."."""
    counts = {}
    for d in details:
        if d:
            counts[d] = counts.get(d, 0) + 1
    top = sorted(counts.items(), key=lambda kv: -kv[1])[:4]
    return ", ".join("%s x%d" % kv for kv in top)


def table(samples):
    """The report's text: a row per client kind and request, then per attack."""
    lines = ["%-8s %-34s %7s %9s %9s %9s %8s" % ("group", "name", "count", "p50 ms", "p99 ms", "max ms", "failed")]
    for r in rows(samples):
        lines.append("%-8s %-34s %7d %9.1f %9.1f %9.1f %8d" % (
            r["group"], r["name"][:34], r["count"], r["p50"] * 1e3, r["p99"] * 1e3, r["max"] * 1e3, r["failures"]))
        if r["group"] == "attack" and r["answers"]:
            lines.append("           = " + r["answers"][:160])
        lines.extend("           ! " + d[:160] for d in r["details"])
    return "\n".join(lines)


def timeline(samples, step=5.0):
    """Authorised requests per window of step seconds: count, failures and
    the slowest, so a reader sees whether the bound held throughout."""
    wins = {}
    for group, _, started, latency, failed, _ in samples:
        if group != "client":
            continue
        w = wins.setdefault(int(started // step), [0, 0, 0.0])
        w[0] += 1
        w[1] += failed
        w[2] = max(w[2], latency)
    lines = ["window      clients  failed   max ms"]
    for k in sorted(wins):
        n, bad, worst = wins[k]
        lines.append("%4.0f-%-4.0fs %8d %7d %8.1f" % (k * step, (k + 1) * step, n, bad, worst * 1e3))
    return "\n".join(lines)


def save_json(path, value):
    with open(path, "w") as f:
        json.dump(value, f)


def load_json(path, default):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return default
