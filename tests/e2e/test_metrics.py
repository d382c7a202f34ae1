"""GET /metrics parsed against the Prometheus text exposition rules (our
own parser), request and core counters that move with the requests made,
world gauges, and the fallback log."""

import math
import re

from harness import DaemonCase
from wire import body_item, pair, posed, sphere

NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
LABEL = re.compile(r'\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"((?:[^"\\\n]|\\[\\"n])*)"\s*(,|(?=}))')
TYPES = {"counter", "gauge", "histogram", "summary", "untyped"}
HIST_SUFFIXES = ("_bucket", "_sum", "_count")


class ExpositionError(AssertionError):
    pass


def parse_value(text, where):
    if text in ("+Inf", "Inf"):
        return math.inf
    if text == "-Inf":
        return -math.inf
    if text == "NaN":
        return math.nan
    try:
        return float(text)
    except ValueError:
        raise ExpositionError("%s: bad value %r" % (where, text))


def unescape(v):
    return re.sub(r"\\(.)", lambda m: {"n": "\n"}.get(m.group(1), m.group(1)), v)


def parse_exposition(text):
    """Families {name: {"type", "help", "samples": [(name, labels, value)]}}
    of a text exposition (format 0.0.4); raises ExpositionError at the
    first rule broken."""
    if text and not text.endswith("\n"):
        raise ExpositionError("the exposition must end with a newline")
    families = {}
    order = []          # family of each sample group, in order of appearance
    seen_samples = set()

    def family_of(sample):
        for suffix in HIST_SUFFIXES:
            base = sample[:-len(suffix)] if sample.endswith(suffix) else None
            if base and base in families and families[base]["type"] in ("histogram", "summary"):
                return base
        return sample

    for n, line in enumerate(text.split("\n")[:-1], 1):
        where = "line %d %r" % (n, line)
        if not line.strip():
            continue
        if line.startswith("#"):
            parts = line.split(None, 3)
            if len(parts) >= 2 and parts[1] in ("HELP", "TYPE"):
                if len(parts) < 3 or not NAME.fullmatch(parts[2]):
                    raise ExpositionError("%s: bad metric name" % where)
                fam = families.setdefault(parts[2], {"type": None, "help": None, "samples": []})
                if fam["samples"]:
                    raise ExpositionError("%s: %s after the family's samples" % (where, parts[1]))
                key = parts[1].lower()
                if fam[key] is not None:
                    raise ExpositionError("%s: second %s for %s" % (where, parts[1], parts[2]))
                if key == "type":
                    if len(parts) != 4 or parts[3] not in TYPES:
                        raise ExpositionError("%s: bad type" % where)
                    fam["type"] = parts[3]
                else:
                    fam["help"] = parts[3] if len(parts) == 4 else ""
            continue
        m = NAME.match(line)
        if not m:
            raise ExpositionError("%s: no metric name" % where)
        name, rest = m.group(0), line[m.end():]
        labels = {}
        if rest.startswith("{"):
            rest = rest[1:]
            while not rest.lstrip().startswith("}"):
                lm = LABEL.match(rest)
                if not lm:
                    raise ExpositionError("%s: bad label syntax" % where)
                if lm.group(1) in labels:
                    raise ExpositionError("%s: label %s twice" % (where, lm.group(1)))
                labels[lm.group(1)] = unescape(lm.group(2))
                rest = rest[lm.end():]
            rest = rest.lstrip()[1:]
        fields = rest.split()
        if not rest.startswith(" ") or len(fields) not in (1, 2):
            raise ExpositionError("%s: expected ' value [timestamp]'" % where)
        value = parse_value(fields[0], where)
        fam_name = family_of(name)
        fam = families.get(fam_name)
        if fam is None or fam["type"] is None:
            raise ExpositionError("%s: sample before (or without) its family's TYPE line" % where)
        if order and order[-1] != fam_name and fam["samples"]:
            raise ExpositionError("%s: samples of %s are not one group" % (where, fam_name))
        if not order or order[-1] != fam_name:
            order.append(fam_name)
        key = (name, tuple(sorted(labels.items())))
        if key in seen_samples:
            raise ExpositionError("%s: duplicate sample" % where)
        seen_samples.add(key)
        fam["samples"].append((name, labels, value))
    return families


