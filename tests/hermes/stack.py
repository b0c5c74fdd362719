#!/usr/bin/env python3
"""Start a real Hermes stack on 127.0.0.1 for end-to-end tests.

    python3 tests/hermes/stack.py --home DIR [--profile NAME ...] [--hermes PATH]
        [--bridge-plugin DIR --bridge-relay-url URL --bridge-token KEY
         --bridge-mcp-url URL [--bridge-profile NAME]]

Standard library only. In DIR (the scratch HERMES_HOME root) it writes:

* ``config.yaml`` for the default profile: the fake model (provider ``custom``,
  with its ``context_length``), the API server under
  ``platforms.api_server.extra`` with host, port and key, ``approvals`` (mode
  manual, timeout 60), ``security.tirith_enabled: false`` and the settings that
  keep Hermes off the network (see "Loopback only" below);
* ``profiles/<name>/config.yaml`` for every ``--profile``, with the port in
  config.yaml and the key in ``profiles/<name>/.env`` as ``API_SERVER_KEY=…``,
  so that both config sources Hermes reads are exercised;
* with ``--bridge-plugin DIR`` (the hermes-bridge Hermes plugin, its ``adapter/``
  folder), for the profile ``--bridge-profile`` (default ``default``): a copy
  of DIR in ``<profile home>/plugins/hermes-bridge/``, ``plugins.enabled:
  [hermes-bridge]`` and an ``mcp_servers`` entry ``hal0-relay`` (url
  ``--bridge-mcp-url``, header ``Authorization: Bearer ${HERMES_BRIDGE_TOKEN}``)
  in its config.yaml, and ``HERMES_BRIDGE_RELAY_URL`` / ``HERMES_BRIDGE_TOKEN``
  in its ``.env``: the gateway then connects to that relay as a bot;
* ``victim/``, a directory the fake model's APPROVE case asks to ``rm -r``;
* ``work/`` (the terminal tool's cwd) and ``userhome/`` (HOME of the children);
* ``logs/stack.*.log`` (the children's output) and ``logs/fake_llm_requests.jsonl``;
  Hermes writes its own ``logs/*.log`` beside them.

It starts ``fake_llm.py`` and one ``hermes gateway run`` per profile, each in
its own process group, waits until every ``/health`` answers and the profile's
key is accepted (90 s at most; a child that exits is a failure, reported with
its log tail on stderr), then prints ONE JSON line on stdout:

    {"home": DIR, "fake_llm_port": n, "victim": PATH, "logs": DIR/logs,
     "requests_log": DIR/logs/fake_llm_requests.jsonl,
     "loopback_guard_log": DIR/logs/loopback_guard.log,
     "profiles": {"default": {"url": …, "key": …, "pid": n, "port": n, "home": …}, …}}

It then runs until SIGTERM, SIGINT or end of stdin, and stops everything it
started. While it runs it takes commands on stdin, one per line, and answers
each with one JSON line on stdout:

    restart NAME   stop that profile's gateway and start it again on the same port,
                   without rewriting its files (Hermes reads mcp_servers only at
                   start) -> {"event": "restarted", "profile", "pid", "url", "port"}
    kill NAME      SIGKILL that profile's gateway (its whole process group) and
                   wait for it -> {"event": "killed", "profile", "pid"};
                   ``restart NAME`` starts it again
    ping           -> {"event": "pong"}

Environment variables FAKE_LLM_* are passed on to the fake model server
(FAKE_LLM_VICTIM and FAKE_LLM_LOG are set by this script).

Loopback only. Left to itself, the gateway of hermes-agent 0.19.0 reaches off
the machine during these tests: building its first agent, each gateway looks
the model's context length up in OpenRouter's catalogue (``GET
https://openrouter.ai/api/v1/models``, agent/model_metadata.py, reached from
model_tools.py's tool-search gate, which does not pass the base URL, so the
fake model's own answer is not used), and an agent of a plugin platform such as
hermes-bridge gets the core tools, whose ``text_to_speech`` check pip-installs
edge-tts from PyPI into the venv on first use (tools/lazy_deps.py). Every
config.yaml therefore sets ``model.context_length`` (what fake_llm.py reports,
so nothing is looked up), ``security.allow_lazy_installs: false`` (no runtime
pip install) and ``agent.disabled_toolsets: [tts]`` (no text-to-speech tool,
so no Edge TTS). As a guard against what a later Hermes adds, every child runs
with ``loopback_guard/`` first on PYTHONPATH: its ``sitecustomize.py`` refuses
(raises) any Python connect, UDP send or name lookup that is not loopback,
``localhost`` or a unix socket, and writes a ``HAL0-LOOPBACK-GUARD: refused``
line to the child's log and to ``logs/loopback_guard.log``, which this script
repeats on stderr when it stops.
"""

