"""The rows of "worlds under game load" in bench/table.py's one table.

In process: `cq-bench load` (bench/load.c), once a round, every figure of a
round from one process, so each ratio is taken within one run. A figure
shows its best / worst over the rounds; a ratio, the median of the rounds'
ratios with their range in brackets, and the goal is judged on that median:
on this shared machine a burst of other tenants' load can hit a figure and
not its baseline, and the least of the ratios would favour the goal. Over
HTTP: bench/world_load/run.py, run once (medians of many repetitions).
"""

import statistics

TELEPORT_PERCENT = (1, 50, 100)
TELEPORT_GOAL = (10000, 100, 2.0)    # boxes, percent, most times building afresh
MOVE_GOAL = (100000, 10000, 1.3)     # boxes, against boxes, most times as many ns a move
PUT_GOAL = 1.5                       # most times the PUT into an empty world


def cq_args(data, moves, teleports, puts):
    """cq-bench load's arguments for the scenes of data."""
    scene = "%s/scene-%%d-7.txt" % data
    args = ["move:%s:%d" % (scene % n, frames) for n, frames in moves]
    args += ["teleport:%s" % (scene % n) for n in teleports]
    args += ["put:%s:%d" % (scene % n, reps) for n, reps in puts]
    return args


def _values(runs, key):
    return [r[key] for r in runs if key in r]


def _span(values, fmt):
    """best / worst of values (lower is better)."""
    lo, hi = min(values), max(values)
    return fmt(lo) if len(values) == 1 or fmt(lo) == fmt(hi) else "%s / %s" % (fmt(lo), fmt(hi))


def _ratio_text(ratios):
    mid = statistics.median(ratios)
    if len(ratios) == 1:
        return "%.3f" % mid
    return "%.3f (%.3f–%.3f)" % (mid, min(ratios), max(ratios))


def _met(ratio, goal):
    if goal is None:
        return "—", ""
    return "≤ %g" % goal, "yes" if ratio <= goal else "no"


def _ratio_row(label, runs, key, peer, peer_key, goal, fmt):
    """A figure beside its baseline, the ratio taken within each round."""
    cq, base = _values(runs, key), _values(runs, peer_key)
    ratios = [r[key] / r[peer_key] for r in runs if key in r and peer_key in r and r[peer_key] > 0]
    goal_text, met = _met(statistics.median(ratios), goal) if ratios else ("≤ %g" % goal if goal else "—", "missing")
    return "| %s | %s | %s | %s | %s | %s | %s |" % (
        label, _span(cq, fmt) if cq else "—", peer, _span(base, fmt) if base else "—",
        _ratio_text(ratios) if ratios else "", goal_text, met if ratios or goal else "")


def teleport_rows(runs, teleports, fmt):
    rows = []
    for n in teleports:
        for pct in TELEPORT_PERCENT:
            label = "one batch moving %d %% of %s boxes to random places, ms" % (pct, "{:,}".format(n))
            goal = TELEPORT_GOAL[2] if (n, pct) == TELEPORT_GOAL[:2] else None
            key = "teleport%d_ms_%d" % (pct, n)
            skipped = _values(runs, "teleport%d_skipped_est_ms_%d" % (pct, n))
            if skipped and not _values(runs, key):
                rows.append("| %s | not run (about %s expected) | building the same world afresh | %s | | %s | %s |"
                            % (label, "{:,.0f} ms".format(min(skipped)), _span(_values(runs, "build_ms_%d" % n), fmt),
                               "≤ %g" % goal if goal else "—", "no (not run)" if goal else ""))
                continue
            rows.append(_ratio_row(label, runs, key, "building the same world afresh", "build_ms_%d" % n, goal, fmt))
    return rows


