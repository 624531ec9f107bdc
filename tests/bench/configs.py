"""The three systems' configurations for the same jobs (see plan.py), as files in memory.

Each generator returns ``{path relative to its config dir: bytes}``; paths inside the files
are absolute under ``conf_dir`` so the daemons can be started from anywhere.

- Fulcrum: a snapshot (the API's JSON form) run through the real compiler, unchanged
  except for the benchmark's global tuning line (below).
- Hand-written HAProxy: what an expert writes by hand for the same job: ``use_backend``
  on ``path_end``, one ``map_beg`` lookup for the never-matching prefixes, shared backends,
  and the same connection handling as Fulcrum's pool defaults (reuse of idle server
  connections for every request, an L7 retry for idempotent requests, splicing), so that
  the two differ only in how the configuration is written.
- nginx: ``location ^~`` prefix blocks (nginx keeps them in a tree), regex locations for
  the extensions, upstream groups with keepalive.

Both HAProxy configurations get ``tune.pattern.cache-size 0``: the WebBench mix has only
eight distinct URLs, and HAProxy's pattern LRU cache would otherwise answer every ACL
lookup from the cache and hide what the rule sets cost.
"""

from __future__ import annotations

import sys
from pathlib import Path

from tests.bench.certs import KeyTypeMaterial, fingerprint
from tests.bench.plan import (
    COOKIE_NAMES,
    MUX_CAPPED_IDLE_PER_SERVER,
    MUX_CAPPED_REUSE,
    NGINX_UPSTREAM_KEEPALIVE,
    POOLS,
    Listener,
    listeners_of,
    member_address,
    mux_timeout_ms,
    non_matching_prefixes,
    vip,
)
from tests.harness.lab import SERVER_ADDRS

REPO_ROOT = Path(__file__).resolve().parents[2]
HAPROXY_TUNING = ("tune.pattern.cache-size 0",)
HEALTH_CHECK = {
    "type": "http",
    "path": "/health",
    "expected_status": 200,
    "interval_ms": 2000,
    "timeout_ms": 1000,
    "rise": 2,
    "fall": 3,
}
# Mozilla's "intermediate" TLS settings, which Fulcrum's default tls_policy follows too.
TLS12_CIPHERS = (
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:"
    "ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305"
)
NGINX_PROXY_HEADERS = (
    'proxy_set_header Connection "";',  # keep-alive to the upstream servers
    "proxy_set_header Host $host;",  # the client's, or server_name for an HTTP/1.0 request without one
    "proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;",
)
TLS13_SUITES = "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256"


# -- Fulcrum --------------------------------------------------------------------------------


def _fulcrum_pool(name: str, members: tuple[str, ...], **settings) -> dict:
    return {
        "name": name,
        "algorithm": "round-robin",
        "health_check": HEALTH_CHECK,
        "members": [
            {"name": m, "address": member_address(m), "port": 80, "weight": 1, "state": "enabled"} for m in members
        ],
        **settings,
    }


def _fulcrum_pools() -> list[dict]:
    pools = [_fulcrum_pool(name, members) for name, members in POOLS.items()]
    for name in ("images", "pages"):
        persistence = {"type": "cookie_insert", "cookie_name": COOKIE_NAMES[name]}
        pools.append(_fulcrum_pool(f"{name}-ck", POOLS[name], persistence=persistence))
    capped = {"http_reuse": MUX_CAPPED_REUSE, "pool_max_conn": MUX_CAPPED_IDLE_PER_SERVER}
    pools.append(_fulcrum_pool("mux", POOLS["all"], **capped))
    return pools


def _use_pool(name: str, kind: str, value: str, pool: str) -> dict:
    return {"name": name, "conditions": [{"kind": kind, "values": [value]}], "action": "use_pool", "pool": pool}


def fulcrum_rules(listener: Listener) -> list[dict]:
    """Never-matching prefixes first (every request walks them), then .gif and .htm."""
    suffix = "-ck" if listener.cookies else ""
    rules = [
        _use_pool(f"app-{i:04d}", "path_prefix", prefix, "all")
        for i, prefix in enumerate(non_matching_prefixes(listener.rules))
    ]
    rules.append(_use_pool("gif", "path_extension", "gif", f"images{suffix}"))
    rules.append(_use_pool("htm", "path_extension", "htm", f"pages{suffix}"))
    return rules