import argparse
import json
import os
import queue
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
DEFAULT_HERMES = os.path.join(REPO, ".hermes-venv", "bin", "hermes")
PROFILE_RE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
# Variables of the caller that would change what Hermes does; children never see them.
SCRUBBED_PREFIXES = (
    "HERMES_",
    "API_SERVER_",
    "GATEWAY_",
    "TERMINAL_",
    "MESSAGING_",
    "TIRITH_",
    "OPENAI_",
    "OPENROUTER_",
    "ANTHROPIC_",
    "NOUS_",
)
BIND_FAILURE = "Could not bind"
# The context length fake_llm.py reports (its CONTEXT_LENGTH), written into model.context_length.
FAKE_CONTEXT_LENGTH = 131072
LOOPBACK_GUARD_DIR = os.path.join(HERE, "loopback_guard")
LOOPBACK_GUARD_MARKER = "HAL0-LOOPBACK-GUARD"
BRIDGE_PLUGIN = "hermes-bridge"
BRIDGE_MCP_SERVER = "hal0-relay"
PORT_ATTEMPTS = 3
STOP_GRACE_S = 15.0


class Shutdown(BaseException):
    """A signal asked the stack to stop (a BaseException: nothing may swallow it)."""


class Signals:
    """SIGTERM, SIGINT and SIGHUP raise Shutdown once, never inside ``deferred()``
    (where a child could be forked but not yet recorded) and never once the
    teardown has begun."""

    interruptible = True
    deferring = False
    pending = None

    @classmethod
    def install(cls):
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, cls.handler)

    @classmethod
    def handler(cls, signum, _frame):
        if not cls.interruptible:
            return
        if cls.deferring:
            cls.pending = signal.Signals(signum).name
            return
        cls.interruptible = False
        raise Shutdown(signal.Signals(signum).name)

    @classmethod
    def deferred(cls):
        return _Deferred()


class _Deferred:
    def __enter__(self):
        Signals.deferring = True

    def __exit__(self, *exc):
        Signals.deferring = False
        if Signals.pending and Signals.interruptible:
            Signals.interruptible = False
            raise Shutdown(Signals.pending)
        return False


class StackError(Exception):
    pass


def log(msg):
    sys.stderr.write("stack.py: %s\n" % msg)
    sys.stderr.flush()


