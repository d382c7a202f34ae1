"""The version has one home, the VERSION file at the repository's root:
--version, the collisiond_build_info gauge, the served OpenAPI document,
the CHANGELOG's newest release and the Kubernetes image tag all say what
it says (docs/RELEASING.md)."""

import os
import re
import subprocess

import harness
from harness import DaemonCase

REPO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
# Semantic Versioning 2.0.0's grammar, without build metadata.
SEMVER = re.compile(r"(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z.-]+)?")


def repo_text(name):
    with open(os.path.join(REPO, name), encoding="utf-8") as f:
        return f.read()


VERSION = repo_text("VERSION").strip()


class Version(DaemonCase):
    FLAGS = ("--data-dir", "")

    def test_version_file_is_semver(self):
        self.assertRegex(VERSION, "^" + SEMVER.pattern + "$")
        self.assertEqual(repo_text("VERSION"), VERSION + "\n", "VERSION holds one line")

    def test_version_flag(self):
        r = subprocess.run([harness.DAEMON, "--version"], capture_output=True, timeout=10)
        self.assertEqual(r.returncode, 0)
        self.assertEqual(r.stdout.decode(), "collisiond %s\n" % VERSION)

    def test_build_info_gauge(self):
        text = self.req("GET", "/metrics").raw.decode()
        lines = [l for l in text.splitlines() if l.startswith("collisiond_build_info")]
        self.assertEqual(lines, ['collisiond_build_info{version="%s"} 1' % VERSION])

    def test_openapi_document(self):
        self.assertEqual(self.ok("GET", "/v1/openapi.json")["info"]["version"], VERSION)

    def test_changelog_newest_release(self):
        releases = re.findall(r"^## \[([^\]]+)\]", repo_text("CHANGELOG.md"), re.M)
        self.assertGreaterEqual(len(releases), 2, "CHANGELOG.md lists no releases")
        newest = next(r for r in releases if r != "Unreleased")
        self.assertEqual(newest, VERSION, "CHANGELOG.md's newest release")

    def test_kubernetes_image_tag(self):
        tags = re.findall(r"^\s*newTag:\s*(\S+)", repo_text("deploy/k8s/kustomization.yaml"), re.M)
        self.assertEqual(tags, [VERSION])
