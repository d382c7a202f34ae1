"""Start-up: a listener that cannot be opened (exit status 3, one line
naming the address and the OS's reason), -h and the usage, byte sizes in
one form in --help, --token-file on both transports, and the order of the
start-up log lines (listening, then ready once recovered). The oracles
are the address and port the test itself occupies, os.strerror for the
reasons, the tokens the test wrote, and the shapes it created."""

import errno
import json
import os
import re
import socket
import subprocess
import tempfile
import time
import unittest

import harness
from harness import Daemon
from wire import body_item, sphere

START_EXIT_TIMEOUT = 20
LISTEN_FAILED = 3  # docs/API.md, "Exit status"
CONFIG_ERROR = 2
READY_TIMEOUT = 30


def run_daemon(*flags, env=None):
    """Runs the daemon expecting it to exit at start-up; returns (status, stderr)."""
    argv = [harness.DAEMON, "--data-dir", "", "--threads", "2"] + list(flags)
    r = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                       timeout=START_EXIT_TIMEOUT, env=dict(os.environ, **(env or {})))
    return r.returncode, r.stderr.decode("utf-8", "replace")


def log_messages(text):
    return [json.loads(line)["msg"] for line in text.splitlines() if line.strip()]


class ListenFailure(unittest.TestCase):
    """A port another socket holds, and an address this host does not have."""

    def setUp(self):
        self.holder = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.addCleanup(self.holder.close)
        self.holder.bind(("127.0.0.1", 0))
        self.holder.listen(1)
        self.port = self.holder.getsockname()[1]
        self.tmp = tempfile.TemporaryDirectory(prefix="collisiond-startup-")
        self.addCleanup(self.tmp.cleanup)
        self.port_file = os.path.join(self.tmp.name, "ports")

    def assert_cannot_listen(self, rc, err, where, listener, reason):
        self.assertEqual(rc, LISTEN_FAILED, err)
        lines = [m for m in log_messages(err) if m.startswith("cannot listen")]
        self.assertEqual(lines, ["cannot listen on %s (%s): %s" % (where, listener, reason)], err)
        self.assertFalse(os.path.exists(self.port_file), "a port file was written")

    def test_http_port_in_use(self):
        rc, err = run_daemon("--listen", "127.0.0.1:%d" % self.port, "--stream-listen", "127.0.0.1:0",
                             "--port-file", self.port_file)
        self.assert_cannot_listen(rc, err, "127.0.0.1:%d" % self.port, "http", os.strerror(errno.EADDRINUSE))
        self.assertNotIn("Failed to bind", err, "libmicrohttpd's message is not the operator's")

    def test_stream_port_in_use(self):
        rc, err = run_daemon("--listen", "127.0.0.1:0", "--stream-listen", "127.0.0.1:%d" % self.port,
                             "--port-file", self.port_file)
        self.assert_cannot_listen(rc, err, "127.0.0.1:%d" % self.port, "stream", os.strerror(errno.EADDRINUSE))

    def test_address_not_on_this_host(self):
        # 192.0.2.1 (TEST-NET-1, RFC 5737) is never a local address; binding sends nothing.
        rc, err = run_daemon("--listen", "192.0.2.1:%d" % self.port, "--stream-listen", "127.0.0.1:0",
                             "--port-file", self.port_file)
        self.assert_cannot_listen(rc, err, "192.0.2.1:%d" % self.port, "http", os.strerror(errno.EADDRNOTAVAIL))