def emit(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


# --- config files ----------------------------------------------------------------


def yaml_lines(value, indent=0):
    """A small block-style YAML writer for dicts of scalars and lists of strings
    (JSON strings are YAML)."""
    pad = "  " * indent
    lines = []
    for key, item in value.items():
        if isinstance(item, dict):
            lines.append("%s%s:" % (pad, key))
            lines.extend(yaml_lines(item, indent + 1))
        elif isinstance(item, list):
            lines.append("%s%s:" % (pad, key))
            lines.extend("%s  - %s" % (pad, json.dumps(str(x))) for x in item)
        elif isinstance(item, bool):
            lines.append("%s%s: %s" % (pad, key, "true" if item else "false"))
        elif isinstance(item, (int, float)):
            lines.append("%s%s: %s" % (pad, key, item))
        else:
            lines.append("%s%s: %s" % (pad, key, json.dumps(str(item))))
    return lines


def write_file(path, text, mode=0o600):
    tmp = path + ".tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def free_port(taken):
    for _ in range(50):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port not in taken:
            taken.add(port)
            return port
    raise StackError("no free port found")


class Profile:
    def __init__(self, stack, name):
        self.stack = stack
        self.name = name
        self.home = stack.home if name == "default" else os.path.join(stack.home, "profiles", name)
        self.key = "hal0-hermes-%s-%s" % (name, secrets.token_hex(16))
        self.port = None
        self.proc = None
        self.log_path = os.path.join(stack.logs, "stack.gateway-%s.log" % name)

    @property
    def url(self):
        return "http://127.0.0.1:%d" % self.port

    def config(self):
        extra = {"host": "127.0.0.1", "port": self.port}
        if self.name == "default":
            extra["key"] = self.key  # named profiles take theirs from .env
        config = {
            "model": {
                "provider": "custom",
                "default": "fake-model",
                "base_url": "http://127.0.0.1:%d/v1" % self.stack.llm_port,
                "api_key": "fake-llm-key-not-a-secret",
                # Known, so Hermes does not look it up in OpenRouter's catalogue.
                "context_length": FAKE_CONTEXT_LENGTH,
            },
            "platforms": {"api_server": {"enabled": True, "extra": extra}},
            "approvals": {"mode": self.stack.args.approvals_mode, "timeout": self.stack.args.approvals_timeout},
            # No pip install from PyPI at run time (edge-tts for the tts tool's check).
            "security": {"tirith_enabled": False, "allow_lazy_installs": False},
            # No text-to-speech (Edge TTS is a Microsoft web service) on any platform.
            "agent": {"disabled_toolsets": ["tts"]},
            "terminal": {"cwd": self.stack.work},
        }
        if self.is_bridge_bot():
            config["plugins"] = {"enabled": [BRIDGE_PLUGIN]}
            config["mcp_servers"] = {
                BRIDGE_MCP_SERVER: {
                    "url": self.stack.args.bridge_mcp_url,
                    "headers": {"Authorization": "Bearer ${HERMES_BRIDGE_TOKEN}"},
                }
            }
        return config

    def is_bridge_bot(self):
        return bool(self.stack.args.bridge_plugin) and self.name == self.stack.args.bridge_profile

    def write_config(self):
        os.makedirs(self.home, exist_ok=True)
        header = "# Written by tests/hermes/stack.py for profile %r.\n" % self.name
        write_file(os.path.join(self.home, "config.yaml"), header + "\n".join(yaml_lines(self.config())) + "\n")
        env_lines = []
        if self.name != "default":
            env_lines.append("API_SERVER_KEY=%s" % self.key)
        if self.is_bridge_bot():
            env_lines.append("HERMES_BRIDGE_RELAY_URL=%s" % self.stack.args.bridge_relay_url)
            env_lines.append("HERMES_BRIDGE_TOKEN=%s" % self.stack.args.bridge_token)
            self.install_bridge_plugin()
        if env_lines:
            write_file(os.path.join(self.home, ".env"), "\n".join(env_lines) + "\n")

    def install_bridge_plugin(self):
        """Copy the plugin folder as its README says: <home>/plugins/hermes-bridge/."""
        dest = os.path.join(self.home, "plugins", BRIDGE_PLUGIN)
        if os.path.isdir(dest):
            return  # a retry on another port: already there
        shutil.copytree(self.stack.args.bridge_plugin, dest, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))

    def command(self):
        hermes = self.stack.args.hermes
        if self.name == "default":
            return [hermes, "gateway", "run", "-v"]
        return [hermes, "-p", self.name, "gateway", "run", "-v"]

    def start(self):
        self.proc = self.stack.spawn(self.command(), self.log_path, {"HERMES_HOME": self.stack.home})

    def to_json(self):
        return {"url": self.url, "key": self.key, "pid": self.proc.pid, "port": self.port, "home": self.home}