def check_histograms(families):
    """Buckets cumulative with increasing le, +Inf last and equal to _count, _sum present."""
    for fname, fam in families.items():
        if fam["type"] != "histogram":
            continue
        series = {}
        for name, labels, value in fam["samples"]:
            rest = tuple(sorted((k, v) for k, v in labels.items() if k != "le"))
            s = series.setdefault(rest, {"buckets": [], "sum": None, "count": None})
            if name == fname + "_bucket":
                if "le" not in labels:
                    raise ExpositionError("%s%s: bucket without le" % (fname, dict(rest)))
                s["buckets"].append((parse_value(labels["le"], fname), value))
            elif name == fname + "_sum":
                s["sum"] = value
            elif name == fname + "_count":
                s["count"] = value
            else:
                raise ExpositionError("%s: stray sample %s in a histogram" % (fname, name))
        for rest, s in series.items():
            what = "%s%s" % (fname, dict(rest))
            les = [le for le, _ in s["buckets"]]
            counts = [c for _, c in s["buckets"]]
            if not les or les[-1] != math.inf:
                raise ExpositionError("%s: the last bucket must be le=\"+Inf\"" % what)
            if les != sorted(les) or len(set(les)) != len(les):
                raise ExpositionError("%s: bucket bounds not increasing: %s" % (what, les))
            if any(b < a for a, b in zip(counts, counts[1:])):
                raise ExpositionError("%s: buckets not cumulative: %s" % (what, counts))
            if s["count"] is None or s["sum"] is None:
                raise ExpositionError("%s: _count or _sum missing" % what)
            if counts[-1] != s["count"]:
                raise ExpositionError("%s: +Inf bucket %g != _count %g" % (what, counts[-1], s["count"]))


def check_conventions(families):
    for fname, fam in families.items():
        if not fname.startswith(("collisiond_", "process_")):
            raise ExpositionError("%s: every name must start with collisiond_ (or be a standard process_ one)" % fname)
        if fam["type"] is None:
            raise ExpositionError("%s: HELP without TYPE" % fname)
        if fam["type"] == "counter":
            if not fname.endswith("_total"):
                raise ExpositionError("%s: a counter's name must end in _total" % fname)
            for name, labels, value in fam["samples"]:
                if not (value >= 0):
                    raise ExpositionError("%s%s: negative counter %g" % (name, labels, value))