class Help(unittest.TestCase):

    def run_ok(self, *args):
        r = subprocess.run([harness.DAEMON] + list(args), capture_output=True, timeout=10)
        self.assertEqual(r.returncode, 0, "%s: %s" % (args, r.stderr.decode()[-500:]))
        return r.stdout.decode()

    def test_short_form_is_the_long_one(self):
        self.assertEqual(self.run_ok("-h"), self.run_ok("--help"))
        self.assertEqual(self.run_ok("inspect", "-h"), self.run_ok("inspect", "--help"))
        self.assertEqual(self.run_ok("replay", "-h"), self.run_ok("replay", "--help"))
        self.assertIn("collisiond replay FILE", self.run_ok("replay", "-h"))

    def test_usage_lists_every_subcommand(self):
        usage = self.run_ok("--help").split("\n\n")[0].splitlines()
        self.assertEqual(len(usage), 3, usage)
        for line, form in zip(usage, ("collisiond [OPTIONS] ", "collisiond inspect ", "collisiond replay FILE ")):
            self.assertIn(form, line)
            self.assertGreater(len(line.split(form, 1)[1].strip()), 10, "no description: %r" % line)

    def test_byte_defaults_in_one_form(self):
        out = self.run_ok("--help")
        found = re.findall(r"^  --([a-z-]+) BYTES .*\n.*default '([^']*)'$", out, re.M)
        self.assertGreaterEqual(len(found), 4, out)
        for flag, default in found:
            with self.subTest(flag=flag):
                self.assertRegex(default, r"^[1-9][0-9]*[KMG]$")


class TokenFile(unittest.TestCase):

    TOKEN = "t0ken-from-a-file"

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="collisiond-token-")
        self.addCleanup(self.tmp.cleanup)
        self.path = os.path.join(self.tmp.name, "token")
        with open(self.path, "w") as f:
            f.write(self.TOKEN + " \n")

    def start(self, flags=(), env=None):
        d = Daemon(flags, env)
        self.addCleanup(d.cleanup)
        d.start()
        return d

    def check_both_transports(self, d):
        good = {"Authorization": "Bearer " + self.TOKEN}
        self.assertEqual(d.request("GET", "/v1/worlds", headers=good).status, 200)
        self.assertEqual(d.request("GET", "/v1/worlds").status, 401)
        # the file's trailing white space is not part of the token (else the
        # good header above is refused); a request's is OWS (RFC 9110, issue 25)
        self.assertEqual(d.request("GET", "/v1/worlds", headers={"Authorization": "Bearer " + self.TOKEN + " "})
                         .status, 200, "blanks after the token are not part of it")
        s = d.stream()
        try:
            s.send({"id": 1, "method": "GET", "path": "/v1/worlds", "headers": good},
                   {"id": 2, "method": "GET", "path": "/v1/worlds"})
            self.assertEqual([s.read_line()["status"] for _ in range(2)], [200, 401])
        finally:
            s.close()

    def test_flag(self):
        d = self.start(("--token-file", self.path))
        self.check_both_transports(d)
        with open("/proc/%d/cmdline" % d.proc.pid, "rb") as f:
            self.assertNotIn(self.TOKEN.encode(), f.read(), "the token is on the command line")
        self.assertEqual(d.stop(), 0, d.log_tail())

    def test_an_empty_token_unsets_nothing(self):
        # An empty --token after the file used to turn authentication off.
        for flags in [("--token-file", self.path, "--token="), ("--token=", "--token-file", self.path)]:
            with self.subTest(flags=flags):
                d = self.start(flags)
                self.check_both_transports(d)
                self.assertEqual(d.stop(), 0, d.log_tail())

    def test_a_flag_hides_the_other_variable(self):
        missing = os.path.join(self.tmp.name, "missing")
        d = self.start(("--token", self.TOKEN), env={"COLLISIOND_TOKEN_FILE": missing})
        self.check_both_transports(d)
        self.assertEqual(d.stop(), 0, d.log_tail())

    def test_environment(self):
        d = self.start(env={"COLLISIOND_TOKEN_FILE": self.path})
        self.check_both_transports(d)
        self.assertEqual(d.stop(), 0, d.log_tail())

    def test_conflict_and_bad_files_exit_2(self):
        empty = os.path.join(self.tmp.name, "empty")
        open(empty, "w").close()
        cases = [
            ((("--token", "x", "--token-file", self.path)), None, "--token and --token-file"),
            ((), {"COLLISIOND_TOKEN": "x", "COLLISIOND_TOKEN_FILE": self.path},
             "COLLISIOND_TOKEN and COLLISIOND_TOKEN_FILE"),
            (("--token-file", empty), None, "'%s' is empty" % empty),
            (("--token-file", os.path.join(self.tmp.name, "missing")), None, os.strerror(errno.ENOENT)),
        ]
        for flags, env, message in cases:
            with self.subTest(flags=flags, env=env):
                rc, err = run_daemon("--listen", "127.0.0.1:0", "--stream-listen", "127.0.0.1:0", *flags, env=env)
                self.assertEqual(rc, CONFIG_ERROR, err)
                self.assertIn(message, err)
                self.assertNotIn(self.TOKEN, err, "the token is printed")