def _fulcrum_service(system: str, listener: Listener, think_ms: int) -> dict:
    service = {
        "name": listener.name,
        "vip": vip(system, listener),
        "port": listener.port,
        "protocol": "https" if listener.tls else "http",
        "enabled": True,
        "default_pool": "mux" if listener.name == "mux" else "all",
    }
    if listener.rules:
        service["rules"] = fulcrum_rules(listener)
    if listener.tls:
        service["certificates"] = [f"server-{listener.tls}"]
    if listener.client_certs:
        service |= {"client_auth": "required", "client_ca": f"ca-{listener.tls}"}
    if listener.mux:
        service |= {"client_timeout_ms": mux_timeout_ms(think_ms), "keep_alive_timeout_ms": mux_timeout_ms(think_ms)}
    return service


def fulcrum_snapshot(tls: dict[str, KeyTypeMaterial], think_ms: int, system: str = "fulcrum") -> dict:
    """The revision Fulcrum compiles: every listener of plan.py on ``system``'s VIPs, in the
    API's JSON form."""
    certificates = []
    for key_type, material in tls.items():
        certificates.append({"name": f"server-{key_type}", "fingerprint": fingerprint(material.server_cert_pem)})
        certificates.append({"name": f"ca-{key_type}", "fingerprint": fingerprint(material.ca_pem), "has_key": False})
    return {
        "revision": 1,
        "virtual_services": [_fulcrum_service(system, x, think_ms) for x in listeners_of(system)],
        "pools": _fulcrum_pools(),
        "certificates": certificates,
    }


def with_global_tuning(config: bytes, lines: tuple[str, ...] = HAPROXY_TUNING) -> bytes:
    """Add the benchmark's tuning lines at the top of the global section."""
    head, sep, tail = config.partition(b"\nglobal\n")
    if not sep or b"\nglobal\n" in tail:
        raise ValueError("expected exactly one global section")
    added = "".join(f"    {line}  # benchmark tuning, same in every HAProxy config\n" for line in lines)
    return head + sep + added.encode() + tail


def fulcrum_files(tls: dict[str, KeyTypeMaterial], think_ms: int, system: str = "fulcrum") -> dict[str, bytes]:
    """Run the real compiler: snapshot_from_dict -> render_haproxy (which verifies)."""
    api_dir = str(REPO_ROOT / "api")
    if api_dir not in sys.path:
        sys.path.insert(0, api_dir)
    from compiler import render_haproxy, snapshot_from_dict, verify
    from compiler.render import CertificateFiles

    pems = {}
    for key_type, material in tls.items():
        pems[f"server-{key_type}"] = CertificateFiles(crt=material.server_bundle, ca=material.server_cert_pem)
        pems[f"ca-{key_type}"] = CertificateFiles(crt=material.ca_pem, ca=material.ca_pem)
    files = render_haproxy(verify(snapshot_from_dict(fulcrum_snapshot(tls, think_ms, system))), "bench", pems)
    return files | {"haproxy.cfg": with_global_tuning(files["haproxy.cfg"])}


# -- hand-written HAProxy -------------------------------------------------------------------


def _cert_files(tls: dict[str, KeyTypeMaterial]) -> dict[str, bytes]:
    files = {}
    for key_type, material in tls.items():
        files[f"certs/server-{key_type}.pem"] = material.server_bundle.encode()
        files[f"certs/ca-{key_type}.pem"] = material.ca_pem.encode()
    return files


def _haproxy_frontend(listener: Listener, conf_dir: Path, think_ms: int) -> tuple[list[str], dict[str, bytes]]:
    address = f"{vip('haproxy', listener)}:{listener.port}"
    bind = f"    bind {address}"
    if listener.tls:
        bind += f" ssl crt {conf_dir}/certs/server-{listener.tls}.pem alpn h2,http/1.1"
    if listener.client_certs:
        bind += f" ca-file {conf_dir}/certs/ca-{listener.tls}.pem verify required"
    lines = ["", f"frontend {listener.name}", bind]
    maps = {}
    if listener.mux:
        timeout = mux_timeout_ms(think_ms)
        lines += [f"    timeout client {timeout}ms", f"    timeout http-keep-alive {timeout}ms"]
    if listener.client_certs:
        lines += [
            "    http-request set-header X-SSL-Client-Verify %[ssl_c_verify]",
            "    http-request set-header X-SSL-Client-DN %{+Q}[ssl_c_s_dn]",
        ]
    prefixes = non_matching_prefixes(listener.rules)
    if prefixes:
        leaf = f"maps/{listener.name}.map"
        maps[leaf] = "".join(f"{prefix} all\n" for prefix in prefixes).encode()
        lines += [
            f"    http-request set-var(txn.app) path,map_beg({conf_dir}/{leaf})",
            "    use_backend %[var(txn.app)] if { var(txn.app) -m found }",
        ]
    if listener.rules:
        suffix = "-ck" if listener.cookies else ""
        lines += [
            f"    use_backend images{suffix} if {{ path_end -i .gif }}",
            f"    use_backend pages{suffix} if {{ path_end -i .htm }}",
        ]
    lines.append(f"    default_backend {'mux' if listener.mux else 'all'}")
    return lines, maps


