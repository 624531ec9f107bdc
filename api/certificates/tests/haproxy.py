"""Run the real HAProxy on the PEM files the app produces: ``-c`` checks and a live listener."""

import os
import shutil
import socket
import subprocess
import time
from contextlib import contextmanager
from pathlib import Path

HAPROXY = os.environ.get("FULCRUM_HAPROXY") or shutil.which("haproxy") or "/usr/sbin/haproxy"
AVAILABLE = Path(HAPROXY).is_file() or shutil.which(HAPROXY) is not None

# Files are named through ${FULCRUM_RUN_DIR}, as the node agent's configuration does.
CONFIG = """\
defaults
    mode http
    timeout connect 1s
    timeout client 5s
    timeout server 5s

frontend tls
    bind 127.0.0.1:{port} {bind_options}
    http-request return status 200 content-type text/plain string ok
"""


def write(directory, files, port, bind_options):
    """Lay out ``files`` ({name: text}) and a one-frontend haproxy.cfg; return its path."""
    for name, text in files.items():
        path = Path(directory) / name
        path.write_text(text)
        path.chmod(0o600)
    config = Path(directory) / "haproxy.cfg"
    config.write_text(CONFIG.format(port=port, bind_options=bind_options))
    return config


def check(directory, files, bind_options):
    """``haproxy -c`` on the configuration; returns (ok, output)."""
    config = write(directory, files, 8443, bind_options)
    proc = subprocess.run(
        [HAPROXY, "-c", "-f", str(config)],
        env={**os.environ, "FULCRUM_RUN_DIR": str(directory)},
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    return proc.returncode == 0, proc.stdout + proc.stderr


@contextmanager
def serving(directory, files, bind_options):
    """HAProxy listening on a free loopback port with the configuration; yields the port."""
    port = _free_port()
    config = write(directory, files, port, bind_options)
    proc = subprocess.Popen(
        [HAPROXY, "-db", "-f", str(config)],
        env={**os.environ, "FULCRUM_RUN_DIR": str(directory)},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        _wait_for(port, proc)
        yield port
    finally:
        proc.terminate()
        proc.communicate(timeout=10)


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_for(port, proc, timeout_s=10):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"haproxy exited: {proc.communicate()[0]}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"haproxy did not listen on port {port}")