class Stack:
    def __init__(self, args):
        self.args = args
        self.home = os.path.abspath(args.home)
        self.logs = os.path.join(self.home, "logs")
        self.victim = os.path.join(self.home, "victim")
        self.work = os.path.join(self.home, "work")
        self.userhome = os.path.join(self.home, "userhome")
        self.requests_log = os.path.join(self.logs, "fake_llm_requests.jsonl")
        self.guard_log = os.path.join(self.logs, "loopback_guard.log")
        self.children = []  # every Popen started, for teardown
        self.llm = None
        self.llm_port = None
        self.taken_ports = set()
        names = ["default"] + [p for p in args.profile if p != "default"]
        self.profiles = {}
        for name in names:
            if not PROFILE_RE.match(name):
                raise StackError("invalid profile name %r (want %s)" % (name, PROFILE_RE.pattern))
            self.profiles[name] = Profile(self, name)

    # --- processes ------------------------------------------------------------

    def child_env(self, extra):
        env = {k: v for k, v in os.environ.items() if not k.startswith(SCRUBBED_PREFIXES)}
        no_proxy = ",".join(x for x in (env.get("NO_PROXY"), "127.0.0.1,localhost") if x)
        pythonpath = os.pathsep.join(x for x in (LOOPBACK_GUARD_DIR, env.get("PYTHONPATH")) if x)
        env.update(
            {
                "HOME": self.userhome,
                "NO_PROXY": no_proxy,
                "no_proxy": no_proxy,
                "PYTHONUNBUFFERED": "1",
                "TIRITH_ENABLED": "false",
                "PYTHONPATH": pythonpath,  # loopback_guard/sitecustomize.py
                "HAL0_LOOPBACK_GUARD_LOG": self.guard_log,
            }
        )
        env.update(extra)
        return env

    def spawn(self, argv, log_path, extra_env, stdout=None):
        env = self.child_env(extra_env)
        with open(log_path, "ab") as out, Signals.deferred():
            proc = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=stdout if stdout is not None else out,
                stderr=out,
                cwd=self.work,
                env=env,
                start_new_session=True,  # own process group: teardown kills the whole tree
            )
            self.children.append(proc)
        return proc

    def stop_procs(self, procs):
        procs = [p for p in procs if p is not None]
        for p in procs:
            signal_group(p, signal.SIGTERM)
        deadline = time.monotonic() + STOP_GRACE_S
        for p in procs:
            try:
                p.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                log("pid %d ignored SIGTERM for %.0f s: SIGKILL" % (p.pid, STOP_GRACE_S))
            signal_group(p, signal.SIGKILL)  # also reaps leftovers of the group
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                log("pid %d did not exit after SIGKILL" % p.pid)
        for p in procs:
            if p in self.children:
                self.children.remove(p)

    def teardown(self):
        self.stop_procs(list(self.children))
        self.report_guard()

    def report_guard(self):
        """Repeat on stderr what the loopback guard refused (nothing, normally)."""
        try:
            with open(self.guard_log, encoding="utf-8", errors="replace") as f:
                lines = [line.rstrip("\n") for line in f if line.strip()]
        except OSError:
            return
        if lines:
            log("%s: %d off-loopback attempt(s) refused (%s):" % (LOOPBACK_GUARD_MARKER, len(lines), self.guard_log))
            for line in lines[:20]:
                log("  " + line)

    # --- start-up -------------------------------------------------------------

    def prepare(self):
        for d in (self.home, self.logs, self.victim, self.work, self.userhome):
            os.makedirs(d, exist_ok=True)
        write_file(os.path.join(self.victim, "keep.txt"), "delete me only after approval\n", 0o644)
        if not os.path.isfile(os.path.join(LOOPBACK_GUARD_DIR, "sitecustomize.py")):
            raise StackError("%s/sitecustomize.py is missing" % LOOPBACK_GUARD_DIR)
        if not os.access(self.args.hermes, os.X_OK):
            raise StackError("%s is not executable: run tests/external/setup.sh" % self.args.hermes)

    def start_llm(self):
        log_path = os.path.join(self.logs, "stack.fake_llm.log")
        env = {"FAKE_LLM_VICTIM": self.victim, "FAKE_LLM_LOG": self.requests_log}
        argv = [sys.executable, os.path.join(HERE, "fake_llm.py"), "0"]
        self.llm = self.spawn(argv, log_path, env, stdout=subprocess.PIPE)
        line = self.llm.stdout.readline().decode("utf-8", "replace").strip()
        self.llm.stdout.close()
        if not line.startswith("PORT "):
            self.llm.wait(timeout=5)
            raise StackError("fake_llm.py did not report its port (got %r)\n%s" % (line, tail(log_path)))
        self.llm_port = int(line.split()[1])
        self.taken_ports.add(self.llm_port)

    def start_gateways(self, profiles, fresh=True):
        """Start the given profiles' gateways and wait until all are ready.

        ``fresh``: pick ports and write the config files, retrying another port
        when one turns out to be taken. A restart keeps the port and leaves the
        files alone (a test may have edited them), so it does not retry.
        """
        pending = {}
        for p in profiles:
            if fresh:
                p.port = free_port(self.taken_ports)
                p.write_config()
            log_start = os.path.getsize(p.log_path) if os.path.exists(p.log_path) else 0
            p.start()
            pending[p.name] = (p, 1 if fresh else PORT_ATTEMPTS, log_start)
        deadline = time.monotonic() + self.args.timeout
        while pending:
            for name, (p, attempt, log_start) in list(pending.items()):
                if ready(p):
                    del pending[name]
                    continue
                bind_failed = BIND_FAILURE in read_from(p.log_path, log_start)
                exited = p.proc.poll() is not None
                if bind_failed and attempt < PORT_ATTEMPTS:
                    log("profile %s: port %d was taken, trying another" % (name, p.port))
                    self.stop_procs([p.proc])
                    p.port = free_port(self.taken_ports)
                    p.write_config()
                    log_start = os.path.getsize(p.log_path)
                    p.start()
                    pending[name] = (p, attempt + 1, log_start)
                elif exited or bind_failed:
                    why = "exited with status %s" % p.proc.returncode if exited else "could not bind its port"
                    raise StackError("gateway of profile %s %s; log tail:\n%s" % (name, why, tail(p.log_path)))
            if pending and time.monotonic() > deadline:
                names = ", ".join(sorted(pending))
                last = "\n".join("--- %s\n%s" % (n, tail(pending[n][0].log_path)) for n in sorted(pending))
                raise StackError("not ready after %.0f s: %s\n%s" % (self.args.timeout, names, last))
            if pending:
                time.sleep(0.2)

    def start(self):
        self.prepare()
        self.start_llm()
        self.start_gateways(list(self.profiles.values()))

    def restart(self, name):
        p = self.profile(name)
        self.stop_procs([p.proc])
        self.start_gateways([p], fresh=False)

    def kill(self, name):
        """SIGKILL a profile's gateway, no grace: what a crash looks like to its peers."""
        p = self.profile(name)
        signal_group(p.proc, signal.SIGKILL)
        try:
            p.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            raise StackError("gateway of profile %s did not exit after SIGKILL" % name)
        self.stop_procs([p.proc])  # reaps what is left of its group

    def profile(self, name):
        p = self.profiles.get(name)
        if p is None:
            raise StackError("unknown profile %r" % name)
        return p

    def summary(self):
        return {
            "home": self.home,
            "fake_llm_port": self.llm_port,
            "victim": self.victim,
            "logs": self.logs,
            "requests_log": self.requests_log,
            "loopback_guard_log": self.guard_log,
            "profiles": {name: p.to_json() for name, p in self.profiles.items()},
        }


