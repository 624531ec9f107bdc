"""Read a daemon's complaints back to the operator's objects. Pure: no I/O.

``haproxy -c`` and ``keepalived --config-test`` name a line of a file the operator never
wrote (``parsing [<check>/haproxy.cfg:57] : 'server s1' : ...``), or a section by the name
the compiler gave it (``Proxy 'vs-web'``). ``locate_haproxy`` and ``locate_keepalived`` say
which object and field each complaint concerns, as a path like verify's
(``pools/web/members/s1/address``), and keep the daemon's words as they are.

The section a line is in names the object, through compiler.names (or, for keepalived,
the addresses and marks it renders); the line's directive names the field, through the
tables below, which follow the templates line by line. Content switching lines are owned
as switching.compile_rules says. A complaint that names no place (HAProxy's closing
"Fatal errors found in configuration.") is a summary, kept only when nothing else is.
"""

import re
from dataclasses import dataclass

from compiler import names
from compiler.facts import firewall_mark
from compiler.switching import compile_rules


@dataclass(frozen=True)
class Complaint:
    """One line of a daemon's output and what it concerns."""

    said: str
    # The object and field, e.g. "pools/web/members/s1"; "" when none of the operator's.
    path: str = ""
    # It named a place (a file and line, a section, a server), so it is not a summary.
    pinned: bool = False


def _text(content):
    return content.decode() if isinstance(content, bytes) else content


def _join(*parts):
    return "/".join(p for p in parts if p)


def _bundle_file(files, named):
    """The file of ``files`` a daemon names by its path on the API host or on a node."""
    return max((f for f in files if named == f or named.endswith("/" + f)), key=len, default=None)


def _first_word(text, options):
    """The option of ``options`` that ``text`` mentions first, as a word of its own; None if none."""
    pattern = "|".join(re.escape(o) for o in sorted(options, key=len, reverse=True))
    found = re.search(rf"(?<![\w-])({pattern})(?![\w-])", text) if options else None
    return found[1] if found else None


def _by_prefix(table, line):
    """The value of ``table``'s longest key that ``line`` starts with; None if none."""
    keys = [k for k in table if line.startswith(k)]
    return table[max(keys, key=len)] if keys else None


def _summaries_dropped(complaints):
    pinned = [c for c in complaints if c.pinned]
    return pinned or complaints


# --- HAProxy ------------------------------------------------------------------------------

# A place in a file: "[<check>/haproxy.cfg:57]" or "(/etc/fulcrum/haproxy.cfg:26)".
_PLACE = re.compile(r"[\[(](?P<file>[^\s\[\]()']+):(?P<line>\d+)[\])]")
_QUOTED = re.compile(r"'([^']+)'")
# A proxy named without quotes: "Starting frontend vs-web: cannot bind socket".
_PROXY = re.compile(r"\b(?:frontend|backend|proxy)\s+([^\s':,]+)", re.IGNORECASE)