class Metrics(DaemonCase):

    def scrape(self):
        r = self.daemon.request("GET", "/metrics")
        self.assertEqual(r.status, 200, r.describe())
        self.assertTrue(r.content_type.startswith("text/plain"), r.content_type)
        self.assertIn("version=0.0.4", r.content_type)
        try:
            fams = parse_exposition(r.raw.decode("utf-8"))
            check_histograms(fams)
            check_conventions(fams)
        except ExpositionError as e:
            self.fail("GET /metrics breaks the exposition rules: %s" % e)
        return fams

    def total(self, fams, predicate, types=("counter",)):
        """Sum of the samples (of families of the given types) for which
        predicate(sample name, labels) holds."""
        return sum(v for f in fams.values() if f["type"] in types
                   for n, labels, v in f["samples"] if predicate(n, labels))

    def moved(self, before, after, predicate, types=("counter",)):
        """How much those samples grew between two scrapes."""
        return self.total(after, predicate, types) - self.total(before, predicate, types)

    def test_parser_rejects_broken_expositions(self):
        bad = [
            "collisiond_x_total 1\n",                                                    # no TYPE
            "# TYPE collisiond_x_total counter\n# TYPE collisiond_x_total counter\ncollisiond_x_total 1\n",
            "# TYPE collisiond_x_total counter\ncollisiond_x_total 1\n# TYPE collisiond_x_total counter\n",
            "# TYPE collisiond_h histogram\ncollisiond_h_bucket{le=\"1\"} 2\ncollisiond_h_bucket{le=\"+Inf\"} 1\n"
            "collisiond_h_sum 1\ncollisiond_h_count 1\n",
            "# TYPE collisiond_h histogram\ncollisiond_h_bucket{le=\"1\"} 1\ncollisiond_h_bucket{le=\"+Inf\"} 2\n"
            "collisiond_h_sum 1\ncollisiond_h_count 3\n",
            "# TYPE collisiond_h histogram\ncollisiond_h_bucket{le=\"1\"} 1\ncollisiond_h_sum 1\n"
            "collisiond_h_count 1\n",
            "# TYPE collisiond_x counter\ncollisiond_x 1\n",
            "# TYPE other_total counter\nother_total 1\n",
            "# TYPE collisiond_a gauge\ncollisiond_a{x=\"1\"} 1\n# TYPE collisiond_b gauge\ncollisiond_b 1\n"
            "collisiond_a{x=\"2\"} 1\n",
            "# TYPE collisiond_a gauge\ncollisiond_a{x=1} 1\n",
            "# TYPE collisiond_a gauge\ncollisiond_a 1",
        ]
        for text in bad:
            with self.subTest(text=text):
                with self.assertRaises(ExpositionError):
                    fams = parse_exposition(text)
                    check_histograms(fams)
                    check_conventions(fams)
        good = ('# HELP collisiond_h A "quoted" help.\n# TYPE collisiond_h histogram\n'
                'collisiond_h_bucket{route="/a\\\\b",le="0.5"} 1\ncollisiond_h_bucket{route="/a\\\\b",le="+Inf"} 2\n'
                'collisiond_h_sum{route="/a\\\\b"} 0.7\ncollisiond_h_count{route="/a\\\\b"} 2\n')
        fams = parse_exposition(good)
        check_histograms(fams)
        self.assertEqual(fams["collisiond_h"]["samples"][0][1], {"route": "/a\\b", "le": "0.5"})

    def test_exposition_is_valid_and_complete(self):
        self.daemon.request("POST", "/v1/pair", pair(posed(sphere(1)), posed(sphere(1), (1, 0, 0))))
        fams = self.scrape()
        names = " ".join(fams)
        for needle in ("requests_total", "build_info", "gjk", "epa", "fallback", "zero_normal", "skipped",
                       "world"):
            self.assertIn(needle, names, "no metric family about %r in %s" % (needle, sorted(fams)))
        hists = [f for f, fam in fams.items() if fam["type"] == "histogram"
                 and any("route" in labels for _, labels, _ in fam["samples"])]
        self.assertTrue(hists, "no latency histogram by route")

    def test_requests_are_counted(self):
        def count(route, status):
            return lambda name, labels: route in labels.values() and status in labels.values()

        def hist_count(route):
            return lambda name, labels: name.endswith("_count") and route in labels.values()

        before = self.scrape()
        good = pair(posed(sphere(1)), posed(sphere(1), (1, 0, 0)))
        bad = pair(posed(sphere(-1)), posed(sphere(1)))
        for _ in range(3):
            self.assertEqual(self.daemon.request("POST", "/v1/pair", good).status, 200)
        for _ in range(2):
            self.assertEqual(self.daemon.request("POST", "/v1/pair", bad).status, 400)
        s = self.daemon.stream()
        s.send({"id": 1, "method": "POST", "path": "/v1/pair", "body": good})
        self.assertEqual(s.read_line()["status"], 200)
        s.close()
        after = self.scrape()
        self.assertEqual(self.moved(before, after, count("/v1/pair", "200")), 4,
                         "3 HTTP and 1 stream request to /v1/pair with 200")
        self.assertEqual(self.moved(before, after, count("/v1/pair", "400")), 2)
        self.assertEqual(self.moved(before, after, hist_count("/v1/pair"), ("histogram",)), 6,
                         "the latency histogram should count every /v1/pair request")

    def test_algorithm_counters(self):
        def tests(alg):
            return lambda name, labels: alg in labels.values()

        before = self.scrape()
        pairs = [pair(posed(sphere(1)), posed(sphere(1), (1, 0, 0)))] * 3 + \
                [pair(posed({"type": "box", "half_extents": [1, 1, 1]}),
                      posed({"type": "box", "half_extents": [1, 1, 1]}, (1, 0, 0)))] * 2
        self.assertEqual(self.daemon.request("POST", "/v1/pairs", {"pairs": pairs}).status, 200)
        after = self.scrape()
        self.assertEqual(self.moved(before, after, tests("sphere_sphere")), 3)
        self.assertEqual(self.moved(before, after, tests("sat_box_box")), 2)
        # aligned boxes: 3 of the 9 cross axes are degenerate in each test
        self.assertEqual(self.moved(before, after, lambda name, labels: "skipped" in name), 6)

    def test_world_gauges(self):
        self.daemon.request("PUT", "/v1/worlds/gauged", {"settings": {"skin": 0}, "shapes": [
            body_item("a", sphere(1)), body_item("b", sphere(1), (1, 0, 0)), body_item("c", sphere(1), (9, 0, 0))]})
        fams = self.scrape()
        values = [v for f in fams.values() if f["type"] == "gauge" for n, l, v in f["samples"]
                  if l.get("world") == "gauged"]
        self.assertIn(3, values, "no gauge with the world's 3 shapes")
        self.assertIn(1, values, "no gauge with the world's 1 broadphase pair")
        self.daemon.request("DELETE", "/v1/worlds/gauged")
        fams = self.scrape()
        self.assertFalse([1 for f in fams.values() for n, l, v in f["samples"] if l.get("world") == "gauged"],
                         "a deleted world keeps its gauges")

    def test_fallback_log(self):
        # a GJK capped at 1 iteration cannot decide two overlapping hulls:
        # the pair falls back and is logged. Icosahedra (20 faces): small
        # solid hulls take the SAT, which needs no GJK when they overlap
        g = (1 + 5 ** 0.5) / 2
        ico = [[0, s1, s2 * g] for s1 in (-1, 1) for s2 in (-1, 1)] + \
              [[s1, s2 * g, 0] for s1 in (-1, 1) for s2 in (-1, 1)] + \
              [[s2 * g, 0, s1] for s1 in (-1, 1) for s2 in (-1, 1)]
        hull = {"type": "convex", "points": ico}
        self.assertEqual(self.daemon.request("PUT", "/v1/worlds/fb", {"settings": {"skin": 0, "gjk_max_iterations": 1},
                                             "shapes": [body_item("h1", hull), body_item("h2", hull, (0.5, 0.3, 0.2))]}
                                             ).status, 201)
        before = self.scrape()
        for _ in range(3):
            self.ok("POST", "/v1/worlds/fb/contacts", {}, headers={"X-Request-Id": "fb-req"})
        after = self.scrape()
        self.assertGreaterEqual(self.moved(before, after, lambda name, labels: "gjk" in name and "limit" in name), 1)
        self.assertGreaterEqual(
            self.moved(before, after, lambda name, labels: labels.get("reason") == "gjk_iteration_limit"), 1)

        log = self.ok("GET", "/metrics/fallbacks?limit=5")
        self.assertEqual(list(log), ["fallbacks"])
        recs = [r for r in log["fallbacks"] if r.get("world") == "fb"]
        self.assertTrue(recs, "no fallback record for world fb: %s" % log)
        r = recs[0]
        for k in ("time", "world", "a", "b", "shapes", "iterations", "reason", "action"):
            self.assertIn(k, r)
        self.assertEqual((r["a"], r["b"]), ("h1", "h2"))
        self.assertEqual(r["shapes"], ["convex", "convex"])
        self.assertEqual(r["reason"], "gjk_iteration_limit")
        self.assertIn(r["action"], ("previous_normal", "dropped"))
        self.assertLessEqual(r["iterations"], 1)
        times = [x["time"] for x in log["fallbacks"]]
        self.assertEqual(times, sorted(times, reverse=True), "records must be newest first")
        self.assertLessEqual(len(self.ok("GET", "/metrics/fallbacks?limit=1")["fallbacks"]), 1)
        r = self.daemon.request("GET", "/metrics/fallbacks?limit=0")
        if r.status == 200:
            self.assertEqual(r.json, {"fallbacks": []})
        else:
            self.assertProblem(r, 400, context="limit=0")
        self.assertIsInstance(self.ok("GET", "/metrics/fallbacks")["fallbacks"], list)
        r = self.daemon.request("GET", "/metrics/fallbacks?limit=lots")
        self.assertProblem(r, 400, context="limit=lots")

    def test_sweep_fallback_log(self):
        # Two coplanar flat boxes overlapping at the start: EPA has no
        # direction to give, so the hit has no normal, and the sweep counts
        # it and logs it like a contact would be.
        flat = {"type": "box", "half_extents": [1, 1, 0]}
        self.assertEqual(self.daemon.request("PUT", "/v1/worlds/fbs", {"shapes": [body_item("flat", flat)]}).status, 201)
        before = self.scrape()
        hit = self.ok("POST", "/v1/worlds/fbs/sweep", {"shape": flat, "pose": {"position": [0.5, 0.5, 0]},
                                                        "translation": [1, 0, 0]},
                      headers={"X-Request-Id": "sweep-fb"})["hit"]
        self.assertEqual((hit["id"], hit["time"]), ("flat", 0))
        self.assertNotIn("normal", hit)
        after = self.scrape()
        self.assertEqual(self.moved(before, after, lambda name, labels: labels.get("action") == "dropped"), 1)
        self.assertGreaterEqual(self.moved(before, after, lambda name, labels: name.startswith("collisiond_gjk")), 1)
        recs = [r for r in self.ok("GET", "/metrics/fallbacks?limit=50")["fallbacks"] if r.get("world") == "fbs"]
        self.assertEqual(len(recs), 1, recs)
        r = recs[0]
        self.assertEqual((r["a"], r["b"], r["shapes"], r["action"], r["request_id"]),
                         (None, "flat", ["box", "box"], "dropped", "sweep-fb"))
        self.assertTrue(r["reason"].startswith("epa_"), r)

    def test_probes(self):
        for path in ("/healthz", "/readyz"):
            r = self.daemon.request("GET", path)
            self.assertEqual(r.status, 200, r.describe())
