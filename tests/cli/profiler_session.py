"""A profiler-cli session (the Firefox Profiler's command line, on its bundled importer):
load a profile and ask its daemon, waiting out its slow starts on a loaded machine.
Used by gecko_calltree.py and gecko_read_check.py."""
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time


class Session:
    def __init__(self, cli):
        self.cli = cli
        self.sdir = tempfile.mkdtemp(prefix="pc", dir="/tmp")  # socket paths must stay short
        self.env = dict(os.environ, PROFILER_CLI_SESSION_DIR=self.sdir)
        self.sid = "s%d" % os.getpid()

    def run(self, *args):
        r = subprocess.run(self.cli + list(args) + ["--session", self.sid], env=self.env,
                           capture_output=True, text=True, timeout=300)
        if r.returncode:
            sys.stderr.write("profiler-cli %s failed (%d):\n%s%s" %
                             (" ".join(args), r.returncode, r.stdout, r.stderr))
            sys.exit(1)
        return r.stdout

    @staticmethod
    def alive(pid):
        try:
            os.kill(pid, 0)
            return True
        except ProcessLookupError:
            return False

    def await_daemon(self, pid, deadline):
        """profiler-cli gives its daemon 500 ms to start and then gives up, though the daemon
        goes on starting (on a busy machine, the sanitizer run, it needs longer). Wait for
        that daemon, bounded: "ready" when it answers, "dead" when it exited (a profile it
        refused: its log says why), "slow" when the deadline passed first."""
        log = os.path.join(self.sdir, self.sid + ".log")
        sock = os.path.join(self.sdir, self.sid + ".sock")
        polls = 0
        while time.monotonic() < deadline:
            if not self.alive(pid):
                return "dead"
            # "status" is a Node process of its own: on a busy machine, where the daemon
            # takes seconds to start, asking every 0.2 s cost more than the check itself.
            # Ask once its socket is there (and now and then regardless, should a version
            # keep it elsewhere).
            polls += 1
            if not os.path.exists(sock) and polls % 10:
                time.sleep(0.2)
                continue
            # A daemon that could not load the profile may stay up (profiler-cli 0.10 on
            # Node 24 does): its log says so, and that is the answer.
            if os.path.exists(log):
                with open(log, errors="replace") as f:
                    if "Failed to load profile" in f.read():
                        try:
                            os.kill(pid, signal.SIGTERM)
                        except ProcessLookupError:
                            pass
                        return "dead"
            r = subprocess.run(self.cli + ["status", "--session", self.sid], env=self.env,
                               capture_output=True, text=True, timeout=300)
            if r.returncode == 0:
                return "ready"
            time.sleep(0.2)
        return "slow"

    def load(self, path):
        # generous: a loaded CI machine can take minutes to start node and parse
        deadline = time.monotonic() + 240
        for attempt in range(3):
            self.sid = "s%d-%d" % (os.getpid(), attempt)
            r = subprocess.run(self.cli + ["load", path, "--session", self.sid], env=self.env,
                               capture_output=True, text=True, timeout=300)
            if r.returncode == 0:
                return
            m = re.search(r"did not become ready.*?running as pid (\d+)", r.stderr + r.stdout, re.S)
            if not m:
                break
            state = self.await_daemon(int(m.group(1)), deadline)
            if state == "ready":
                return
            if state == "dead":
                break
            try:
                os.kill(int(m.group(1)), signal.SIGTERM)
            except ProcessLookupError:
                pass
        sys.stderr.write("profiler-cli load %s failed (%d):\n%s%s" %
                         (path, r.returncode, r.stdout, r.stderr))
        log = os.path.join(self.sdir, self.sid + ".log")
        if os.path.exists(log):
            with open(log, errors="replace") as f:
                sys.stderr.write("daemon log:\n" + f.read()[-2000:])
        sys.exit(1)

    def stop(self):
        subprocess.run(self.cli + ["stop", self.sid], env=self.env, capture_output=True,
                       timeout=60)

    def close(self):
        self.stop()
        shutil.rmtree(self.sdir, ignore_errors=True)