class StartupLog(unittest.TestCase):
    """"listening" where the listeners start, "ready" (with what was
    recovered) once recovery is done and /readyz answers 200."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="collisiond-ready-")
        self.addCleanup(self.tmp.cleanup)
        self.dir = os.path.join(self.tmp.name, "data")

    def start(self):
        d = Daemon(["--data-dir", self.dir])
        self.addCleanup(d.cleanup)
        d.start()
        deadline = time.monotonic() + READY_TIMEOUT
        while d.request("GET", "/readyz").status != 200:
            self.assertLess(time.monotonic(), deadline, d.log_tail())
            time.sleep(0.01)
        # the line follows the state it reports: wait for it, never for a time
        while not any(m.startswith("ready:") for m in log_messages(d.log_text())):
            self.assertLess(time.monotonic(), deadline, d.log_tail())
            time.sleep(0.01)
        return d

    def test_ready_after_recovery(self):
        d = self.start()
        shapes = [body_item("s%d" % i, sphere(1), (3 * i, 0, 0)) for i in range(7)]
        self.assertEqual(d.request("PUT", "/v1/worlds/a", {"shapes": shapes}).status, 201)
        self.assertEqual(d.request("PUT", "/v1/worlds/b", {}).status, 201)
        self.assertEqual(d.stop(), 0, d.log_tail())
        d = self.start()
        msgs = log_messages(d.log_text())
        first = {key: next((i for i, m in enumerate(msgs) if m.startswith(key)), None)
                 for key in ("listening:", "recovered:", "ready:")}
        self.assertTrue(None not in first.values(), msgs)
        self.assertLess(first["listening:"], first["recovered:"], msgs)
        self.assertLess(first["recovered:"], first["ready:"], msgs)
        listening = msgs[first["listening:"]]
        self.assertRegex(listening, r"^listening: http 127\.0\.0\.1:%d, stream 127\.0\.0\.1:%d$"
                         % (d.http_port, d.stream_port))
        self.assertRegex(msgs[first["ready:"]], r"^ready: 2 worlds and 7 shapes recovered in [0-9]+\.[0-9] ms$")
        self.assertEqual(d.stop(), 0, d.log_tail())


class DataDirectory(unittest.TestCase):

    def test_uncreatable_directory_says_what_to_do(self):
        with tempfile.NamedTemporaryFile(prefix="collisiond-not-a-dir-") as f:
            where = os.path.join(f.name, "data")  # under a regular file: fails for root too
            rc, err = run_daemon("--listen", "127.0.0.1:0", "--stream-listen", "127.0.0.1:0", "--data-dir", where)
        self.assertEqual(rc, 1, err)
        line = next(m for m in log_messages(err) if m.startswith("cannot create"))
        self.assertIn(where, line)
        self.assertIn(os.strerror(errno.ENOTDIR), line)
        self.assertIn("--data-dir DIR", line)
        self.assertIn("--data-dir ''", line)


if __name__ == "__main__":
    unittest.main()
