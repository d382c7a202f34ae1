"""`pip install ./clients/python` works without the network (no build
isolation, no index) and gives the same module. Skipped where this Python
has no pip, setuptools or wheel to build with."""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

from support import HERE

SOURCE = os.path.dirname(HERE)


def _can_build():
    """Whether this interpreter, as pip's subprocess sees it (not the
    tests' own sys.path), has what building the package takes."""
    return subprocess.run([sys.executable, "-c", "import setuptools, wheel, pip"],
                          capture_output=True).returncode == 0


@unittest.skipUnless(_can_build(), "pip, setuptools and wheel are needed to build the package")
class Install(unittest.TestCase):
    def test_pip_install_without_the_network(self):
        with tempfile.TemporaryDirectory(prefix="pyclient-install-") as tmp:
            # A copy, so the build leaves nothing in the source tree.
            src = shutil.copytree(SOURCE, os.path.join(tmp, "src"), ignore=shutil.ignore_patterns(
                "tests", "__pycache__", "build", "*.egg-info"))
            target = os.path.join(tmp, "site")
            out = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-build-isolation", "--no-index",
                                  "--target", target, src], capture_output=True, text=True, timeout=300)
            self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
            code = "import collisiond_client as c; print(c.__file__, c.__version__, c.ShardRing(['a:1']).owner('w'))"
            got = subprocess.run([sys.executable, "-I", "-c", "import sys; sys.path.insert(0, %r); %s" % (target, code)],
                                 capture_output=True, text=True, timeout=60)
            self.assertEqual(got.returncode, 0, got.stderr)
            path, version, owner = got.stdout.split()
            self.assertTrue(path.startswith(target), path)
            self.assertEqual((version, owner), ("0.1.0", "a:1"))
