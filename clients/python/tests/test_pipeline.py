"""Pipelines against the real daemon, in both encodings: one write, replies
in order, each call seeing the ones before it, and errors in their place."""
from support import Daemon, per_encoding
from collisiond_client import BadRequest, NotFound, OverLimit, Unauthorized, geometry as g

D = None
TOKEN = "s3cret-token"


def setUpModule():
    global D
    D = Daemon("--max-rays", "10", "--token", TOKEN)


def tearDownModule():
    status = D.stop()
    if status != 0:
        raise AssertionError("collisiond exited with %s: %s" % (status, D.log_text()))


class Pipelines:
    ENCODING = None

    def setUp(self):
        self.c = D.client(self.ENCODING, token=TOKEN)
        self.w = "pipe-%s-%s" % (self.ENCODING, self._testMethodName)
        self.addCleanup(self.c.close)
        self.c.create_world(self.w)

    def test_each_call_sees_the_ones_before(self):
        # 40 puts, each followed by a read of the world: the counts climb one by one.
        p = self.c.pipeline()
        counts = []
        for i in range(40):
            p.put_shape(self.w, "s%d" % i, g.sphere(0.5), g.pose((3.0 * i, 0, 0)))
            counts.append(p.get_world(self.w))
        self.assertEqual(len(p), 80)
        out = p.execute()
        self.assertEqual(len(out), 80)
        self.assertEqual([r.result()["shapes"] for r in counts], list(range(1, 41)))
        self.assertEqual([x["id"] for x in out[0::2]], ["s%d" % i for i in range(40)])
        self.assertEqual(len(p), 0)  # the queue is emptied

    def test_tick_move_then_queries(self):
        # The game tick: a move batch, then contacts and rays that must see it.
        self.c.batch(self.w, upsert=[{"id": "a", "shape": g.sphere(1)},
                                     {"id": "b", "shape": g.sphere(1), "pose": g.pose((5, 0, 0))}])
        with self.c.pipeline() as p:
            moved = p.move(self.w, ["b"], [(1.5, 0, 0)])
            contacts = p.contacts(self.w, dt=1 / 60)
            rays = p.raycast(self.w, [g.ray((1.5, 10, 0), (0, -1, 0))])
        self.assertEqual(moved.result()["moved"], 1)
        self.assertEqual([(x["a"], x["b"]) for x in contacts.result()["pairs"]], [("a", "b")])
        self.assertAlmostEqual(contacts.result()["pairs"][0]["depth"], 0.5)
        hit = rays.result()["hits"][0]
        self.assertEqual(hit["id"], "b")
        self.assertAlmostEqual(hit["distance"], 9.0)

    def test_errors_stand_in_their_place(self):
        p = self.c.pipeline()
        first = p.put_shape(self.w, "ok", g.sphere(1))
        bad = p.batch(self.w, move=[{"id": "ok", "pose": g.pose((1, 0, 0))}, {"id": "ghost", "pose": g.pose()}])
        over = p.raycast(self.w, [g.ray((0, 0, 0), (1, 0, 0))] * 11)
        missing = p.get_shape(self.w, "nothing")
        after = p.get_shape(self.w, "ok")
        with self.assertRaises(BadRequest) as e:
            p.execute()
        self.assertIs(e.exception, bad.error)  # the first error, raised once every reply is in
        self.assertEqual((e.exception.status, e.exception.slug, e.exception.pointer),
                         (400, "invalid-value", "/move/1"))
        self.assertTrue(e.exception.request_id)
        self.assertIsInstance(over.error, OverLimit)
        self.assertEqual((over.error.status, over.error.pointer), (422, "/rays"))
        self.assertIsInstance(missing.error, NotFound)
        # A rejected batch changes nothing: "ok" did not move.
        self.assertEqual(first.result()["id"], "ok")
        self.assertEqual(after.result()["pose"]["position"], [0, 0, 0])

    def test_errors_without_raising(self):
        p = self.c.pipeline()
        p.health()
        p.put_shape(self.w, "neg", {"type": "sphere", "radius": -1})
        out = p.execute(raise_errors=False)
        self.assertEqual(out[0], {"status": "ok"})
        self.assertIsInstance(out[1], BadRequest)
        self.assertEqual(out[1].pointer, "/shape/radius")

    def test_a_reply_is_not_there_before_execute(self):
        p = self.c.pipeline()
        r = p.get_world(self.w)
        self.assertFalse(r.done)
        with self.assertRaises(RuntimeError):
            r.result()
        p.execute()
        self.assertEqual(r.result()["name"], self.w)
        self.assertEqual(self.c.pipeline().execute(), [])

    def test_token(self):
        anonymous = D.client(self.ENCODING)
        self.addCleanup(anonymous.close)
        self.assertEqual(anonymous.health(), {"status": "ok"})  # no token needed
        with self.assertRaises(Unauthorized) as e:
            anonymous.get_world(self.w)
        self.assertEqual((e.exception.status, e.exception.slug), (401, "unauthorized"))
        wrong = D.client(self.ENCODING, token="wrong")
        self.addCleanup(wrong.close)
        with self.assertRaises(Unauthorized):
            wrong.list_worlds()

    def test_request_id(self):
        p = self.c.pipeline()
        tagged = p.request("GET", "/v1/worlds/" + self.w, request_id="tick-42")
        plain = p.get_world(self.w)
        p.execute()
        self.assertEqual(tagged.request_id, "tick-42")
        self.assertTrue(plain.request_id and plain.request_id != "tick-42")


per_encoding(globals(), Pipelines)
