#!/usr/bin/env python3
"""What a newcomer does, checked: clone the repository alone into an empty
directory (no sibling folders, so nothing outside the clone can be read),
then run the two commands of the README's "Quick start" there.

    check.py REPO [--keep]

- the test command (`make test`) must pass;
- the run command (`make run`) must serve: it is started with the listeners
  on ephemeral loopback ports (COLLISIOND_* variables, which the daemon
  reads beside its flags), must answer /readyz and a pair query, and must
  drain and exit 0 on SIGTERM;
- afterwards the clone's `git status` is clean (every output is ignored) and
  the empty directory still holds the clone alone.

The clone is of REPO's committed HEAD: uncommitted changes are not in it.
Exits 0 when all hold, 1 otherwise; --keep leaves the directory for a look.
"""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

START_TIMEOUT = 300.0  # `make run` may build first
STOP_TIMEOUT = 30.0


def quick_start_commands(readme):
    """The commands of the README's Quick start code block, by their
    first two words ("make test" -> the whole line before any comment)."""
    section = re.search(r"^## Quick start.*?\n(.*?)(?=^## )", readme, re.S | re.M)
    if not section:
        raise SystemExit("README.md has no '## Quick start' section")
    block = re.search(r"```(?:sh|bash)?\n(.*?)```|((?:^    [^\n]*\n)+)", section.group(1), re.S | re.M)
    if not block:
        raise SystemExit("README.md's Quick start has no code block")
    text = block.group(1) or block.group(2)
    commands = {}
    for line in text.splitlines():
        command = line.split("#", 1)[0].strip()
        if command:
            commands[" ".join(command.split()[:2])] = command
    return commands


def clean_env(**extra):
    """The caller's environment without make's own variables (a jobserver
    the clone's make cannot reach) plus extra."""
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS")}
    env.update(extra)
    return env


def run_tests(clone, command):
    print("newcomer-check: %s (in %s)" % (command, clone), flush=True)
    return subprocess.run(command, shell=True, cwd=clone, env=clean_env()).returncode == 0


def http(port, method, path, body=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request("http://127.0.0.1:%d%s" % (port, path), data=data, method=method)
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, json.loads(r.read() or b"null")
    except urllib.error.HTTPError as e:
        return e.code, None


def wait_for_ports(proc, port_file):
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            with open(port_file) as f:
                return int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            time.sleep(0.2)
    return None


def wait_ready(port):
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if http(port, "GET", "/readyz")[0] == 200:
                return True
        except OSError:
            pass
        time.sleep(0.2)
    return False


def serves(port):
    status, body = http(port, "POST", "/v1/pair", {
        "a": {"shape": {"type": "sphere", "radius": 1}},
        "b": {"shape": {"type": "sphere", "radius": 1.5}, "pose": {"position": [3, 0, 0]}}})
    # Spheres of radius 1 and 1.5, centres 3 apart: 0.5 apart.
    return status == 200 and body["overlap"] is False and abs(body["distance"] - 0.5) < 1e-12


def daemon_in_session(sid):
    """The pid of the collisiond process in session sid (make's child), or
    None; read from /proc, as ps would."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % entry) as f:
                stat = f.read()
        except OSError:
            continue
        comm = stat[stat.index("(") + 1:stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2:].split()
        if comm == "collisiond" and int(fields[3]) == sid:  # fields[3]: the session id
            return int(entry)
    return None


def stop(proc):
    """SIGTERM to the daemon alone (make passes a signal it gets on to its
    child, and a second SIGTERM ends the drain at once); True when make then
    exits 0, as it does when the daemon drained and stopped cleanly."""
    pid = daemon_in_session(proc.pid)
    if pid is not None:
        os.kill(pid, signal.SIGTERM)
    try:
        return pid is not None and proc.wait(STOP_TIMEOUT) == 0
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        return False


def run_daemon(clone, command, scratch):
    """Starts command; True when it served and stopped cleanly on SIGTERM."""
    port_file = os.path.join(scratch, "ports")
    env = clean_env(COLLISIOND_LISTEN="127.0.0.1:0", COLLISIOND_STREAM_LISTEN="127.0.0.1:0",
                    COLLISIOND_PORT_FILE=port_file)
    print("newcomer-check: %s (in %s)" % (command, clone), flush=True)
    proc = subprocess.Popen(command, shell=True, cwd=clone, env=env, start_new_session=True)
    port = wait_for_ports(proc, port_file)
    served = port is not None and wait_ready(port) and serves(port)
    if not served:
        print("newcomer-check: `%s` did not serve" % command, file=sys.stderr)
    stopped = stop(proc)
    if not stopped:
        print("newcomer-check: `%s` did not stop cleanly on SIGTERM (exit %s)" % (command, proc.returncode),
              file=sys.stderr)
    return served and stopped


def tree_clean(clone):
    status = subprocess.run(["git", "status", "--porcelain"], cwd=clone, capture_output=True, text=True).stdout
    if status:
        print("newcomer-check: the commands left files git does not ignore:\n" + status, file=sys.stderr)
    return not status


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    repo = os.path.abspath(argv[1])
    if subprocess.run(["git", "status", "--porcelain"], cwd=repo, capture_output=True, text=True).stdout:
        print("newcomer-check: %s has uncommitted changes; the clone has only what is committed" % repo)
    home = tempfile.mkdtemp(prefix="newcomer-")
    scratch = tempfile.mkdtemp(prefix="newcomer-scratch-")
    clone = os.path.join(home, "collisiond")
    try:
        subprocess.run(["git", "clone", "-q", repo, clone], check=True)
        with open(os.path.join(clone, "README.md"), encoding="utf-8") as f:
            commands = quick_start_commands(f.read())
        missing = [c for c in ("make test", "make run") if c not in commands]
        if missing:
            print("newcomer-check: the Quick start lacks %s" % missing, file=sys.stderr)
            return 1
        checks = [("test command", lambda: run_tests(clone, commands["make test"])),
                  ("run command", lambda: run_daemon(clone, commands["make run"], scratch)),
                  ("clean tree", lambda: tree_clean(clone)),
                  ("nothing beside the clone", lambda: os.listdir(home) == ["collisiond"])]
        failed = [name for name, check in checks if not check()]
        for name in failed:
            print("newcomer-check: FAILED: %s" % name, file=sys.stderr)
        print("%d passed, %d failed" % (len(checks) - len(failed), len(failed)))
        return 1 if failed else 0
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
        if "--keep" in argv:
            print("newcomer-check: kept %s" % home)
        else:
            shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