def move_rows(runs, moves, fmt):
    rows = []
    sizes = [n for n, _ in moves]
    base = MOVE_GOAL[1] if MOVE_GOAL[1] in sizes else None
    for by in ("id", "handle"):
        for n, frames in moves:
            label = "cq_world_apply, coherent motion, %s boxes (%d frames), by %s, ns/move" % (
                "{:,}".format(n), frames, by)
            key = "move_%s_ns_%d" % (by, n)
            if base is None or n == base:
                cq = _values(runs, key)
                rows.append("| %s | %s | — | | | — | |" % (label, _span(cq, fmt) if cq else "missing"))
                continue
            goal = MOVE_GOAL[2] if (by, n) == ("id", MOVE_GOAL[0]) else None
            rows.append(_ratio_row(label, runs, key, "the same at %s boxes" % "{:,}".format(base),
                                   "move_%s_ns_%d" % (by, base), goal, fmt))
    return rows


def put_rows(runs, fmt):
    if not _values(runs, "put_shapes"):
        return []
    n = int(min(_values(runs, "put_shapes")))
    label = "one shape PUT into %s boxes, in process (cq_world_apply of one upsert), µs (median)" % "{:,}".format(n)
    return [_ratio_row(label, runs, "put_full_us", "the same into an empty world", "put_empty_us", PUT_GOAL, fmt)]


def http_put_rows(h, fmt):
    rows = []
    for mode, what in (("mem", "--data-dir ''"), ("disk", "a data directory")):
        if "put_%s_shapes" % mode not in h:
            continue
        n = "{:,}".format(int(h["put_%s_shapes" % mode]))
        for kind, span in (("daemon", "the daemon's duration_us"), ("client", "client wall time")):
            full, empty = h["put_%s_full_%s_us" % (mode, kind)], h["put_%s_empty_%s_us" % (mode, kind)]
            ratio = full / empty
            goal_text, met = _met(ratio, PUT_GOAL)
            rows.append("| HTTP PUT of one shape into %s boxes, %s, %s, µs (median of %d) | %s | the same into an empty "
                        "world | %s | %.3f | %s | %s |" % (n, what, span, int(h["put_reps"]), fmt(full), fmt(empty),
                                                          ratio, goal_text, met))
    return rows


def _ticks(h, kind):
    """The ticks a world got, and the journal's own count of bytes when /metrics has it."""
    text = "%d ticks, %.0f Hz reached" % (h["load_%s_ticks" % kind], h["load_%s_hz" % kind])
    if "load_%s_journal_bytes" % kind in h:
        text += "; collisiond_journal_bytes_total +{:,}".format(int(h["load_%s_journal_bytes" % kind]))
    return text


def ephemeral_rows(h):
    """The ephemeral world's bytes (goal: none) and the middle mode's, beside the durable world's."""
    if "load_durable_bytes" not in h:
        return []
    label = "%s-box world moved at %.0f Hz for %.0f s, bytes written to the data directory" % (
        "{:,}".format(int(h["load_shapes"])), h["load_hz"], h["load_durable_seconds"])
    durable = "durable world (%s)" % _ticks(h, "durable")
    durable_bytes = "{:,}".format(int(h["load_durable_bytes"]))
    rows = []
    for kind, mode, goal in (("ephemeral", "none", True), ("shapes", "shapes", False)):
        text = "%s, `\"durability\": \"%s\"`" % (label, mode)
        if not h.get("load_%s_available" % kind):
            rows.append("| %s | not available: the daemon refused or ignored the setting (%d) | %s | %s | | %s | %s |"
                        % (text, h.get("load_%s_status" % kind, 0), durable, durable_bytes, "= 0" if goal else "—",
                           "not available" if goal else ""))
            continue
        got = int(h["load_%s_bytes" % kind])
        met = ("yes" if got == 0 else "no") if goal else ""
        rows.append("| %s (%s) | %s | %s | %s | | %s | %s |" % (text, _ticks(h, kind), "{:,}".format(got), durable,
                                                               durable_bytes, "= 0" if goal else "—", met))
    return rows


def rows(runs, moves, teleports, http_values, fmt):
    """Every row, in process first; http_values may be None."""
    out = teleport_rows(runs, teleports, fmt) + move_rows(runs, moves, fmt) + put_rows(runs, fmt)
    if http_values:
        out += http_put_rows(http_values, fmt) + ephemeral_rows(http_values)
    return out
