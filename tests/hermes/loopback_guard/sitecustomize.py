"""Loopback guard for the real-Hermes test stack (tests/hermes/stack.py).

stack.py puts this directory first on PYTHONPATH of every child it starts (the
fake model, each ``hermes gateway run``, and so every Python process those
start: pip, MCP stdio servers, ...). Python then imports this module at start-up
(``site`` imports ``sitecustomize``), and it installs an audit hook that refuses
network traffic leaving the machine:

* ``socket.connect`` / ``connect_ex`` of an AF_INET or AF_INET6 socket to
  anything but a loopback address (127.0.0.0/8, ::1, ::ffff:127.x.y.z) or the
  name ``localhost`` (``*.localhost``);
* ``socket.sendto`` / ``sendmsg`` with such a destination (UDP);
* name lookups (``getaddrinfo``, ``gethostbyname[_ex]``, ``gethostbyaddr``)
  of anything but ``localhost``, the machine's own host name, an IP literal or
  an empty host: a lookup of ``openrouter.ai`` already sends a DNS query off
  the machine.

Unix sockets and other families (netlink, ...) are not touched. A refusal raises
an OSError (``socket.gaierror`` for lookups, ``PermissionError`` otherwise), so
HTTP clients report an ordinary connection error, and writes one line starting
with ``HAL0-LOOPBACK-GUARD: refused`` to stderr (the child's log in
``logs/stack.*.log``) and, when ``HAL0_LOOPBACK_GUARD_LOG`` is set, appends it to
that file too; stack.py reports that file's lines when it stops.

Only Python code is covered: a non-Python child (node, curl) or a C library
doing its own I/O is not. Standard library only; it must never break start-up,
so any error while installing the hook is ignored.
"""

import errno
import ipaddress
import os
import socket
import sys
import traceback

MARKER = "HAL0-LOOPBACK-GUARD"
_LOG_PATH = os.environ.get("HAL0_LOOPBACK_GUARD_LOG") or None
_INET = (socket.AF_INET, socket.AF_INET6)
try:
    _OWN_HOSTNAME = socket.gethostname().strip().rstrip(".").lower()  # answered from /etc/hosts
except Exception:
    _OWN_HOSTNAME = None
_LOOKUPS = ("socket.getaddrinfo", "socket.gethostbyname", "socket.gethostbyname_ex", "socket.gethostbyaddr")


def _host_text(host):
    if isinstance(host, (bytes, bytearray)):
        host = bytes(host).decode("ascii", "replace")
    return str(host).strip().rstrip(".").lower()


def _is_localhost_name(name):
    return name == "localhost" or name.endswith(".localhost")


def _ip(name):
    """The address ``name`` is a literal of (a ``%scope`` suffix and brackets dropped), or None."""
    try:
        return ipaddress.ip_address(name.split("%", 1)[0].strip("[]"))
    except ValueError:
        return None


def _is_loopback_ip(ip):
    if ip.is_loopback:
        return True
    mapped = getattr(ip, "ipv4_mapped", None)
    return mapped is not None and mapped.is_loopback


def _destination_allowed(host):
    """A connect / sendto destination: loopback literals and localhost names only."""
    name = _host_text(host)
    ip = _ip(name)
    if ip is not None:
        return _is_loopback_ip(ip)
    return _is_localhost_name(name)


def _lookup_allowed(host):
    """A name lookup: empty host (passive / bind), IP literals (no query sent) and localhost."""
    if host is None:
        return True
    name = _host_text(host)
    if not name or name == "*":
        return True
    if _ip(name) is not None:
        return True
    return _is_localhost_name(name) or name == _OWN_HOSTNAME


def _refuse(event, what, exc):
    frames = [f for f in traceback.extract_stack()[:-2] if not f.filename.endswith("sitecustomize.py")]
    where = " <- ".join("%s:%d %s" % (os.path.basename(f.filename), f.lineno, f.name) for f in reversed(frames[-6:]))
    line = "%s: refused %s %s (pid %d, %s) at %s\n" % (MARKER, event, what, os.getpid(), sys.argv[:3], where)
    try:
        sys.stderr.write(line)
        sys.stderr.flush()
    except Exception:
        pass
    if _LOG_PATH:
        try:
            with open(_LOG_PATH, "a", encoding="utf-8") as f:
                f.write(line)
        except Exception:
            pass
    raise exc


def _hook(event, args):
    if not event.startswith("socket."):
        return
    if event == "socket.connect":
        sock, address = args[0], args[1]
        if getattr(sock, "family", None) in _INET and isinstance(address, tuple) and address:
            if not _destination_allowed(address[0]):
                _refuse(event, repr(address), PermissionError(errno.EACCES, "%s: no traffic off loopback" % MARKER))
    elif event in ("socket.sendto", "socket.sendmsg"):
        sock, address = args[0], args[-1]
        if getattr(sock, "family", None) in _INET and isinstance(address, tuple) and address:
            if not _destination_allowed(address[0]):
                _refuse(event, repr(address), PermissionError(errno.EACCES, "%s: no traffic off loopback" % MARKER))
    elif event in _LOOKUPS:
        host = args[0] if args else None
        if event == "socket.gethostbyaddr":
            allowed = _destination_allowed(host)
        else:
            allowed = _lookup_allowed(host)
        if not allowed:
            _refuse(event, repr(host), socket.gaierror(socket.EAI_NONAME, "%s: no lookup of %r" % (MARKER, host)))


try:
    sys.addaudithook(_hook)
except Exception:
    pass