# --- helpers ---------------------------------------------------------------------


def signal_group(proc, sig):
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def http_get(url, key=None):
    req = urllib.request.Request(url)
    if key:
        req.add_header("Authorization", "Bearer " + key)
    try:
        with urllib.request.urlopen(req, timeout=2) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()
    except (urllib.error.URLError, OSError):
        return None, b""


def ready(p):
    """/health answers ok and the profile's key is accepted."""
    status, body = http_get(p.url + "/health")
    if status != 200:
        return False
    try:
        if json.loads(body).get("status") != "ok":
            return False
    except ValueError:
        return False
    status, _ = http_get(p.url + "/v1/models", p.key)
    if status == 401:
        raise StackError("profile %s: /health is up but its key is refused (401)\n%s" % (p.name, tail(p.log_path)))
    return status == 200


def read_from(path, offset):
    try:
        with open(path, "rb") as f:
            f.seek(offset)
            return f.read().decode("utf-8", "replace")
    except OSError:
        return ""


def tail(path, lines=40):
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - 16384))
            text = f.read().decode("utf-8", "replace")
    except OSError as e:
        return "(%s unreadable: %s)" % (path, e)
    return "\n".join(text.splitlines()[-lines:])


def stdin_reader(q):
    for line in sys.stdin:
        q.put(("line", line.strip()))
    q.put(("eof", None))


