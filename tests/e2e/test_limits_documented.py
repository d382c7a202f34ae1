"""Every limit is written down alike in the four places an operator may
look (issue 25's "Done when"): the config table as `--help` prints it,
docs/API.md's table of section 9, and the OpenAPI document's
`info.x-limits`. The oracle for each is another: the three texts are
parsed independently and must agree on the option, its variable and its
default."""

import json
import os
import re
import subprocess
import unittest

import harness

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
# --metrics-worlds bounds the series a scrape holds: a limit like the others.
LIMIT = re.compile(r"^(max-|min-|timeout$|request-timeout$|metrics-worlds$)")
HELP_OPTION = re.compile(r"^  --([a-z-]+)(?: (\S+))?\s")
HELP_ENV = re.compile(r"^\s+env (\S+), default '([^']*)'")
API_ROW = re.compile(r"^\| `--([a-z-]+)[^`]*` \| `([A-Z_]+)`[^|]*\| ([^|]+) \|")


def help_options():
    """{option: (env, default)} from `collisiond --help`."""
    out = subprocess.run([harness.DAEMON, "--help"], capture_output=True, timeout=10, check=True).stdout.decode()
    options, name = {}, None
    for line in out.splitlines():
        m = HELP_OPTION.match(line)
        if m:
            name = m.group(1)
            continue
        m = HELP_ENV.match(line)
        if m and name:
            options[name] = (m.group(1), m.group(2))
            name = None
    return options


def api_options():
    """{option: (env, default's first word)} from API.md's option table."""
    with open(os.path.join(ROOT, "docs", "API.md"), encoding="utf-8") as f:
        rows = (API_ROW.match(line) for line in f)
        return {m.group(1): (m.group(2), m.group(3).strip().strip("`").split()[0].strip("`")) for m in rows if m}


def openapi_limits():
    with open(os.path.join(ROOT, "docs", "openapi.json"), encoding="utf-8") as f:
        return json.load(f)["info"]["x-limits"]


class LimitsDocumented(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.help = help_options()
        cls.api = api_options()
        cls.openapi = openapi_limits()
        cls.limits = sorted(name for name in cls.help if LIMIT.match(name))

    def test_help_lists_the_limits(self):
        for name in ("max-body", "max-buffered", "min-body-rate", "timeout", "metrics-worlds",
                     "max-http-reply-total"):
            self.assertIn(name, self.limits)

    def test_every_option_is_in_the_api_table_with_its_variable(self):
        for name, (env, _) in self.help.items():
            self.assertIn(name, self.api, "docs/API.md section 9 has no row for --%s" % name)
            self.assertEqual(self.api[name][0], env, "--%s" % name)

    def test_every_limit_has_its_default_in_the_api_table(self):
        for name in self.limits:
            self.assertEqual(self.api[name][1], self.help[name][1], "--%s's default in docs/API.md" % name)

    def test_every_limit_is_in_the_openapi_document(self):
        self.assertEqual(sorted(self.openapi), self.limits)
        for name in self.limits:
            entry = self.openapi[name]
            self.assertEqual(entry["env"], self.help[name][0], "--%s" % name)
            self.assertEqual(entry["default"], self.help[name][1], "--%s" % name)
            self.assertTrue(entry["description"], "--%s" % name)