def _haproxy_backend(name: str, members: tuple[str, ...], cookie: str = "", idle_max: int = -1):
    lines = ["", f"backend {name}", "    balance roundrobin", "    option httpchk GET /health"]
    lines += [
        "    http-reuse always",
        "    retry-on conn-failure empty-response",
        "    http-request disable-l7-retry unless { method GET HEAD OPTIONS TRACE PUT DELETE }",
    ]
    if cookie:
        lines.append(f"    cookie {cookie} insert indirect nocache httponly")
    lines.append("    default-server inter 2s rise 2 fall 3" + (f" pool-max-conn {idle_max}" if idle_max >= 0 else ""))
    for m in members:
        lines.append(f"    server {m} {member_address(m)}:80 check" + (f" cookie {m}" if cookie else ""))
    return lines


def haproxy_files(tls: dict[str, KeyTypeMaterial], conf_dir: Path, think_ms: int) -> dict[str, bytes]:
    lines = [
        "# Hand-written HAProxy configuration for the Fulcrum benchmark (tests/bench/configs.py).",
        "global",
        *(f"    {line}  # benchmark tuning, same in every HAProxy config" for line in HAPROXY_TUNING),
        f"    ssl-default-bind-ciphers {TLS12_CIPHERS}",
        f"    ssl-default-bind-ciphersuites {TLS13_SUITES}",
        "    ssl-default-bind-options prefer-client-ciphers ssl-min-ver TLSv1.2",
        "",
        "defaults",
        "    mode http",
        "    option http-keep-alive",
        "    option splice-auto",
        "    option forwardfor",
        "    timeout connect 5s",
        "    timeout client 30s",
        "    timeout server 30s",
        "    timeout http-request 10s",
        "    timeout http-keep-alive 10s",
    ]
    files = _cert_files(tls)
    for listener in listeners_of("haproxy"):
        frontend, maps = _haproxy_frontend(listener, conf_dir, think_ms)
        lines += frontend
        files |= maps
    for name, members in POOLS.items():
        lines += _haproxy_backend(name, members)
    for name in ("images", "pages"):
        lines += _haproxy_backend(f"{name}-ck", POOLS[name], cookie=COOKIE_NAMES[name])
    lines += _haproxy_backend("mux", POOLS["all"], idle_max=MUX_CAPPED_IDLE_PER_SERVER)
    return files | {"haproxy.cfg": ("\n".join(lines) + "\n").encode()}


# -- nginx ----------------------------------------------------------------------------------


def _nginx_upstream(name: str, members: tuple[str, ...]) -> list[str]:
    servers = [f"        server {member_address(m)}:80 max_fails=3 fail_timeout=2s;" for m in members]
    return [f"    upstream {name} {{", *servers, f"        keepalive {NGINX_UPSTREAM_KEEPALIVE};", "    }"]


def _nginx_cookie_maps() -> list[str]:
    """Cookie insert in open-source nginx: route by the cookie if it names a pool member,
    else balance and set the cookie to the server that answered."""
    by_address = [f"        {addr}:80 {name};" for name, addr in SERVER_ADDRS.items()]
    lines = ["    map $upstream_addr $upstream_server_name {", *by_address, "    }"]
    for pool, cookie in COOKIE_NAMES.items():
        members = POOLS[pool]
        lines += [f"    map $cookie_{cookie} ${pool}_ck_upstream {{", f"        default {pool};"]
        lines += [f"        {m} srv_{m};" for m in members] + ["    }"]
        set_cookie = f'"{cookie}=$upstream_server_name; path=/; HttpOnly"'
        lines += [f"    map $cookie_{cookie} ${pool}_ck_set_cookie {{", f"        default {set_cookie};"]
        lines += [f'        {m} "";' for m in members] + ["    }"]
        lines += [f"    map $cookie_{cookie} ${pool}_ck_cache_control {{", "        default private;"]
        lines += [f'        {m} "";' for m in members] + ["    }"]
    return lines


