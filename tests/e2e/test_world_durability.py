"""Per-world durability and check-before-journaling (docs/API.md,
Durability and Per-world durability).

Each test gives its daemons a data directory of its own and restarts them
on it, as test_durability.py does (its helpers are reused). The oracles
are what the test sent and saw acknowledged, exports taken before a
restart, the documented table of what a restart gives back in each mode,
and the data directory's own bytes: the journal's before and after a
refused change, and every file's, searched for an ephemeral world's name."""

import glob
import os
import unittest

import harness
from test_durability import Durability, dir_size, journals, read
from wire import body_item, box, sphere

# Distinctive strings: an ephemeral world's name and its shapes' ids, which
# must never be found in any file of the data directory.
EPHEMERAL = "ephemeral-QZ7xK4-world"
EPHEMERAL_ID = "ghost-JW3vP9-shape"


def directory_bytes(data_dir):
    """{file name: bytes} of every file in the data directory."""
    out = {}
    for p in sorted(glob.glob(os.path.join(data_dir, "*"))):
        try:
            out[os.path.basename(p)] = read(p)
        except FileNotFoundError:  # a segment a snapshot made obsolete meanwhile
            pass
    return out


def store_bytes(data_dir):
    """The journal and snapshot files' bytes, concatenated in name order."""
    files = directory_bytes(data_dir)
    return b"".join(files[n] for n in sorted(files) if n.endswith((".log", ".snap")))


def moves(ids, x):
    return {"move": [{"id": i, "pose": {"position": [x, k, 0]}} for k, i in enumerate(ids)]}