# The virtual-service field each frontend line of templates/haproxy/haproxy.cfg.j2 renders,
# by the line's first words (the longest match wins).
_FRONTEND_LINES = {
    "bind": "vip",
    "mode": "protocol",
    "disabled": "enabled",
    "maxconn": "max_connections",
    "timeout client": "client_timeout_ms",
    "timeout http-request": "http_request_timeout_ms",
    "timeout http-keep-alive": "keep_alive_timeout_ms",
    "acl fulcrum_allowed": "allow_cidrs",
    "tcp-request connection reject if !fulcrum_allowed": "allow_cidrs",
    "acl fulcrum_denied": "deny_cidrs",
    "tcp-request connection reject if fulcrum_denied": "deny_cidrs",
    "stick-table": "rate_limit",
    "tcp-request connection track-sc0": "rate_limit",
    "tcp-request connection reject if { sc_conn_cur(0)": "conn_limit",
    "http-request deny deny_status 429 if { sc_conn_cur(0)": "conn_limit",
    "http-request deny deny_status 429 if { sc_http_req_rate(0)": "rate_limit",
    "http-request deny deny_status 413": "max_body_bytes",
    "http-request redirect scheme": "redirect_https",
    "option forwardfor": "forwarded",
    "http-request set-header Forwarded": "forwarded",
    "http-request set-header X-SSL-Client": "client_auth",
    "acl fulcrum_routed": "rules",
    "use_backend": "rules",
    "http-response set-header Strict-Transport-Security": "hsts_max_age_s",
    "compression": "compression_types",
    "http-error": "error_pages",
    "default_backend": "default_pool",
}
# The options of a frontend's bind line by the field they render; the address otherwise.
_BIND_OPTIONS = {
    "port": "port",
    "crt": "certificates",
    "ssl-min-ver": "tls_policy",
    "ciphers": "tls_policy",
    "ciphersuites": "tls_policy",
    "alpn": "alpn_h2",
    "ca-file": "client_ca",
    "verify": "client_auth",
}
# The pool field each backend line renders.
_BACKEND_LINES = {
    "mode": "",
    "balance": "algorithm",
    "hash-type": "algorithm",
    "timeout connect": "connect_timeout_ms",
    "timeout server": "server_timeout_ms",
    "timeout queue": "queue_timeout_ms",
    "timeout check": "health_check/timeout_ms",
    "http-reuse": "http_reuse",
    "retry-on": "http_reuse",  # the retry that covers reuse of idle connections
    "http-request disable-l7-retry": "http_reuse",
    "option httpchk": "health_check",
    "http-check send": "health_check",
    "http-check expect status": "health_check/expected_status",
    "http-check expect": "health_check/expect_body",
    "option external-check": "health_check",
    "external-check": "health_check",
    "cookie": "persistence",
    "stick": "persistence",
    "stick-table": "persistence",
    "acl fulcrum_": "persistence",
    "tcp-request": "persistence",
    "tcp-response": "persistence",
    "http-error": "maintenance_page",
    "default-server": "",
    "server": "",
}
# Options of the server and default-server lines. HAProxy applies default-server's options
# to each server and names the server line when one fails, so the option a complaint
# mentions decides: "{member}" stands for the member on that line.
_SERVER_OPTIONS = {
    "address": "members/{member}/address",
    "weight": "members/{member}/weight",
    "backup": "members/{member}/backup",
    "maxconn": "members/{member}/max_connections",
    "maxqueue": "members/{member}/max_queue",
    "slowstart": "members/{member}/slowstart_ms",
    "disabled": "members/{member}/state",
    "cookie": "persistence",
    "check": "health_check",
    "check-ssl": "health_check",
    "inter": "health_check/interval_ms",
    "rise": "health_check/rise",
    "fall": "health_check/fall",
    "agent-check": "health_check",
    "agent-port": "health_check/agent_port",
    "agent-inter": "health_check/interval_ms",
    "ssl": "tls",
    "verify": "tls_verify",
    "ca-file": "tls_ca",
    "sni": "tls_sni",
    "send-proxy": "proxy_protocol",
    "send-proxy-v2": "proxy_protocol",
    "pool-max-conn": "pool_max_conn",
    "pool-purge-delay": "pool_purge_delay_ms",
}
# A dynamic-least-load pool's agent-check is fulcrum-loadd's, not a health check.
_FEEDBACK_OPTIONS = {
    "agent-check": "feedback_agent_port",
    "agent-port": "feedback_agent_port",
    "agent-inter": "feedback_interval_ms",
}


@dataclass(frozen=True)
class _Section:
    kind: str  # frontend | backend
    path: str  # virtual-services/<name> | pools/<name>
    obj: object  # the snapshot's VirtualService or Pool


