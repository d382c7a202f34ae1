#!/usr/bin/python3
"""Instructions per hull pair, cq-bench beside its peers on the same pairs,
counted by callgrind (the Ir event): where the CPU's own counters are not
available (cq-bench's gjk_epa_instructions then reads nan, as on a VM
without a PMU), and robust on a loaded host either way.

usage: bench/hull_instructions.py CQ_BENCH CQ_PEERS PAIRS_FILE [N]

Counts the first N pairs (default 2000) of PAIRS_FILE: cq-bench's four
hull passes (hull_pass_depth: what the peers return; hull_pass_manifold:
with the contact points; the same two batched, hull_pass_*_batch),
Bullet's btGjkEpaSolver2::Distance + Penetration and libccd's
ccdGJKPenetration, each including everything it calls; cq's count also
holds cq_collide's dispatch and the bench loop."""
import os
import re
import subprocess
import sys
import tempfile

PEER_PASSES = 15  # bench/peers/peers.h PAIR_PASSES


def inclusive(out_file, names):
    text = subprocess.run(["callgrind_annotate", "--inclusive=yes", out_file], capture_output=True, text=True,
                          check=True).stdout
    found = {}
    for line in text.splitlines():
        m = re.match(r"\s*([\d,]+)\s+\([^)]*\)\s+(\S.*)$", line)
        if not m:
            continue
        for key, pattern in names.items():
            if key not in found and re.search(pattern, m.group(2)):
                found[key] = int(m.group(1).replace(",", ""))
    return found


def callgrind(cmd, toggles, env=None):
    fd, out = tempfile.mkstemp(prefix="cg.")
    os.close(fd)
    args = ["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out]
    args += ["--toggle-collect=" + t for t in toggles]
    subprocess.run(args + cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True,
                   env=dict(os.environ, **(env or {})))
    return out


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    bench, peers, pairs = sys.argv[1:4]
    n = int(sys.argv[4]) if len(sys.argv) > 4 else 2000
    with open(pairs) as f:
        lines = f.readlines()[:n]
    n = len(lines)
    fd, subset = tempfile.mkstemp(prefix="pairs.")
    with os.fdopen(fd, "w") as f:
        f.writelines(lines)
    cq = callgrind([bench, "pairs", subset], ["hull_pass_depth", "hull_pass_manifold", "hull_pass_depth_batch",
                                              "hull_pass_manifold_batch"], {"CQ_BENCH_HULL_PASSES": "1"})
    got = inclusive(cq, {"depth": r":hull_pass_depth ", "manifold": r":hull_pass_manifold ",
                         "depth_batch": r":hull_pass_depth_batch ", "manifold_batch": r":hull_pass_manifold_batch "})
    pe = callgrind([peers, "pairs", subset], ["btGjkEpaSolver2::Distance*", "btGjkEpaSolver2::Penetration*",
                                                "ccdGJKPenetration"])
    got.update(inclusive(pe, {"bullet_distance": r"btGjkEpaSolver2::Distance\(", "bullet_penetration":
                              r"btGjkEpaSolver2::Penetration\(", "ccd": r"ccdGJKPenetration"}))
    for path in (cq, pe, subset):
        os.unlink(path)
    cq_depth, cq_manifold = got["depth"] / n, got["manifold"] / n
    bullet = (got["bullet_distance"] + got["bullet_penetration"]) / (PEER_PASSES * n)
    ccd = got["ccd"] / (PEER_PASSES * n)
    print("hull_pairs %d" % n)
    print("gjk_epa_instructions %.0f" % cq_depth)
    print("gjk_epa_manifold_instructions %.0f" % cq_manifold)
    print("gjk_epa_batch_instructions %.0f" % (got["depth_batch"] / n))
    print("gjk_epa_batch_manifold_instructions %.0f" % (got["manifold_batch"] / n))
    print("bullet_gjk_epa_instructions %.0f" % bullet)
    print("ccd_gjk_epa_instructions %.0f" % ccd)
    print("ratio_bullet %.3f" % (cq_depth / bullet))
    print("ratio_ccd %.3f" % (cq_depth / ccd))


if __name__ == "__main__":
    main()