def _nginx_location(match: str, upstream: str, cookie_pool: str = "") -> list[str]:
    if not cookie_pool:
        return [f"        location {match} {{ proxy_pass http://{upstream}; }}"]
    return [
        f"        location {match} {{",
        f"            proxy_pass http://${cookie_pool}_ck_upstream;",
        f"            add_header Set-Cookie ${cookie_pool}_ck_set_cookie always;",
        f"            add_header Cache-Control ${cookie_pool}_ck_cache_control always;",
        "        }",
    ]


def _nginx_server(listener: Listener, conf_dir: Path, think_ms: int) -> list[str]:
    address = f"{vip('nginx', listener)}:{listener.port}"
    lines = ["    server {", f"        listen {address}" + (" ssl;" if listener.tls else ";")]
    lines.append(f"        server_name {vip('nginx', listener)};")
    if listener.tls:
        bundle = f"{conf_dir}/certs/server-{listener.tls}.pem"
        lines += [f"        ssl_certificate {bundle};", f"        ssl_certificate_key {bundle};"]
    if listener.client_certs:
        lines += [
            f"        ssl_client_certificate {conf_dir}/certs/ca-{listener.tls}.pem;",
            "        ssl_verify_client on;",
            # proxy_set_header at this level replaces, not extends, the inherited list.
            *(f"        {line}" for line in NGINX_PROXY_HEADERS),
            "        proxy_set_header X-SSL-Client-Verify $ssl_client_verify;",
            "        proxy_set_header X-SSL-Client-DN $ssl_client_s_dn;",
        ]
    if listener.mux:
        lines.append(f"        keepalive_timeout {mux_timeout_ms(think_ms)}ms;")
    for prefix in non_matching_prefixes(listener.rules):
        lines += _nginx_location(f"^~ {prefix}", "all")
    if listener.rules:
        lines += _nginx_location(r"~* \.gif$", "images", "images" if listener.cookies else "")
        lines += _nginx_location(r"~* \.htm$", "pages", "pages" if listener.cookies else "")
    lines += _nginx_location("/", "all")
    return [*lines, "    }"]


def nginx_files(tls: dict[str, KeyTypeMaterial], conf_dir: Path, think_ms: int) -> dict[str, bytes]:
    lines = [
        "# nginx as a reverse proxy for the Fulcrum benchmark (tests/bench/configs.py).",
        "worker_processes 2;",
        "worker_rlimit_nofile 20000;",
        f"pid {conf_dir}/nginx.pid;",
        f"error_log {conf_dir}/error.log warn;",
        "events { worker_connections 10000; }",
        "http {",
        "    access_log off;",
        "    server_tokens off;",
        "    keepalive_timeout 10s;",
        "    keepalive_requests 1000000;",
        *(
            f"    {kind}_temp_path {conf_dir}/tmp/{kind};"
            for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
        ),
        "    proxy_http_version 1.1;",
        *(f"    {line}" for line in NGINX_PROXY_HEADERS),
        "    # Stream large answers through memory buffers, as HAProxy does, instead of spooling to disk.",
        "    proxy_max_temp_file_size 0;",
        "    ssl_protocols TLSv1.2 TLSv1.3;",
        f"    ssl_ciphers {TLS12_CIPHERS};",
        "    ssl_prefer_server_ciphers off;",
        "    ssl_session_cache shared:SSL:10m;",
    ]
    for name, members in POOLS.items():
        lines += _nginx_upstream(name, members)
    for name in SERVER_ADDRS:
        lines += _nginx_upstream(f"srv_{name}", (name,))
    lines += _nginx_cookie_maps()
    for listener in listeners_of("nginx"):
        lines += _nginx_server(listener, conf_dir, think_ms)
    lines.append("}")
    return _cert_files(tls) | {"nginx.conf": ("\n".join(lines) + "\n").encode()}
