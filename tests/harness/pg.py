"""A private PostgreSQL cluster for `make demo` and the tests (Debian's server, initdb/pg_ctl).

It lives in the git-ignored `.state/pg` folder, listens only on a Unix socket in
`.state/pg/run`, and trusts local connections as the `fulcrum` role. PostgreSQL refuses to
run as root, so as root the cluster belongs to the `postgres` system user; when that user
cannot reach the repository (a clone under a private home), the data lives in
/var/tmp/fulcrum-pg-<hash> and `.state/pg` links to it.

    python -m tests.harness.pg start|stop|url
"""

import argparse
import contextlib
import fcntl
import glob
import hashlib
import os
import pwd
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
STATE = REPO / ".state" / "pg"
DATABASE = "fulcrum"
ROLE = "fulcrum"


def _bin(name):
    found = shutil.which(name) or next(iter(sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"), reverse=True)), None)
    if not found:
        raise SystemExit(f"{name} not found: install Debian's postgresql package (make deps)")
    return found


def _owner():
    return "postgres" if os.geteuid() == 0 else None


def _as_owner(argv, **kw):
    owner = _owner()
    argv = ["runuser", "-u", owner, "--", *argv] if owner else argv
    return subprocess.run(argv, check=True, **kw)


def _home():
    """The folder that holds data/ and run/, reachable by the cluster's owner."""
    if STATE.is_symlink() or STATE.is_dir():
        return STATE.resolve()
    STATE.parent.mkdir(parents=True, exist_ok=True)
    owner = _owner()
    if owner and subprocess.run(["runuser", "-u", owner, "--", "test", "-x", str(STATE.parent)]).returncode != 0:
        target = Path("/var/tmp") / f"fulcrum-pg-{hashlib.sha256(str(REPO).encode()).hexdigest()[:12]}"
        target.mkdir(mode=0o700, exist_ok=True)
        STATE.symlink_to(target)
    else:
        STATE.mkdir(mode=0o700)
    home = STATE.resolve()
    if owner:
        user = pwd.getpwnam(owner)
        os.chown(home, user.pw_uid, user.pw_gid)
    return home


def url(database=DATABASE):
    return f"postgresql://{ROLE}@/{database}?host={STATE.resolve() / 'run'}"


def _psql(sql, database="postgres"):
    run = str(STATE.resolve() / "run")
    argv = [_bin("psql"), "-h", run, "-U", ROLE, "-d", database, "-v", "ON_ERROR_STOP=1", "-tAc", sql]
    return subprocess.run(argv, check=True, capture_output=True, text=True).stdout.strip()


def create_database(name):
    """Create database ``name`` (a plain identifier) unless it exists; return its URL."""
    if not name.isidentifier():
        raise ValueError(f"database name {name!r} must be a plain identifier")
    if not _psql(f"SELECT 1 FROM pg_database WHERE datname = '{name}'"):
        _psql(f'CREATE DATABASE "{name}"')
    return url(name)


def drop_database(name):
    if not name.isidentifier():
        raise ValueError(f"database name {name!r} must be a plain identifier")
    _psql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def running():
    home = STATE.resolve()
    return (home / "data" / "postmaster.pid").exists() and subprocess.run(
        [_bin("pg_isready"), "-q", "-h", str(home / "run")]
    ).returncode == 0


@contextlib.contextmanager
def _starting():
    """One start at a time: test tiers run side by side (tests/run-tiers.sh lanes)."""
    STATE.parent.mkdir(parents=True, exist_ok=True)
    with open(STATE.parent / "pg.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def start():
    """Create the cluster on first use, start it if stopped; return the DATABASE_URL."""
    with _starting():
        return _start()


def _start():
    home = _home()
    data, run = home / "data", home / "run"
    if not (data / "PG_VERSION").exists():
        _as_owner(
            [_bin("initdb"), "-D", str(data), "-U", ROLE, "--auth=trust", "-E", "UTF8", "--no-instructions"],
            stdout=subprocess.DEVNULL,
        )
    if not running():
        _as_owner(["mkdir", "-p", str(run)])
        options = f"-c listen_addresses='' -c unix_socket_directories='{run}' -c fsync=off -c max_connections=200"
        _as_owner(
            [_bin("pg_ctl"), "-D", str(data), "-l", str(home / "postgres.log"), "-o", options, "-w", "start"],
            stdout=subprocess.DEVNULL,
        )
    return create_database(DATABASE)


def stop():
    if STATE.exists() and (STATE.resolve() / "data" / "postmaster.pid").exists():
        _as_owner(
            [_bin("pg_ctl"), "-D", str(STATE.resolve() / "data"), "-m", "fast", "-w", "stop"], stdout=subprocess.DEVNULL
        )


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m tests.harness.pg", description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=["start", "stop", "url"])
    args = parser.parse_args(argv)
    if args.action == "start":
        print(start())
    elif args.action == "stop":
        stop()
    else:
        print(url())


if __name__ == "__main__":
    sys.exit(main())
