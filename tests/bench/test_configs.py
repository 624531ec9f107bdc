"""The three systems' configurations (no root, no traffic): what they contain, and that the
daemons accept them (``haproxy -c``; ``nginx -t`` in a private network namespace, since it
binds the VIPs)."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from tests.bench import certs, configs
from tests.bench.daemons import daemon_commands, write_files
from tests.bench.plan import LISTENER, LISTENERS, SYSTEMS, listeners_of, non_matching_prefixes, vip
from tests.bench.webbench import system_files

THINK_MS = 200


@pytest.fixture(scope="module")
def tls(tmp_path_factory):
    return certs.generate(tmp_path_factory.mktemp("tls"))


@pytest.fixture(scope="module")
def written(tls, tmp_path_factory):
    """Every system's files written to its own directory, as the benchmark does."""
    root = tmp_path_factory.mktemp("conf")
    dirs = {}
    for system in SYSTEMS:
        dirs[system] = root / system
        for sub in ("run", "tmp"):
            (dirs[system] / sub).mkdir(parents=True)
        write_files(dirs[system], system_files(system, tls, dirs[system], THINK_MS))
    return dirs


def check_with_daemon(system, directory):
    check_argv, _, extra_env = daemon_commands(system, directory)
    return subprocess.run(check_argv, env={**os.environ, **extra_env}, capture_output=True, text=True, timeout=60)


def test_rule_sets_count_the_default_pool_as_the_seed_does():
    assert len(non_matching_prefixes(3)) == 0
    assert len(non_matching_prefixes(50)) == 47  # "the 47 extra rules never match"
    assert len(non_matching_prefixes(5000)) == 4997
    assert not any(prefix.startswith("/wb/") for prefix in non_matching_prefixes(5000))
    rules = configs.fulcrum_rules(LISTENER["l7-50"])
    assert len(rules) == 49 and [r["name"] for r in rules[-2:]] == ["gif", "htm"]


def test_every_listener_has_its_own_vip_per_system():
    addresses = [vip(system, x) for system in SYSTEMS for x in listeners_of(system)]
    assert len(addresses) == len(set(addresses))
    assert {x.name for x in LISTENERS} - {x.name for x in listeners_of("nginx")} == {"mux-default"}


@pytest.mark.parametrize("system", ["fulcrum", "haproxy", "fulcrum-host"])
def test_haproxy_accepts_both_haproxy_configs(written, system):
    check = check_with_daemon(system, written[system])
    assert check.returncode == 0, check.stdout + check.stderr


def test_both_haproxy_configs_turn_the_pattern_cache_off_once(written):
    for system in ("fulcrum", "haproxy", "fulcrum-host"):
        text = (written[system] / "haproxy.cfg").read_text()
        assert text.count("tune.pattern.cache-size 0") == 1
        assert text.index("tune.pattern.cache-size 0") < text.index("\ndefaults")


def test_the_hand_written_haproxy_handles_connections_as_fulcrum_defaults_do(written):
    """The two HAProxy configurations differ in how they are written, not in what they do with
    server connections: the hand-written one repeats the compiler's pool defaults."""
    compiled = (written["fulcrum"] / "haproxy.cfg").read_text().splitlines()
    by_hand = (written["haproxy"] / "haproxy.cfg").read_text().splitlines()
    for line in (
        "    option splice-auto",
        "    http-reuse always",
        "    retry-on conn-failure empty-response",
        "    http-request disable-l7-retry unless { method GET HEAD OPTIONS TRACE PUT DELETE }",
    ):
        assert line in compiled and line in by_hand, line
    # Every backend reuses so, in both: Fulcrum's pools at their defaults, and by hand.
    for lines in (compiled, by_hand):
        assert lines.count("    http-reuse always") == lines.count("    balance roundrobin") > 0


def test_fulcrum_folds_the_never_matching_rules_into_one_map(written):
    text = (written["fulcrum"] / "haproxy.cfg").read_text()
    assert "rules app-0000 .. app-4996: 4997 path_prefix rules as one map lookup" in text
    lines = (written["fulcrum"] / "haproxy.d" / "vs-l7-5000.rules-0.map").read_text().splitlines()
    assert len(lines) == 4997 and lines[0] == "/app0000/ pool-all"
    assert "cookie IMG insert indirect nocache httponly" in text
    assert "http-reuse always" in text and "pool-max-conn 4" in text


def test_hand_written_haproxy_uses_one_map_beg_lookup(written):
    text = (written["haproxy"] / "haproxy.cfg").read_text()
    assert text.count("map_beg(") == 2  # the 50- and 5,000-rule listeners
    assert len((written["haproxy"] / "maps" / "l7-5000.map").read_text().splitlines()) == 4997
    assert "ca-file" in text and "verify required" in text


def test_nginx_routes_with_prefix_locations_and_keeps_upstream_keepalive(written):
    text = (written["nginx"] / "nginx.conf").read_text()
    assert text.count("location ^~ /app") == 47 + 4997
    assert 'proxy_set_header Connection "";' in text and "keepalive 32;" in text
    # proxy_set_header in a server block replaces the inherited list: the client-cert
    # servers must repeat the keep-alive header.
    assert text.count('proxy_set_header Connection "";') == 1 + 2


@pytest.mark.skipif(shutil.which("unshare") is None, reason="needs unshare(1)")
def test_nginx_accepts_its_config(written):
    directory = written["nginx"]
    check_argv, _, _ = daemon_commands("nginx", directory)
    # Without root, a user namespace maps us to root; nginx's default worker user would
    # not exist there, so the check runs the workers as that mapped root instead.
    unshare = ["unshare", "-n"] if os.geteuid() == 0 else ["unshare", "-rn"]
    if os.geteuid() != 0:
        check_argv += ["-g", "user root;"]
    script = "ip link set lo up && ip route add local 10.77.100.0/24 dev lo && exec " + " ".join(
        f"'{arg}'" for arg in check_argv
    )
    check = subprocess.run([*unshare, "sh", "-c", script], capture_output=True, text=True, timeout=60)
    if check.returncode != 0 and "unshare" in check.stderr and "Operation not permitted" in check.stderr:
        pytest.skip("user namespaces are not available here")
    assert check.returncode == 0, check.stdout + check.stderr


def test_certificates_are_signed_by_their_ca(tls, tmp_path):
    for material in tls.values():
        (tmp_path / "ca.pem").write_text(material.ca_pem)
        (tmp_path / "server.pem").write_text(material.server_cert_pem)
        for cert in (tmp_path / "server.pem", material.client_cert_path):
            proc = subprocess.run(
                ["openssl", "verify", "-CAfile", str(tmp_path / "ca.pem"), str(cert)], capture_output=True, text=True
            )
            assert proc.returncode == 0, proc.stderr
        assert len(certs.fingerprint(material.server_cert_pem)) == 64