class _HAProxyFiles:
    """A node's HAProxy files, indexed by what the compiler rendered each part from."""

    def __init__(self, snap, files):
        self.snap = snap
        self.lines = _text(files.get("haproxy.cfg", b"")).splitlines()
        self.sections, self.owners, self.rule_lines = {}, {}, {}
        for service in snap.virtual_services:
            self._add_service(service)
        for pool in snap.pools:
            self.sections[names.backend(pool.name)] = _Section("backend", f"pools/{pool.name}", pool)
            self.owners[f"haproxy.d/{names.maintenance_page_file(pool.name)}"] = f"pools/{pool.name}/maintenance_page"
        for cert in snap.certificates:
            for leaf in (names.certificate_file(cert.name), names.ca_file(cert.name)):
                self.owners[f"haproxy.d/{leaf}"] = f"certificates/{cert.name}"
        self.headers = self._headers()
        self.binds = {
            words[1]: f"{self.section_at(number).path}/vip"
            for number, words in enumerate((line.split() for line in self.lines), start=1)
            if words[:1] == ["bind"] and len(words) > 1 and self.section_at(number)
        }

    def _add_service(self, service):
        if service.ipvs:
            return
        path = f"virtual-services/{service.name}"
        section = names.frontend(service.name)
        self.sections[section] = _Section("frontend", path, service)
        switching = compile_rules(service)
        self.rule_lines[section] = switching.fields
        for leaf in switching.maps:
            self.owners[f"haproxy.d/{leaf}"] = f"{path}/rules"
        for page in service.error_pages:
            leaf = names.error_page_file(service.name, page.status)
            self.owners[f"haproxy.d/{leaf}"] = f"{path}/error_pages/{page.status}"

    def _headers(self):
        """For each line, the words of the header of the section it is in ("global", ...)."""
        headers, current = [], []
        for line in self.lines:
            if line[:1].isalpha():
                current = line.split()
            headers.append(current)
        return headers

    def section_at(self, number):
        """The frontend or backend that line ``number`` is in; None for any other section."""
        header = self.headers[number - 1]
        if header[:1] in (["frontend"], ["backend"]) and len(header) > 1:
            return self.sections.get(header[1])
        return None

    def locate(self, said):
        quoted = _QUOTED.findall(said)
        owned = self._owner(quoted)
        if owned:
            return Complaint(said, owned, pinned=True)
        for place in _PLACE.finditer(said):
            named = _bundle_file({"haproxy.cfg", *self.owners}, place["file"])
            if named == "haproxy.cfg":
                return Complaint(said, self._line(int(place["line"]), said), pinned=True)
            if named:
                return Complaint(said, self.owners[named], pinned=True)
        path = self._named(said, quoted)
        return Complaint(said, path, pinned=bool(path))

    def _owner(self, quoted):
        """The object whose file a complaint quotes (a certificate, an error page, a map)."""
        files = [_bundle_file(self.owners, q) for q in quoted]
        return next((self.owners[f] for f in files if f), "")

    def _line(self, number, said):
        if not 0 < number <= len(self.lines):
            return ""
        text = self.lines[number - 1].strip()
        section = self.section_at(number)
        if section is None:
            return self._peer(number, text)
        if not text or text.split()[0] in ("frontend", "backend"):
            return section.path
        return _join(section.path, self._field(section, text, said))

    def _peer(self, number, text):
        """A peer line of the peers section: that node's address."""
        words = text.split()
        peer = words[1] if self.headers[number - 1][:1] == ["peers"] and words[:1] == ["peer"] else ""
        return f"nodes/{peer}/address" if peer and self.snap.node(peer) else ""

    def _field(self, section, text, said):
        if section.kind == "frontend":
            rule = self._rule_line(section, text)
            if rule:
                return rule
            if text.startswith("bind"):
                return _BIND_OPTIONS.get(_first_word(said, _BIND_OPTIONS), "vip")
            return _by_prefix(_FRONTEND_LINES, text) or ""
        words = text.split()
        if words[0] in ("server", "default-server"):
            member = words[1] if words[0] == "server" and len(words) > 1 else ""
            return self._server_field(section.obj, member, said)
        return _by_prefix(_BACKEND_LINES, text) or ""

    def _rule_line(self, section, text):
        """The rule a content switching line renders; an ACL is known by its name alone."""
        lines = self.rule_lines[names.frontend(section.obj.name)]
        if text in lines or not text.startswith("acl "):
            return lines.get(text, "")
        declared = text.split()[:2]
        return next((field for line, field in lines.items() if line.split()[:2] == declared), "")

    def _server_field(self, pool, member, said):
        """The field a complaint about a server (or default-server) line concerns."""
        # The server's own name ('server pool-web/s1') is not an option the complaint mentions.
        backend = names.backend(pool.name)
        text = _QUOTED.sub(lambda q: "" if backend in q[1] or q[1] == member else q[0], _PLACE.sub("", said))
        options = {**_SERVER_OPTIONS, **(_FEEDBACK_OPTIONS if pool.algorithm == "dynamic-least-load" else {})}
        option = _first_word(text, options)
        if option is None:
            return f"members/{member}" if member else ""
        field = options[option]
        if "{member}" in field:
            return field.format(member=member) if member else ""
        return field

    def _named(self, said, quoted):
        """The object a complaint without a line names: a proxy, a server, a listener."""
        for token in [*quoted, *_PROXY.findall(said)]:
            proxy, _, server = token.removeprefix("server ").partition("/")
            section = self.sections.get(proxy)
            if section is None:
                continue
            members = {m.name for m in section.obj.members} if section.kind == "backend" else set()
            server = server or next((q for q in quoted if q in members), "")
            if server in members:
                return f"{section.path}/members/{server}"
            return _join(section.path, self._directive_field(section, said, quoted))
        # "bind [2001:db8::1]:80: ..." (the agent's bind check), "... [10.0.0.1:80]" (HAProxy's).
        words = [v for w in said.split() for v in (w.rstrip(":,"), w.strip("[]:,"))]
        return next((self.binds[w] for w in words if w in self.binds), "")

    @staticmethod
    def _directive_field(section, said, quoted):
        """The field of a directive a complaint without a line quotes, or mentions by its keyword."""
        table = _FRONTEND_LINES if section.kind == "frontend" else _BACKEND_LINES
        field = next((f for q in quoted if (f := _by_prefix(table, q))), "")
        keyword = _first_word(said, [k for k in table if " " not in k and table[k]])
        return field or (table[keyword] if keyword else "")


