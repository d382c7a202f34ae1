"""401: with a token every endpoint but /healthz and /readyz needs
"Authorization: Bearer <token>"; without one no header is needed."""

from harness import Daemon, DaemonCase, check_problem_body
from wire import ENDPOINTS, OPEN_PATHS, fill

TOKEN = "s3cret-T0ken"


class TokenOn(DaemonCase):

    FLAGS = ("--token", TOKEN)

    def test_every_endpoint_needs_the_token(self):
        for method, template, takes_body in ENDPOINTS:
            path = fill(template)
            body = {} if takes_body else None
            for auth in (None, "Bearer wrong", "Bearer " + TOKEN + "x", "Bearer", "Basic " + TOKEN, TOKEN,
                         "bearer  " + TOKEN + " extra"):
                with self.subTest(method=method, path=path, auth=auth):
                    headers = {"Authorization": auth} if auth is not None else {}
                    r = self.req(method, path, body, headers=headers)
                    if template in OPEN_PATHS:
                        self.assertEqual(r.status, OPEN_PATHS[template],
                                         "%s %s is open: %s" % (method, path, r.describe()))
                    else:
                        self.assertProblem(r, 401, "unauthorized", context="%s %s with %r" % (method, path, auth))

    def test_the_right_token_passes(self):
        h = {"Authorization": "Bearer " + TOKEN}
        self.assertEqual(self.req("GET", "/v1/worlds", headers=h).status, 200)
        self.assertEqual(self.req("PUT", "/v1/worlds/a", {}, headers=h).status, 201)
        self.assertEqual(self.req("GET", "/metrics", headers=h).status, 200)
        # a rejected request did nothing: the unauthenticated PUT of /v1/worlds/w above created nothing
        names = [w["name"] for w in self.req("GET", "/v1/worlds", headers=h).json["worlds"]]
        self.assertEqual(names, ["a"])

    def test_unknown_path_is_not_revealed_without_the_token(self):
        self.assertProblem(self.req("GET", "/v1/nope"), 401, "unauthorized")
        self.assertProblem(self.req("DELETE", "/v1/pair"), 401, "unauthorized", context="no 405 before auth")
        self.assertEqual(self.req("GET", "/v1/nope", headers={"Authorization": "Bearer " + TOKEN}).status, 404)


class TokenOff(DaemonCase):

    def test_no_header_needed(self):
        for method, template, takes_body in ENDPOINTS:
            if method not in ("GET",) or "{" in template:
                continue
            with self.subTest(path=template):
                r = self.req(method, template)
                self.assertEqual(r.status, OPEN_PATHS.get(template, 200), r.describe())
        self.assertEqual(self.req("PUT", "/v1/worlds/w", {}).status, 201)
        # a stray header is ignored when no token is configured
        self.assertEqual(self.req("GET", "/v1/worlds/w", headers={"Authorization": "Bearer x"}).status, 200)


class TokenFromEnvironment(DaemonCase):
    """COLLISIOND_TOKEN sets the token; the flag wins over it."""

    ENV = {"COLLISIOND_TOKEN": "from-env"}

    def test_environment_token(self):
        self.assertProblem(self.req("GET", "/v1/worlds"), 401, "unauthorized")
        self.assertEqual(self.req("GET", "/v1/worlds", headers={"Authorization": "Bearer from-env"}).status, 200)

    def test_flag_wins_over_environment(self):
        d = Daemon(("--token", "from-flag"), {"COLLISIOND_TOKEN": "from-env"})
        try:
            d.start()
            r = d.request("GET", "/v1/worlds", headers={"Authorization": "Bearer from-env"})
            self.assertEqual(r.status, 401, r.describe())
            check_problem_body(self, r.json, 401, "unauthorized", None)
            r = d.request("GET", "/v1/worlds", headers={"Authorization": "Bearer from-flag"})
            self.assertEqual(r.status, 200, r.describe())
            self.assertEqual(d.stop(), 0, d.log_tail())
        finally:
            d.cleanup()