def serve(stack, args):
    q = queue.Queue()
    if not args.no_stdin:
        threading.Thread(target=stdin_reader, args=(q,), daemon=True).start()
    reported = set()
    while True:
        try:
            kind, line = q.get(timeout=1.0)
        except queue.Empty:
            for name, p in stack.profiles.items():
                if p.proc.poll() is not None and p.proc.pid not in reported:
                    reported.add(p.proc.pid)
                    log("gateway of profile %s exited (status %s)\n%s" % (name, p.proc.returncode, tail(p.log_path)))
            continue
        if kind == "eof":
            log("stdin closed: stopping")
            return
        if not line:
            continue
        words = line.split()
        if words[0] == "ping":
            emit({"event": "pong"})
        elif words[0] == "restart" and len(words) == 2:
            try:
                stack.restart(words[1])
                p = stack.profiles[words[1]]
                emit({"event": "restarted", "profile": p.name, "pid": p.proc.pid, "url": p.url, "port": p.port})
            except StackError as e:
                emit({"event": "error", "command": line, "message": str(e)})
        elif words[0] == "kill" and len(words) == 2:
            try:
                pid = stack.profile(words[1]).proc.pid
                reported.add(pid)  # asked for: not worth a log line
                stack.kill(words[1])
                emit({"event": "killed", "profile": words[1], "pid": pid})
            except StackError as e:
                emit({"event": "error", "command": line, "message": str(e)})
        else:
            emit({"event": "error", "command": line, "message": "unknown command"})


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--home", required=True, help="scratch directory; becomes the HERMES_HOME root")
    ap.add_argument("--profile", action="append", default=[], help="a named profile (repeatable)")
    ap.add_argument("--hermes", default=DEFAULT_HERMES, help="the hermes executable (default: %(default)s)")
    ap.add_argument("--timeout", type=float, default=90.0, help="seconds to wait for every /health")
    ap.add_argument("--approvals-mode", default="manual", choices=["manual", "smart", "off"])
    ap.add_argument("--approvals-timeout", type=int, default=60)
    ap.add_argument("--no-stdin", action="store_true", help="ignore stdin (run until a signal only)")
    ap.add_argument("--bridge-plugin", help="the hermes-bridge plugin folder (its adapter/) to install")
    ap.add_argument("--bridge-profile", default="default", help="the profile that becomes the bot")
    ap.add_argument("--bridge-relay-url", help="HERMES_BRIDGE_RELAY_URL (ws://…/bridge/connect)")
    ap.add_argument("--bridge-token", help="HERMES_BRIDGE_TOKEN, also the bearer of mcp_servers.hal0-relay")
    ap.add_argument("--bridge-mcp-url", help="the relay's MCP URL, for mcp_servers.hal0-relay")
    args = ap.parse_args()
    if args.bridge_plugin:
        missing = [f for f in ("bridge_relay_url", "bridge_token", "bridge_mcp_url") if not getattr(args, f)]
        if missing:
            ap.error("--bridge-plugin needs " + ", ".join("--" + f.replace("_", "-") for f in missing))
        if not os.path.isfile(os.path.join(args.bridge_plugin, "plugin.yaml")):
            ap.error("--bridge-plugin %s has no plugin.yaml" % args.bridge_plugin)
        args.bridge_plugin = os.path.abspath(args.bridge_plugin)
        if args.bridge_profile != "default" and args.bridge_profile not in args.profile:
            ap.error("--bridge-profile %s is not a --profile" % args.bridge_profile)

    Signals.install()

    stack = None
    status = 0
    try:
        stack = Stack(args)
        started = time.monotonic()
        stack.start()
        log("ready in %.1f s" % (time.monotonic() - started))
        emit(stack.summary())
        serve(stack, args)
    except Shutdown as e:
        log("%s: stopping" % e)
    except StackError as e:
        log("error: %s" % e)
        status = 1
    except BrokenPipeError:
        status = 1  # nobody reads stdout any more
    finally:
        while True:
            try:
                Signals.interruptible = False  # from here on signals are no-ops
                if stack is not None:
                    stack.teardown()
                break
            except Shutdown:
                continue  # arrived before the line above: tear down all the same
    return status


if __name__ == "__main__":
    sys.exit(main())