def locate_haproxy(snap, files, said):
    """What each of HAProxy's complaints ``said`` (lines) about ``files``, rendered from
    ``snap``, concerns; summaries are left out when another complaint names a place."""
    index = _HAProxyFiles(snap, files)
    return _summaries_dropped([index.locate(line) for line in said if line.strip()])


# --- keepalived ---------------------------------------------------------------------------

# "(/etc/keepalived/keepalived.conf: Line 48) number '351' outside range [1, 255]".
_KEEPALIVED_PLACE = re.compile(r"\((?P<file>[^\s()]+): Line (?P<line>\d+)\)")
# "(front-a) tracked interface eth1 doesn't exist": a VRRP instance, without a line.
_INSTANCE = re.compile(r"^\((?P<name>[^)\s]+)\)")

# The HA-group field each vrrp_instance line of templates/keepalived/keepalived.conf.j2
# renders, by its directive or the block it is in.
_INSTANCE_LINES = {
    "virtual_router_id": "vrid",
    "version": "version",
    "advert_int": "advert_interval_ms",
    "nopreempt": "preempt",
    "preempt_delay": "preempt_delay_s",
    "authentication": "auth_password",
    "auth_type": "auth_password",
    "auth_pass": "auth_password",
    "virtual_ipaddress": "vips",
    "garp_master_repeat": "garp_repeat",
    "garp_lower_prio_repeat": "garp_repeat",
    "garp_master_refresh": "garp_refresh_s",
    "track_interface": "track_interfaces",
    "track_file": "track_haproxy",
    "track_script": "witness",
}
# A virtual_server's lines: the service's fields, and its pool's ("pool:").
_VIRTUAL_SERVER_LINES = {
    "protocol": "protocol",
    "ip_family": "vip",
    "lvs_method": "forwarding",
    "ops": "one_packet_scheduling",
    "lvs_sched": "pool:algorithm",
    "sh-port": "pool:hash_port",
    "mh-port": "pool:hash_port",
    "sh-fallback": "pool:hash_fallback",
    "mh-fallback": "pool:hash_fallback",
    "persistence_timeout": "pool:persistence/timeout_s",
    "persistence_granularity": "pool:persistence",
    "delay_loop": "pool:health_check/interval_ms",
    "alpha": "pool:health_check/alpha",
    "omega": "pool:health_check/omega",
    "inhibit_on_failure": "pool:on_failure",
}
# A real_server's own lines (the member's fields) and its check's (the pool's health check).
_REAL_SERVER_LINES = {
    "weight": "weight",
    "lvs_method": "forwarding",
    "uthreshold": "max_connections",
    "lthreshold": "min_connections",
}
_CHECK_LINES = {
    "path": "path",
    "status_code": "expected_status",
    "digest": "expect_body",
    "regex": "expect_body",
    "virtualhost": "host",
    "enable_sni": "host",
    "type": "dns_type",
    "name": "dns_name",
    "misc_path": "script",
    "misc_timeout": "timeout_ms",
    "misc_dynamic": "script_dynamic",
    "connect_timeout": "timeout_ms",
    "retry": "fall",
    "delay_before_retry": "retry_interval_ms",
}


def _blocks(lines):
    """For each line, the headers (words) of the blocks it is in, outermost first; a line
    that opens a block is in it."""
    stack, out = [], []
    for line in lines:
        text = line.split("#", 1)[0].strip()
        if text.endswith("{"):
            stack.append(text[:-1].split())
        out.append(list(stack))
        if text == "}" and stack:
            stack.pop()
    return out