class WorldDurability(unittest.TestCase):
    setUp = Durability.setUp
    start = Durability.start
    wait_ready = Durability.wait_ready
    stop = Durability.stop
    crash = Durability.crash
    inspect = Durability.inspect
    ok = Durability.ok
    export = Durability.export
    shape_x = Durability.shape_x

    def refused(self, d, method, path, body, status):
        r = d.request(method, path, body)
        self.assertEqual(r.status, status, "%s %s: %s" % (method, path, r.describe()))
        return r

    def worlds(self, d):
        r = d.request("GET", "/v1/worlds")
        self.assertEqual(r.status, 200, r.describe())
        return {w["name"]: w for w in r.json["worlds"]}

    # check before journaling

    def test_refused_changes_leave_the_journal_unchanged(self):
        """Every mutating route, refused for every kind of reason (the
        decoder, the world's content, a limit, the durability rule): the
        journal's bytes and size are what they were before, while an
        accepted change still grows it."""
        d = self.start("--max-batch", "4", "--max-shapes-total", "2100")  # w and e: 2048 slots
        self.ok(d, "PUT", "/v1/worlds/w", {"skin": 0.1})
        self.ok(d, "PUT", "/v1/worlds/w/shapes/a", {"shape": sphere(1)})
        self.ok(d, "PUT", "/v1/worlds/w/shapes/b", {"shape": box(1, 1, 1)})
        self.ok(d, "PUT", "/v1/worlds/e", {"durability": "none"})
        path = journals(self.dir)[-1]
        before = read(path)
        refusals = [
            ("POST", "/v1/worlds/w/batch", {"move": [{"id": "missing", "pose": {"position": [0, 0, 0]}}]}, 400),
            ("POST", "/v1/worlds/w/batch", {"upsert": [body_item("c", sphere(1))],
                                            "move": [{"id": "c", "pose": {"position": [1, 0, 0]}},
                                                     {"id": "missing", "pose": {"position": [0, 0, 0]}}]}, 400),
            ("POST", "/v1/worlds/w/batch", {"remove": ["a", "a"]}, 400),
            ("POST", "/v1/worlds/w/batch", {"move": [{"id": "a", "pose": {"position": [0, 0, 0],
                                                                          "rotation": [1, 1, 0, 0]}}]}, 400),
            ("POST", "/v1/worlds/w/batch", {"move": [{"id": "a", "pose": {"position": [0, 0, 0]}}] * 5}, 422),
            ("POST", "/v1/worlds/missing/batch", {"move": []}, 404),
            ("PUT", "/v1/worlds/w/shapes/a", {"shape": sphere(-1)}, 400),
            ("PUT", "/v1/worlds/w/shapes/p", {"shape": {"type": "plane", "normal": [0, 1, 0], "offset": 0},
                                              "velocity": [1, 0, 0]}, 400),
            ("PUT", "/v1/worlds/missing/shapes/a", {"shape": sphere(1)}, 404),
            ("DELETE", "/v1/worlds/w/shapes/missing", None, 404),
            ("DELETE", "/v1/worlds/missing/shapes/a", None, 404),
            ("PUT", "/v1/worlds/w", {"skin": -1}, 400),
            ("PUT", "/v1/worlds/w", {"durability": "none"}, 409),
            ("PUT", "/v1/worlds/e", {"durability": "full"}, 409),
            ("PUT", "/v1/worlds/w", {"settings": {"durability": "shapes"}, "shapes": []}, 409),
            ("PUT", "/v1/worlds/w", {"durability": "sometimes"}, 400),
            ("PUT", "/v1/worlds/w", {"settings": {}, "shapes": [body_item("x", sphere(1)),
                                                                body_item("y", sphere(-1))]}, 400),
            ("PUT", "/v1/worlds/w", {"settings": {}, "shapes": [body_item("s%d" % i, sphere(1))
                                                                for i in range(5)]}, 422),
            ("PUT", "/v1/worlds/new", {"capacity": -5}, 400),
            ("PUT", "/v1/worlds/new", {}, 422),
            ("PUT", "/v1/worlds/w", {"capacity": 2048}, 422),
            ("DELETE", "/v1/worlds/missing", None, 404),
        ]
        for method, p, body, status in refusals:
            self.refused(d, method, p, body, status)
            now = read(path)
            self.assertEqual(len(now), len(before), "%s %s %s grew the journal" % (method, p, body))
            self.assertEqual(now, before, "%s %s %s changed the journal" % (method, p, body))
        self.assertEqual(journals(self.dir), [path])
        self.ok(d, "POST", "/v1/worlds/w/batch", {"move": [{"id": "a", "pose": {"position": [1, 0, 0]}}]})
        self.assertGreater(len(read(path)), len(before))
        # a restart recovers every record without one rejected
        self.crash(d)
        rc, out = self.inspect()
        self.assertEqual(rc, 0, out)
        self.assertIn("(0 already in it, 0 rejected as when first sent)", out)

    # what a restart gives back

    def populate(self, d):
        """A durable world, an ephemeral one and a "shapes" one, each
        changed by every kind of mutation."""
        self.ok(d, "PUT", "/v1/worlds/keep", {"skin": 0.05})
        self.ok(d, "PUT", "/v1/worlds/%s" % EPHEMERAL, {"skin": 0.25, "durability": "none"}, status=(201,))
        self.ok(d, "PUT", "/v1/worlds/mid", {"settings": {"durability": "shapes", "skin": 0.5}, "shapes": [
            body_item("a", sphere(1), (0, 0, 0)), body_item("b", sphere(1), (0, 1, 0))]}, status=(201,))
        for world, solo in (("keep", "solo"), (EPHEMERAL, EPHEMERAL_ID)):
            self.ok(d, "PUT", "/v1/worlds/%s/shapes/%s" % (world, solo), {"shape": sphere(0.5)})
            self.ok(d, "POST", "/v1/worlds/%s/batch" % world, {
                "upsert": [body_item("u%d" % i, box(1, 1, 1), (i, 0, 0)) for i in range(3)],
                "move": [{"id": solo, "pose": {"position": [3, 3, 3]}}]})
            self.ok(d, "POST", "/v1/worlds/%s/batch" % world, moves(["u0", "u1"], 7))
            self.ok(d, "DELETE", "/v1/worlds/%s/shapes/u2" % world)
            self.ok(d, "PUT", "/v1/worlds/%s" % world, {"capacity": 50})
        # mid: a move-only batch (not journaled), then one that also upserts (journaled)
        self.ok(d, "POST", "/v1/worlds/mid/batch", moves(["a"], 5))
        self.ok(d, "POST", "/v1/worlds/mid/batch", {"upsert": [body_item("c", sphere(2), (9, 9, 9))],
                                                    "move": [{"id": "b", "pose": {"position": [7, 1, 0]}}]})
        self.ok(d, "POST", "/v1/worlds/mid/batch", moves(["b"], 8))

    def assert_no_trace(self, what):
        for name, data in directory_bytes(self.dir).items():
            for s in (EPHEMERAL, EPHEMERAL_ID):
                self.assertNotIn(s.encode(), data, "%s: %s found in %s" % (what, s, name))
            self.assertNotIn(b"QZ7xK4", data, "%s: part of the ephemeral name in %s" % (what, name))

    def test_restart_gives_back_what_each_mode_keeps(self):
        d = self.start()
        self.populate(d)
        keep = self.export(d, "keep")
        listed = self.worlds(d)
        self.assertEqual({n: w["durability"] for n, w in listed.items()},
                         {"keep": "full", EPHEMERAL: "none", "mid": "shapes"})
        self.assertEqual(self.shape_x(d, "mid"), {"a": 5, "b": 8, "c": 9})
        self.assert_no_trace("before the crash")
        self.crash(d)
        self.assert_no_trace("after the crash")

        d = self.start()
        self.assertEqual(d.request("GET", "/v1/worlds/%s" % EPHEMERAL).status, 404)
        self.assertEqual(d.request("POST", "/v1/worlds/%s/batch" % EPHEMERAL, moves(["u0"], 1)).status, 404)
        self.assertEqual(sorted(self.worlds(d)), ["keep", "mid"])
        self.assertEqual(self.export(d, "keep"), keep)
        # mid: every shape, each at its last journaled pose (no snapshot yet)
        self.assertEqual(self.shape_x(d, "mid"), {"a": 0, "b": 7, "c": 9})
        r = d.request("GET", "/v1/worlds/mid")
        self.assertEqual(r.json["settings"]["durability"], "shapes", r.describe())
        self.assertEqual(r.json["settings"]["skin"], 0.5)

        # moves only, then a clean shutdown: its snapshot keeps them
        self.ok(d, "POST", "/v1/worlds/mid/batch", moves(["a", "c"], 11))
        self.stop(d)
        self.assert_no_trace("after a clean shutdown")
        d = self.start()
        self.assertEqual(self.shape_x(d, "mid"), {"a": 11, "b": 7, "c": 11})
        self.assertEqual(self.export(d, "keep"), keep)
        # after that snapshot, a crash gives back the snapshot's poses
        self.ok(d, "POST", "/v1/worlds/mid/batch", moves(["a"], 12))
        self.crash(d)
        d = self.start()
        self.assertEqual(self.shape_x(d, "mid"), {"a": 11, "b": 7, "c": 11})
        self.stop(d)
        rc, out = self.inspect()
        self.assertEqual(rc, 0, out)
        self.assertIn("worlds: 2 (ephemeral worlds, durability none, are never in the data directory)\n", out)
        self.assertRegex(out, r"\n  keep: 3 shapes, durability full, last sequence number \d+\n")
        self.assertRegex(out, r"\n  mid: 3 shapes, durability shapes, last sequence number \d+\n")
        self.assertNotIn(EPHEMERAL, out)

    def test_ephemeral_world_at_game_load_writes_nothing(self):
        """A few hundred ticks moving every box of an ephemeral world (and
        of a "shapes" world) leave the data directory's size and bytes as
        they were; the same ticks on a full world grow it."""
        n, ticks = 200, 300
        d = self.start()
        ids = ["b%d" % i for i in range(n)]
        for world, mode in (("eph", "none"), ("mid", "shapes"), ("full", "full")):
            self.ok(d, "PUT", "/v1/worlds/%s" % world, {"settings": {"durability": mode, "skin": 0.1},
                                                       "shapes": [body_item(i, box(0.5, 0.5, 0.5), (k, 0, 0))
                                                                  for k, i in enumerate(ids)]})
        for world in ("eph", "mid"):
            size, files = dir_size(self.dir), directory_bytes(self.dir)
            for t in range(ticks):
                self.ok(d, "POST", "/v1/worlds/%s/batch" % world, {"move": [
                    {"id": i, "pose": {"position": [k + t * 0.01, 0, 0]}, "velocity": [0.6, 0, 0]}
                    for k, i in enumerate(ids)]})
            self.assertEqual(dir_size(self.dir), size, "%s: the data directory grew" % world)
            self.assertEqual(directory_bytes(self.dir), files, "%s: the data directory changed" % world)
        size = dir_size(self.dir)
        for t in range(3):
            self.ok(d, "POST", "/v1/worlds/full/batch", moves(ids, t))
        self.assertGreater(dir_size(self.dir), size, "a full world's moves are journaled")
        self.crash(d)

    # reporting and the setting's rules

    def test_refused_import_frees_its_hulls_once(self):
        # A conflicting import is refused after its world was built: the
        # built world's hulls are freed with it, and must not be freed
        # again with the request (a double free killed the daemon).
        d = self.start()
        self.ok(d, "PUT", "/v1/worlds/a", {}, status=(201,))
        tetra = {"type": "convex", "points": [[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]]}
        body = {"settings": {"durability": "none"},
                "shapes": [body_item("c%d" % k, tetra) for k in range(8)]}
        for _ in range(20):
            r = self.refused(d, "PUT", "/v1/worlds/a", body, 409)
            self.assertEqual(r.json["pointer"], "/settings/durability", r.describe())
        body["settings"]["durability"] = "full"
        r = self.ok(d, "PUT", "/v1/worlds/a", body, status=(200,))
        self.assertEqual(d.request("GET", "/v1/worlds/a").json["shapes"], 8)
        self.assertEqual(d.request("GET", "/healthz").status, 200)

    def test_durability_is_reported_and_fixed(self):
        d = self.start()
        for world, mode in (("a", None), ("b", "full"), ("c", "shapes"), ("d", "none")):
            body = {"skin": 0.1} if mode is None else {"skin": 0.1, "durability": mode}
            r = self.ok(d, "PUT", "/v1/worlds/%s" % world, body, status=(201,))
            self.assertEqual(r.json["settings"]["durability"], mode or "full", r.describe())
        want = {"a": "full", "b": "full", "c": "shapes", "d": "none"}
        self.assertEqual({n: w["durability"] for n, w in self.worlds(d).items()}, want)
        for world, mode in want.items():
            r = d.request("GET", "/v1/worlds/%s" % world)
            self.assertEqual(r.json["settings"]["durability"], mode, r.describe())
            self.assertEqual(d.request("GET", "/v1/worlds/%s/export" % world).json["settings"]["durability"], mode)
            # omitted or the same: 200, kept; another: 409 at its pointer, nothing changed
            self.ok(d, "PUT", "/v1/worlds/%s" % world, {"skin": 0.3}, status=(200,))
            self.ok(d, "PUT", "/v1/worlds/%s" % world, {"durability": mode, "skin": 0.2}, status=(200,))
            for other in set(want.values()) - {mode}:
                r = self.refused(d, "PUT", "/v1/worlds/%s" % world, {"durability": other, "skin": 3}, 409)
                self.assertEqual(r.json["pointer"], "/durability", r.describe())
                self.assertIn("DELETE", r.json["detail"])
                r = self.refused(d, "PUT", "/v1/worlds/%s" % world,
                                 {"settings": {"durability": other}, "shapes": [body_item("z", sphere(1))]}, 409)
                self.assertEqual(r.json["pointer"], "/settings/durability", r.describe())
            r = d.request("GET", "/v1/worlds/%s" % world)
            self.assertEqual((r.json["settings"]["durability"], r.json["settings"]["skin"], r.json["shapes"]),
                             (mode, 0.2, 0))
        # the export carries it: an import makes a world of the same durability
        self.ok(d, "PUT", "/v1/worlds/d/shapes/s", {"shape": sphere(1)})
        exported = d.request("GET", "/v1/worlds/d/export").json
        r = self.ok(d, "PUT", "/v1/worlds/d2", exported, status=(201,))
        self.assertEqual(r.json["settings"]["durability"], "none")
        self.assertEqual(self.export(d, "d2"), self.export(d, "d"))
        # the way to change it: DELETE, then PUT the export with another one
        exported["settings"]["durability"] = "full"
        self.ok(d, "DELETE", "/v1/worlds/d", status=(204,))
        self.ok(d, "PUT", "/v1/worlds/d", exported, status=(201,))
        self.assertEqual(self.worlds(d)["d"]["durability"], "full")
        self.crash(d)
        d = self.start()
        self.assertEqual({n: w["durability"] for n, w in self.worlds(d).items()},
                         {"a": "full", "b": "full", "c": "shapes", "d": "full"})
        self.assertEqual(self.shape_x(d, "d"), {"s": 0})
        # bad values: 400 at the pointer, the allowed values in the detail
        for body, pointer in (({"durability": "ephemeral"}, "/durability"), ({"durability": 1}, "/durability"),
                              ({"settings": {"durability": "None"}, "shapes": []}, "/settings/durability")):
            r = self.refused(d, "PUT", "/v1/worlds/x", body, 400)
            self.assertEqual(r.json["pointer"], pointer, r.describe())
            self.assertIn("full, shapes, none", r.json["detail"])
        self.assertEqual(d.request("GET", "/v1/worlds/x").status, 404)
        self.stop(d)


if __name__ == "__main__":
    unittest.main()
