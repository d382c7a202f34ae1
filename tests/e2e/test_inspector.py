"""The web inspector's routes (API.md section 7, docs/INSPECTOR.md): the
page and its files are compiled in, served with their types and the
security headers, open without the token; anything else under /inspect/
is a 404 problem. The page itself is tested in a browser by
make inspector-test."""

import os
import re
import urllib.parse

from harness import DaemonCase

REPO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
WWW = os.path.join(REPO, "inspector", "www")
THREE = "/usr/share/javascript/three/build/three.min.js"
TOKEN = "inspect-token"

TYPES = {".html": "text/html", ".js": "text/javascript", ".css": "text/css", ".svg": "image/svg+xml"}


def csp_directives(value):
    return {d.split()[0]: d.split()[1:] for d in (x.strip() for x in value.split(";")) if d}


class Files(DaemonCase):

    def check_asset(self, path, want_bytes, want_type):
        r = self.req("GET", path)
        self.assertEqual(r.status, 200, r.describe())
        self.assertEqual(r.content_type.split(";")[0], want_type, path)
        self.assertEqual(r.raw, want_bytes, "%s is not the file it was built from (rebuild?)" % path)
        self.assertEqual(r.headers.get("x-content-type-options"), "nosniff", path)
        self.assertEqual(r.headers.get("cache-control"), "no-cache", path)
        csp = csp_directives(r.headers.get("content-security-policy", ""))
        self.assertEqual(csp.get("default-src"), ["'none'"], path)
        for d in ("script-src", "style-src", "connect-src", "img-src"):
            self.assertEqual(csp.get(d), ["'self'"], "%s %s" % (path, d))
        self.assertEqual(csp.get("frame-ancestors"), ["'none'"], path)
        self.assertNotIn("access-control-allow-origin", r.headers, "no cross-origin access is opened")
        return r

    def test_every_file_of_the_page_is_served_as_written(self):
        names = sorted(os.listdir(WWW))
        self.assertIn("index.html", names)
        for name in names:
            with self.subTest(name=name), open(os.path.join(WWW, name), "rb") as f:
                self.check_asset("/inspect/" + name, f.read(), TYPES[os.path.splitext(name)[1]])
        with open(os.path.join(WWW, "index.html"), "rb") as f:
            self.check_asset("/inspect/", f.read(), "text/html")

    def test_three_js_is_debians(self):
        with open(THREE, "rb") as f:
            self.check_asset("/inspect/three.min.js", f.read(), "text/javascript")

    def test_the_page_has_no_inline_script_and_loads_only_served_files(self):
        html = self.req("GET", "/inspect/").raw.decode()
        self.assertNotRegex(html, r"<script(?![^>]*\bsrc=)[^>]*>", "an inline script would break the CSP")
        self.assertNotRegex(html, r"\son\w+=", "inline handlers would break the CSP")
        for ref in re.findall(r'(?:src|href)="([^"]+)"', html):
            with self.subTest(ref=ref):
                self.assertEqual(self.req("GET", "/inspect/" + ref).status, 200, ref)

    def test_redirect_without_the_slash(self):
        r = self.req("GET", "/inspect")
        self.assertEqual(r.status, 301, r.describe())
        self.assertEqual(urllib.parse.urljoin("http://h/inspect", r.headers.get("location", "")), "http://h/inspect/")

    def test_unknown_file_is_a_404_problem(self):
        for path in ("/inspect/nope.js", "/inspect/index.htm", "/inspect/INDEX.HTML"):
            with self.subTest(path=path):
                self.assertProblem(self.req("GET", path), 404, "not-found")
        self.assertProblem(self.req("GET", "/inspect/a/b"), 404, "no-route")
        # A file name keeps no id rule: a name no id could be is no file either.
        for path in ("/inspect/..%2Fv1%2Fworlds", "/inspect/a%", "/inspect/bad!name", "/inspect/" + "x" * 65,
                     "/inspect/a%00b", "/inspect/%C3%A9"):
            with self.subTest(path=path):
                self.assertProblem(self.req("GET", path), 404, "not-found")

    def test_get_only(self):
        for path in ("/inspect", "/inspect/", "/inspect/index.html"):
            for method in ("POST", "PUT", "DELETE"):
                with self.subTest(method=method, path=path):
                    r = self.req(method, path)
                    self.assertProblem(r, 405, "method-not-allowed")
                    self.assertEqual(r.headers.get("allow"), "GET, HEAD")


class FilesWithToken(DaemonCase):
    FLAGS = ("--token", TOKEN)

    def test_open_without_the_token_while_the_api_is_not(self):
        for path, status in (("/inspect", 301), ("/inspect/", 200), ("/inspect/inspector.js", 200),
                             ("/inspect/nope.js", 404), ("/inspect/bad!name", 404), ("/inspect/a%25", 404)):
            with self.subTest(path=path):
                self.assertEqual(self.req("GET", path).status, status)
        self.assertProblem(self.req("GET", "/v1/worlds"), 401, "unauthorized")
        self.assertProblem(self.req("GET", "/inspect/a/b"), 401, "unauthorized", context="unknown paths stay hidden")