class _KeepalivedFiles:
    """A node's keepalived.conf, indexed by the objects its blocks were rendered from."""

    def __init__(self, snap, node, files):
        self.snap, self.node = snap, node
        self.lines = _text(files.get("keepalived.conf", b"")).splitlines()
        self.blocks = _blocks(self.lines)
        self.services = {}
        for service in snap.virtual_services:
            if service.ipvs and service.port_end:
                self.services[("fwmark", str(firewall_mark(service)))] = service
            elif service.ipvs:
                self.services[(service.vip, str(service.port))] = service

    def locate(self, said):
        place = _KEEPALIVED_PLACE.search(said)
        if place and place["file"].endswith("keepalived.conf"):
            return Complaint(said, self._line(int(place["line"])), pinned=True)
        instance = _INSTANCE.match(said)
        if instance and any(g.name == instance["name"] for g in self.snap.ha_groups):
            return Complaint(said, f"ha-groups/{instance['name']}", pinned=True)
        return Complaint(said)

    def _line(self, number):
        if not 0 < number <= len(self.lines):
            return ""
        words, blocks = self.lines[number - 1].split(), self.blocks[number - 1]
        directive = words[0] if words else ""
        outer = blocks[0] if blocks else []
        if outer[:1] == ["vrrp_instance"] and len(outer) > 1:
            return self._instance(outer[1], blocks[1:], directive, words)
        if outer[:1] == ["vrrp_script"] and len(outer) > 1:
            group = next((g for g in self.snap.ha_groups if names.witness_script(g.name) == outer[1]), None)
            return f"ha-groups/{group.name}/witness" if group else ""
        if outer[:1] == ["virtual_server"]:
            return self._virtual_server(tuple(outer[1:3]), blocks[1:], directive, words)
        if outer[:1] == ["global_defs"]:
            return "ipvs-sync" if directive == "lvs_sync_daemon" else ""
        return ""

    def _instance(self, name, inner, directive, words):
        group = next((g for g in self.snap.ha_groups if g.name == name), None)
        if group is None:
            return ""
        path = f"ha-groups/{name}"
        entry = next((e for e in group.nodes if e.node == self.node), None)
        if directive in ("priority", "interface") and entry and (directive == "priority" or entry.interface):
            return f"{path}/nodes/{self.node}/{directive}"
        if directive == "unicast_src_ip":
            return f"nodes/{self.node}/address"
        block = inner[0][0] if inner else ""
        if block == "unicast_peer":
            peer = next((n for n in self.snap.nodes if words and n.address == words[0]), None)
            return f"nodes/{peer.name}/address" if peer else f"{path}/nodes"
        if block == "virtual_ipaddress" and words and directive != "virtual_ipaddress":
            index = next((i for i, v in enumerate(group.vips) if v.split("/")[0] == words[0].split("/")[0]), None)
            return f"{path}/vips/{index}" if index is not None else f"{path}/vips"
        return _join(path, _INSTANCE_LINES.get(block or directive, ""))

    def _virtual_server(self, key, inner, directive, words):
        service = self.services.get(key)
        if service is None:
            return ""
        pool = self.snap.pool(service.default_pool)
        if not inner:
            field = _VIRTUAL_SERVER_LINES.get(directive, "")
            if directive == "sorry_server":
                backup = next((m for m in pool.members if m.backup and words[1:2] == [m.address]), None)
                field = f"pool:members/{backup.name}" if backup else "pool:members"
            if field.startswith("pool:"):
                return _join(f"pools/{pool.name}", field.removeprefix("pool:"))
            return _join(f"virtual-services/{service.name}", field)
        return self._real_server(pool, service, inner, directive)

    def _real_server(self, pool, service, inner, directive):
        address = inner[0][1:]
        member = next(
            (m for m in pool.members if address[:1] == [m.address] and address[1:2] in ([], [str(m.port)])), None
        )
        if len(inner) > 1:  # inside the check block: the pool's health check
            return _join(f"pools/{pool.name}/health_check", _CHECK_LINES.get(directive, ""))
        if member is None:
            return f"pools/{pool.name}/members"
        return _join(f"pools/{pool.name}/members/{member.name}", _REAL_SERVER_LINES.get(directive, ""))


def locate_keepalived(snap, node, files, said):
    """What each of keepalived's complaints ``said`` (lines) about ``node``'s ``files``,
    rendered from ``snap``, concerns; summaries are left out when another names a place."""
    index = _KeepalivedFiles(snap, node, files)
    return _summaries_dropped([index.locate(line) for line in said if line.strip()])
