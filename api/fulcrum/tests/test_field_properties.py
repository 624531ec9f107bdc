"""What the API accepts, the daemons accept (issue 20).

For every operator-facing string, list and regex field of the configuration (FIELDS: each
field in each place it is rendered), hypothesis generates hostile and odd values: whitespace,
quotes, backslashes, '#', newlines and CR, NUL, lone surrogates, right-to-left and combining
marks, emoji, values just under, at and over the limits, HAProxy and keepalived syntax,
regex edge cases, lists at and over their limits. Each is sent through the API on
PostgreSQL as an operator sends it: a PATCH of one object of a complete configuration (two
nodes in an HA group with IPVS sync, an https service with rules, its pools, a layer-4
service checked by keepalived).

A refused value gets a 400 on a field sent (or, when it would break another object, the
compiler's problem there; or, for text JSON cannot carry, on the body), and never a valid
value it must accept. An accepted value is frozen and compiled for a node exactly as an
apply does (revisions.publish.compile_for_node): `haproxy -c`, `keepalived --config-test`
and `nft --check` must take the files, or the test shows the field, the value and the
daemon's words. keepalived's config test leaves the regexes of its HTTP checks to its
checker, which drops one PCRE2 refuses with a line in its log: they are compiled here.

No operator string may become a directive. Each accepted configuration is compared with its
twin, the same snapshot with every character of the value a parser could take for syntax
replaced by x (rendered without verify, which a twin need not pass): read with each
daemon's own quoting and comment rules, every section must have as many lines of as many
words. No acl pattern may stand among the acl's options, where HAProxy reads '-f FILE'
however it is quoted, and each line of a map must be a key and a backend. Addresses are rendered from their parsed form, not from the
operator's text: they get the daemons' checks, not a twin.

test_every_operator_string_is_covered keeps the catalogue honest: a string, text or JSON
field added to a configuration model, or a string key added to one of its JSON shapes,
fails it until FIELDS covers it or NOT_RENDERED says why no daemon reads it; a new model of
a project app must be classed too.

Deterministic (derandomize, no example database) and bounded: EXAMPLES values per field,
fewer for names, addresses and interfaces (FULCRUM_FIELD_EXAMPLES raises it for a longer
local run), plus the values pinned after a defect; the configuration is made once, and
each daemon checks a given content of its files once: 25 s on two cores, 45 s when they are busy.
"""

import copy
import functools
import hashlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from unittest import mock

import pytest
from django.apps import apps
from django.contrib.auth import get_user_model
from django.db import models, transaction
from hypothesis import HealthCheck as Health
from hypothesis import example, given, settings
from hypothesis import strategies as st
from rest_framework import serializers
from rest_framework.test import APIClient

from certificates.api.serializers import CertificateSerializer
from certificates.models import Certificate
from certificates.tests.pki import Chain, cert_pem, ec_key
from cluster.api.serializers import HaGroupNodeSerializer, HaGroupSerializer, IpvsSyncSerializer, NodeSerializer
from cluster.models import HaGroup, HaGroupNode, IpvsSync, Node
from compiler import pcre, render_haproxy, render_keepalived, rules, snapshot_from_dict
from compiler.facts import derive
from revisions import publish
from revisions.checks import check_haproxy, check_keepalived, check_nftables
from services.api.serializers import (
    HealthCheckSerializer,
    MemberSerializer,
    PoolSerializer,
    RuleSerializer,
    VirtualServiceSerializer,
)
from services.models import HealthCheck, Member, Pool, Rule, VirtualService
from snapshots.freeze import freeze

EXAMPLES = int(os.environ.get("FULCRUM_FIELD_EXAMPLES", "8"))
NODE = "lb1"  # whose files are compiled; lb2 is its HA peer
API_DIR = Path(__file__).resolve().parents[2]

# -- values -----------------------------------------------------------------------------------

# Spliced into otherwise valid values: the daemons' syntax, and characters that look alike.
HOSTILE = (
    " ", "\t", "\n", "\r", "\r\n", "\x0b", "\x0c", "\x00", "\x7f", "\x1b[0m", "\ud800",
    "'", '"', "`", "\\", "\\\\", "\\x41", "\\n", "\\'", "#", "!", ";", "&", "|", "<", ">",
    "$", "$HOME", "${HOME}", "$(reboot)", "%", "%%", "%[src]", "%{+Q}[src]", "%25",
    "{", "}", "[", "]", "(", ")", ",", "*", "?", "~", "@", "=", "+", "^", ".", "/", ":", "-",
    "-f", "-i", "-m", "-u", "--",
    "\nserver evil 192.0.2.1:80", "' if TRUE\nhttp-request deny", '"\n}\nvirtual_server 192.0.2.1 80 {',
    "\u202e", "\u0301", "\u200b", "\ufeff", "\u2028", "\u0435", "\uff57", "\U0001f600",
)  # fmt: skip
# What PCRE2 or a daemon's parser may take otherwise than Python's re, or not at all.
REGEX_EDGES = (
    "(", ")", "[", "[^]", "[]", "a{1,65536}", "a{2,1}", "(?<=a+)b", "(?u)a", "(?i)a", "(?m)^a$", "(?s).",
    "(?x) a # c", "\\", "\\Q.\\E", "\\p{L}", "\\N{U+41}", "\\C", "\\g{-1}", "(a)\\2", "(?R)", "(?1)", "(*CR)a",
    "(*UTF)a", "(*LIMIT_MATCH=1)a", "(?C1)a", "(?#x)", "[[:alpha:]]", "[[:nope:]]", "a**", "a++", "x{0}",
    "(?|a)", "((a{0,65535}){0,65535}){0,65535}", "(?<n>a)(?P=n)", "\\x{100}", "\\o{777}", "\\cA", "$", "^",
    "(" * 250 + ")" * 250, "(" * 251 + ")" * 251, "(?:a|b)" * 70,
)  # fmt: skip
# Printable ASCII, the controls a parser may stop at, and text beyond ASCII.
ALPHABET = st.sampled_from([chr(c) for c in range(0x20, 0x7F)] + list("\t\n\r\x00\x7f\u202e\u0301\u00e9\U0001f600"))
ADDRESSES = (
    "0.0.0.0", "::", "255.255.255.255", "224.0.0.1", "ff02::1", "fe80::1", "fe80::1%eth0", "::ffff:10.0.2.11",
    "10.0.2.011", "127.0.0.1", "::1", "10.0.2.11/32", "1.2.3", "2001:db8::10", "2001:0db8:0000::0010",
)  # fmt: skip
CIDRS = (
    "10.0.0.0/255.0.0.0", "10.0.0.0/0.255.255.255", "10.0.0.1/8", "::ffff:10.0.0.0/104", "0.0.0.0/0", "::/0",
    "10.0.0.0/33", "10.0.0.0/08", "fe80::/10", "fe80::1%eth0/64", "2001:db8::/32", "192.0.2.1",
)  # fmt: skip


def _splice(value, piece, at):
    at %= len(value) + 1
    return value[:at] + piece + value[at:]


def _pad(value, unit, length):
    """``value`` filled with ``unit`` to ``length`` characters."""
    return (value + unit * length)[:length]


def texts(seeds, limit, fill="a", pieces=HOSTILE):
    """Values of a text field: valid ``seeds`` with hostile pieces spliced in, seeds filled with
    each ``fill`` unit (valid in the field) to just under, at and just over ``limit``, the
    pieces alone, and any text."""
    seed = st.sampled_from(seeds)
    piece = st.sampled_from(pieces)
    spliced = st.builds(_splice, seed, piece, st.integers(0, 64))
    return st.one_of(
        spliced,
        st.builds(_splice, spliced, piece, st.integers(0, 64)),
        st.builds(_pad, seed, st.sampled_from(fill), st.sampled_from((limit - 1, limit, limit + 1))),
        piece,
        st.text(ALPHABET, max_size=24),
    )


def regexes(seeds, limit=rules.REGEX_MAX):
    return texts(seeds, limit, fill=("a", ".", "(a)", "[^.]", "\\d", "|"), pieces=REGEX_EDGES + HOSTILE)


def addresses(seeds):
    return texts(seeds, 45, fill="0", pieces=ADDRESSES + HOSTILE)


def lists(item, limit, many):
    """Short lists of ``item`` values, and lists of ``many(i)`` (valid, distinct) at and one
    over ``limit`` entries."""
    return st.one_of(
        st.lists(item, max_size=4),
        st.sampled_from((limit, limit + 1)).map(lambda n: [many(i) for i in range(n)]),
    )


NAMES = texts(("n", "web2", "a.b-c_d"), 63, fill="a-._")
INTERFACES = texts(("eth1", "bond0.100", "a@b"), 15, fill="a.-_@")
HOSTS = texts(("www.example.com", "a"), 253, fill=("a", "a.", "-a"))
FIELD_NAMES = texts(("X-Test", "a"), 64, fill="a-._")
TEXT = {"limit": rules.VALUE_MAX, "fill": ("a", "%", "'", " ", "-")}  # quoted text: values, headers
CIDR_ITEMS = texts(("10.0.0.0/8", "2001:db8::/32", "192.0.2.1"), 64, fill="0", pieces=CIDRS + HOSTILE)

# -- the catalogue ----------------------------------------------------------------------------

RENAMED = ("renamed",)  # ``at`` of a name: references to it are renamed with it (see twin)
LIGHT = 0.4  # the share of examples of names, addresses and interfaces: one pattern guards each kind


@dataclass(frozen=True)
class Field:
    """One operator field, in one place of the configuration."""

    name: str  # app.Model.field, and the key within a JSON field: "services.Pool.persistence.cookie_name"
    where: str  # what the value configures there
    values: st.SearchStrategy
    send: object  # (ids, value) -> (url, body): the PATCH an operator sends
    at: tuple | None = None  # where the value lands in the snapshot; None: parsed (an address)
    alike: tuple = ()  # other keys of its object whose equal values the renderer compares with it
    pinned: tuple = ()  # values that once broke an apply, or were read otherwise than written
    accepts: tuple = ()  # valid values the API must accept (and an apply take)
    share: float = 1.0  # of EXAMPLES: less where one strict pattern guards many fields

    def __str__(self):
        return f"{self.name} [{self.where}]"


def to(url, key, shape=None, **fixed):
    """A sender: PATCH /api/v1/``url`` (formatted with the objects' ids) setting ``key`` to the
    value, or to ``shape(ids, value)``, with the ``fixed`` fields."""
    return lambda ids, value: (url.format(**ids), {**fixed, key: shape(ids, value) if shape else value})


def named(label, where, url):
    """A name: its twin renames the references too, and a fresh name must be accepted."""
    return Field(label, where, NAMES, to(url, "name"), RENAMED, accepts=("renamed-2",), share=LIGHT)


def persistence(kind, key):
    return to("pools/{web}/", "persistence", lambda ids, v: {"type": kind, key: v})


def condition(kind, values, name=""):
    return [{"kind": kind, "values": values, "name": name, "negate": False}]


def error_pages(statuses, content_type, body):
    return [{"status": s, "content_type": content_type, "body": body} for s in statuses]


WEB_CHECK = ("pools", "web", "health_check")
L4_CHECK = ("pools", "l4", "health_check")
WWW = ("virtual_services", "www")
ROUTE = ("rules", "route", "conditions", 0)


def condition_values(seeds, limit, fill, many):
    return lists(texts(seeds, limit, fill), rules.VALUES_PER_CONDITION_MAX, many)


# The values of each kind of condition: valid ones, length limit, fill units, many(i) distinct.
CONDITIONS = {
    "path_prefix": condition_values(("/api/", "/"), rules.VALUE_MAX, ("a", "%", "/"), lambda i: f"/p{i}/"),
    "path_suffix": condition_values((".php", "a"), rules.VALUE_MAX, ("a", "%"), lambda i: f".e{i}"),
    "path_contains": condition_values(("/x/", "-"), rules.VALUE_MAX, ("a", "-"), lambda i: f"/c{i}/"),
    "path_extension": condition_values(("jpg", "tar-gz"), 16, ("a", "-"), lambda i: f"e{i}"),
    "path_regex": lists(regexes(("^/v[0-9]+/", ".*\\.json$")), rules.VALUES_PER_CONDITION_MAX, lambda i: f"^/r{i}"),
    "host_exact": condition_values(("api.example.com",), 253, ("a", "a."), lambda i: f"h{i}.example.com"),
    "host_suffix": condition_values((".example.com", "example.com"), 253, ("a", "a."), lambda i: f".s{i}.example"),
    "host_wildcard": condition_values(("*.example.com", "w.*.example"), 253, ("a.", "*."), lambda i: f"*.w{i}.example"),
    "header_equals": condition_values(("on", "a b"), **TEXT, many=lambda i: f"v{i}"),
    "header_regex": lists(regexes(("(?i)android|iphone", "^a")), rules.VALUES_PER_CONDITION_MAX, lambda i: f"^{i}"),
    "cookie_equals": condition_values(("on",), **TEXT, many=lambda i: f"v{i}"),
    "query_equals": condition_values(("2",), **TEXT, many=lambda i: f"v{i}"),
    "method": condition_values(("GET", "POST"), 16, "A", lambda i: rules.HTTP_METHODS[i % len(rules.HTTP_METHODS)]),
    "source_cidr": lists(CIDR_ITEMS, rules.VALUES_PER_CONDITION_MAX, lambda i: f"10.1.{i % 256}.{i // 256}"),
}

# Pages HAProxy refused ("exceeds the buffer size"), in characters and in bytes, and pages that fit.
PAGES_OVER_THE_BUFFER = ("a" * 16_385, "\U0001f600" * 4097)
PAGES_AT_THE_LIMIT = ("a" * rules.ERROR_PAGE_MAX, "\u00e9" * (rules.ERROR_PAGE_MAX // 2))
COMMAND = "/etc/fulcrum/checks/up" + (" " + "a" * 127) * 7 + " " + "a" * 31  # at the length limit
# Conditions' values that broke an apply or were read otherwise: patterns HAProxy read as the
# acl's options ('-f' loaded a file of the node as patterns), a group HAProxy's acls do not capture.
PINNED_CONDITIONS = {
    "path_contains": (["-"],),
    "header_equals": (["-f", "/etc/hostname"],),
    "path_regex": (["-i"],),
    "header_regex": (["(a)\\1"],),
}

FIELDS = [
    # Pools, members and persistence (HAProxy backends).
    named("services.Pool.name", "an HAProxy backend", "pools/{web}/"),
    Field(
        "services.Pool.tls_sni",
        "re-encryption to members",
        texts(("api.example.com", "@host"), 253, fill=("a", "a.")),
        to("pools/{api}/", "tls_sni"),
        ("pools", "api", "tls_sni"),
    ),
    Field(
        "services.Pool.maintenance_page",
        "a page HAProxy answers",
        texts(("<p>down</p>",), rules.MAINTENANCE_PAGE_MAX, fill=("a", "\u00e9", "\U0001f600")),
        to("pools/{web}/", "maintenance_page"),
        ("pools", "web", "maintenance_page"),
        pinned=PAGES_OVER_THE_BUFFER,
        accepts=PAGES_AT_THE_LIMIT,
    ),
    Field(
        "services.Pool.persistence.cookie_name",
        "an inserted cookie",
        FIELD_NAMES,
        persistence("cookie_insert", "cookie_name"),
        ("pools", "web", "persistence", "cookie_name"),
    ),
    Field(
        "services.Pool.persistence.cookie_name",
        "a learned cookie",
        FIELD_NAMES,
        persistence("app_cookie", "cookie_name"),
        ("pools", "web", "persistence", "cookie_name"),
    ),
    Field(
        "services.Pool.persistence.header_name",
        "a stick-table on a header",
        FIELD_NAMES,
        persistence("header", "header_name"),
        ("pools", "web", "persistence", "header_name"),
    ),
    named("services.Member.name", "an HAProxy server", "members/{s1}/"),
    Field(
        "services.Member.address",
        "an HAProxy server",
        addresses(("10.0.2.11",)),
        to("members/{s1}/", "address"),
        share=LIGHT,
    ),
    Field(
        "services.Member.address",
        "an IPVS real server",
        addresses(("10.0.4.11",)),
        to("members/{r1}/", "address"),
        share=LIGHT,
    ),
    # Health checks: HAProxy's (pool web) and keepalived's (pool l4).
    Field(
        "services.HealthCheck.path",
        "an HAProxy http check",
        texts(("/health", "/a?b=c&d=%20"), 1024, fill=("a", "%", "/", "?&()")),
        to("health-checks/{web_check}/", "path"),
        (*WEB_CHECK, "path"),
    ),
    Field(
        "services.HealthCheck.host",
        "an HAProxy http check",
        HOSTS,
        to("health-checks/{web_check}/", "host"),
        (*WEB_CHECK, "host"),
    ),
    Field(
        "services.HealthCheck.expect_body",
        "an HAProxy http check's string",
        texts(("ok", "a b"), rules.REGEX_MAX, fill=("a", "%", ".", "^", " #")),
        to("health-checks/{web_check}/", "expect_body", expect_body_match="string"),
        (*WEB_CHECK, "expect_body"),
    ),
    Field(
        "services.HealthCheck.expect_body",
        "an HAProxy http check's regex",
        regexes(("^ok$", "(?i)up|ready")),
        to("health-checks/{web_check}/", "expect_body", expect_body_match="regex"),
        (*WEB_CHECK, "expect_body"),
        pinned=("(a)\\1",),  # HAProxy captures nothing in a pattern it only matches
    ),
    Field(
        "services.HealthCheck.path",
        "a keepalived HTTP_GET",
        texts(("/ready", "/a?b=c"), 1024, fill=("a", "%", "/")),
        to("health-checks/{l4_check}/", "path"),
        (*L4_CHECK, "path"),
    ),
    Field(
        "services.HealthCheck.host",
        "a keepalived HTTP_GET",
        HOSTS,
        to("health-checks/{l4_check}/", "host"),
        (*L4_CHECK, "host"),
    ),
    Field(
        "services.HealthCheck.expect_body",
        "a keepalived HTTP_GET's string",
        texts(("ok", "a b"), rules.REGEX_MAX, fill=("a", ".", "^", "(", "|")),
        to("health-checks/{l4_check}/", "expect_body", expect_body_match="string"),
        (*L4_CHECK, "expect_body"),
        pinned=("." * 334, "a^b"),  # 1002 characters as a regex: keepalived cut the line; "a[^]b"
        accepts=("." * 333,),
    ),
    Field(
        "services.HealthCheck.expect_body",
        "a keepalived HTTP_GET's regex",
        regexes(("^ok$", "up|ready")),
        to("health-checks/{l4_check}/", "expect_body", expect_body_match="regex"),
        (*L4_CHECK, "expect_body"),
        pinned=("(*CR)a",),  # "(?m)(*CR)a": PCRE2 takes (*CR) only at the start
    ),
    Field(
        "services.HealthCheck.expect_body",
        "a keepalived HTTP_GET's digest",
        texts(("9b3a0c85a887a256d6939da88aabd8cd",), 32, fill=("0", "f")),
        to("health-checks/{l4_check}/", "expect_body", expect_body_match="digest"),
        (*L4_CHECK, "expect_body"),
    ),
    Field(
        "services.HealthCheck.dns_name",
        "a keepalived DNS_CHECK",
        texts((".", "www.example.com", "_srv._tcp.example.com."), 253, fill=("a", "a.", "_")),
        to("health-checks/{l4_check}/", "dns_name", type="dns"),
        (*L4_CHECK, "dns_name"),
    ),
    Field(
        "services.HealthCheck.script",
        "a keepalived MISC_CHECK",
        texts(
            ("/etc/fulcrum/checks/up", "/usr/lib/fulcrum/checks/http-ok --port=80 a,b"),
            1024,
            fill=("a", " " + "a" * 127, " %@"),
        ),
        to("health-checks/{l4_check}/", "script", type="script"),
        (*L4_CHECK, "script"),
        pinned=(COMMAND + "a" * 69,),  # keepalived cut its 1056-character line
        accepts=(COMMAND,),  # 950 characters
    ),
    # Virtual services: HAProxy frontends (www) and a keepalived virtual server (l4).
    named("services.VirtualService.name", "an HAProxy frontend", "virtual-services/{www}/"),
    named("services.VirtualService.name", "a keepalived virtual server", "virtual-services/{l4}/"),
    Field(
        "services.VirtualService.vip",
        "an HAProxy bind",
        addresses(("10.0.0.10",)),
        to("virtual-services/{www}/", "vip"),
        share=LIGHT,
    ),
    Field(
        "services.VirtualService.vip",
        "a keepalived virtual server",
        addresses(("10.0.0.20",)),
        to("virtual-services/{l4}/", "vip"),
        share=LIGHT,
    ),
    Field(
        "services.VirtualService.allow_cidrs",
        "an HAProxy src acl",
        lists(CIDR_ITEMS, rules.CIDRS_MAX, lambda i: f"10.{i // 256 % 256}.{i % 256}.0/24"),
        to("virtual-services/{www}/", "allow_cidrs"),
        (*WWW, "allow_cidrs"),
    ),
    Field(
        "services.VirtualService.deny_cidrs",
        "an HAProxy src acl",
        lists(CIDR_ITEMS, rules.CIDRS_MAX, lambda i: f"2001:db8:{i:x}::/48"),
        to("virtual-services/{www}/", "deny_cidrs"),
        (*WWW, "deny_cidrs"),
    ),
    Field(
        "services.VirtualService.compression_types",
        "HAProxy compression",
        lists(
            texts(("text/html", "application/vnd.api+json", "text/*"), rules.MIME_TYPE_MAX, fill=("a", ".+-")),
            rules.COMPRESSION_TYPES_MAX,
            lambda i: f"application/x-{i}",
        ),
        to("virtual-services/{www}/", "compression_types"),
        (*WWW, "compression_types"),
    ),
    Field(
        "services.VirtualService.error_pages.content_type",
        "an HAProxy http-error",
        texts(("text/html", "text/plain"), 100, fill=("a", ".+-")),
        to("virtual-services/{www}/", "error_pages", lambda ids, v: error_pages([503], v, "x")),
        (*WWW, "error_pages", 0, "content_type"),
    ),
    Field(
        "services.VirtualService.error_pages.body",
        "an HAProxy http-error",
        texts(("<p>busy</p>",), rules.ERROR_PAGE_MAX, fill=("a", "\u00e9", "\U0001f600")),
        to("virtual-services/{www}/", "error_pages", lambda ids, v: error_pages([503], "text/html", v)),
        (*WWW, "error_pages", 0, "body"),
        pinned=PAGES_OVER_THE_BUFFER,
        accepts=PAGES_AT_THE_LIMIT,
    ),
    Field(
        "services.VirtualService.error_pages.body",
        "HAProxy http-errors, one per status",
        texts(("<p>busy</p>",), 2048, fill=("a", "\n")),
        to("virtual-services/{www}/", "error_pages", lambda ids, v: error_pages(rules.ERROR_PAGE_STATUSES, "a/b", v)),
        (*WWW, "error_pages", 0, "body"),
    ),
    # Content-switching rules of www: route (use_pool), tag (set a header), move (redirect).
    named("services.Rule.name", "a comment in a frontend", "rules/{route}/"),
    *(
        Field(
            "services.Rule.conditions.values",
            f"a {kind} acl",
            values,
            to(
                "rules/{route}/",
                "conditions",
                lambda ids, v, kind=kind: condition(kind, v, "X-Test" * (kind in rules.NAMED_CONDITIONS)),
            ),
            (*WWW, *ROUTE, "values"),
            pinned=PINNED_CONDITIONS.get(kind, ()),
        )
        for kind, values in CONDITIONS.items()
    ),
    Field(
        "services.Rule.conditions.values",
        "16 acls of one rule",
        texts(("/a",), 64, fill="a"),
        to(
            "rules/{route}/",
            "conditions",
            lambda ids, v: condition("path_prefix", [v], "") * rules.CONDITIONS_PER_RULE_MAX,
        ),
        (*WWW, *ROUTE, "values"),
    ),
    Field(
        "services.Rule.conditions.name",
        "a header acl",
        FIELD_NAMES,
        to("rules/{route}/", "conditions", lambda ids, v: condition("header_equals", ["on"], v)),
        (*WWW, *ROUTE, "name"),
    ),
    Field(
        "services.Rule.redirect_location",
        "an http-request redirect",
        texts(("/new", "https://example.com/a?b=c", "http://[2001:db8::1]:8080/"), 1100, fill=("a", "%", "/")),
        to("rules/{move}/", "redirect_location"),
        (*WWW, "rules", "move", "redirect_location"),
    ),
    Field(
        "services.Rule.header_name",
        "an http-request set-header",
        FIELD_NAMES,
        to("rules/{tag}/", "header_name"),
        (*WWW, "rules", "tag", "header_name"),
    ),
    Field(
        "services.Rule.header_value",
        "an http-request set-header",
        texts(("yes", "a b %"), **TEXT),
        to("rules/{tag}/", "header_value"),
        (*WWW, "rules", "tag", "header_value"),
    ),
    Field(
        "services.Rule.header_value",
        "an http-response set-header",
        texts(("yes",), **TEXT),
        to("rules/{tag}/", "header_value", action="set_response_header"),
        (*WWW, "rules", "tag", "header_value"),
    ),
    # High availability (keepalived's VRRP, HAProxy peers) and IPVS sync.
    named("cluster.HaGroup.name", "a VRRP instance", "ha-groups/{front}/"),
    Field(
        "cluster.HaGroup.interface",
        "a VRRP instance",
        INTERFACES,
        to("ha-groups/{front}/", "interface"),
        ("ha_groups", "front", "interface"),
        alike=("track_interfaces",),
        share=LIGHT,
    ),
    Field(
        "cluster.HaGroup.vips",
        "VRRP virtual addresses",
        lists(addresses(("10.0.0.10", "10.0.0.30/24")), rules.HA_VIPS_MAX, lambda i: f"10.0.5.{i}"),
        to("ha-groups/{front}/", "vips"),
        share=LIGHT,
    ),
    Field(
        "cluster.HaGroup.auth_password",
        "VRRPv2 authentication",
        texts(("s3cret", "a"), 8, fill=("a", ":@")),
        to("ha-groups/{front}/", "auth_password"),
        ("ha_groups", "front", "auth_password"),
    ),
    Field(
        "cluster.HaGroup.track_interfaces",
        "a VRRP instance's tracked interfaces",
        lists(INTERFACES, rules.TRACK_INTERFACES_MAX, lambda i: f"eth{i + 1}"),
        to("ha-groups/{front}/", "track_interfaces"),
        ("ha_groups", "front", "track_interfaces"),
        alike=("interface",),
        share=LIGHT,
    ),
    Field(
        "cluster.HaGroup.witness",
        "a VRRP track script",
        addresses(("10.0.1.1",)),
        to("ha-groups/{front}/", "witness"),
        share=LIGHT,
    ),
    Field(
        "cluster.HaGroupNode.interface",
        "a node's own VRRP interface",
        INTERFACES,
        to(
            "ha-groups/{front}/",
            "nodes",
            lambda ids, v: [
                {"node": ids["lb1"], "priority": 150, "interface": v},
                {"node": ids["lb2"], "priority": 100},
            ],
        ),
        ("ha_groups", "front", "nodes", 0, "interface"),
        alike=("track_interfaces",),
        share=LIGHT,
    ),
    Field(
        "cluster.IpvsSync.interface",
        "the IPVS sync daemon",
        INTERFACES,
        to("ipvs-sync/", "interface"),
        ("ipvs_sync", "interface"),
        share=LIGHT,
    ),
    Field(
        "cluster.IpvsSync.group",
        "the IPVS sync daemon",
        addresses(("224.0.0.81", "ff02::81")),
        to("ipvs-sync/", "group"),
        share=LIGHT,
    ),
    named("cluster.Node.name", "an HAProxy peer", "nodes/{lb2}/"),
    Field(
        "cluster.Node.address",
        "a VRRP unicast peer",
        addresses(("10.0.1.4",)),
        to("nodes/{lb2}/", "address"),
        share=LIGHT,
    ),
    named("certificates.Certificate.name", "an HAProxy crt file", "certificates/{site}/"),
]
# Fields whose defect is known and not fixed yet: a strict xfail, which its fix removes.
KNOWN_DEFECTS = {}
# Strings that never reach a daemon, and why.
NOT_RENDERED = {
    "services.Pool.description": "shown by the API and the console only",
    "services.VirtualService.description": "shown by the API and the console only",
    "certificates.Certificate.description": "shown by the API and the console only",
    "certificates.Certificate.certificate": "stored as cryptography writes the parsed certificate, never as sent",
    "certificates.Certificate.chain": "stored as cryptography writes the parsed certificates, never as sent",
    "certificates.Certificate.private_key": "stored as cryptography writes the parsed key, never as sent",
}
# The models a revision is frozen from, with the serializer an operator writes each with.
CONFIGURATION = {
    Pool: PoolSerializer,
    Member: MemberSerializer,
    HealthCheck: HealthCheckSerializer,
    VirtualService: VirtualServiceSerializer,
    Rule: RuleSerializer,
    Certificate: CertificateSerializer,
    Node: NodeSerializer,
    HaGroup: HaGroupSerializer,
    HaGroupNode: HaGroupNodeSerializer,
    IpvsSync: IpvsSyncSerializer,
}
# The other models of the project's apps, and why their strings never reach a daemon.
NOT_CONFIGURATION = {
    "accounts": "people, roles, API tokens and the audit log",
    "revisions": "published revisions: their snapshot is made from the configuration",
    "telemetry": "what the agents report",
    "cluster.HaEvent": "VRRP role changes the agents report",
    "cluster.DaemonEvent": "daemon restarts the agents report",
    "cluster.JoinCode": "codes an appliance joins with",
}

# -- the configuration every value is tried in ------------------------------------------------


@functools.cache
def _chain():
    """One PKI for the whole run (keys take time to make): the site's leaf and its root CA."""
    return Chain("www.example.com", leaf_key=ec_key())


def _pools(ca):
    """web (http check, cookie persistence, maintenance page), api (re-encryption), and l4,
    whose member keepalived checks over HTTP."""
    web = Pool.objects.create(name="web", persistence={"type": "cookie_insert"}, maintenance_page="<p>down</p>")
    api = Pool.objects.create(name="api", tls=True, tls_ca=ca, tls_sni="api.example.com")
    l4 = Pool.objects.create(name="l4")
    Member.objects.create(pool=api, name="a1", address="10.0.3.11", port=8443)
    return {
        "web": web,
        "api": api,
        "l4_pool": l4,
        "s1": Member.objects.create(pool=web, name="s1", address="10.0.2.11", port=80),
        "r1": Member.objects.create(pool=l4, name="r1", address="10.0.4.11", port=80),
        "web_check": HealthCheck.objects.create(pool=web, type="http", path="/health", host="a.b", expect_body="ok"),
        "l4_check": HealthCheck.objects.create(pool=l4, type="http", path="/ready", expect_body="ok"),
    }


def _services(made):
    """www (https: compression, an error page, address lists, three rules) and l4 (NAT)."""
    www = VirtualService.objects.create(
        name="www",
        vip="10.0.0.10",
        port=443,
        protocol="https",
        default_pool=made["web"],
        default_certificate=made["site"],
        compression=True,
        allow_cidrs=["10.0.0.0/8"],
        deny_cidrs=["10.66.0.0/16"],
        error_pages=error_pages([503], "text/html", "<p>busy</p>"),
    )
    rule = {"virtual_service": www, "conditions": condition("path_prefix", ["/old"])}
    tag = {"action": "set_request_header", "header_name": "X-Tag", "header_value": "yes"}
    return {
        "www": www,
        "route": Rule.objects.create(**rule, position=0, name="route", action="use_pool", pool=made["api"]),
        "tag": Rule.objects.create(**rule, position=1, name="tag", **tag),
        "move": Rule.objects.create(**rule, position=2, name="move", action="redirect", redirect_location="/new"),
        "l4": VirtualService.objects.create(
            name="l4", vip="10.0.0.20", port=80, protocol="tcp", forwarding="nat", default_pool=made["l4_pool"]
        ),
    }


def _high_availability():
    """lb1 and lb2 in HA group front (VRRPv2, a witness, a tracked interface), IPVS sync."""
    made = {}
    for name, address in (("lb1", "10.0.1.3"), ("lb2", "10.0.1.4")):
        made[name] = Node(name=name, address=address)
        made[name].rotate_token()
        made[name].save()
    made["front"] = front = HaGroup.objects.create(
        name="front",
        vrid=51,
        vips=["10.0.0.10", "10.0.0.20"],
        vrrp_version=2,
        auth_password="s3cret",
        track_interfaces=["eth1"],
        witness="10.0.1.1",
    )
    HaGroupNode.objects.create(group=front, node=made["lb1"], priority=150)
    HaGroupNode.objects.create(group=front, node=made["lb2"], priority=100)
    IpvsSync.objects.create(pk=1, enabled=True, interface="eth0", ha_group=front)
    return made


def configuration():
    """The configuration every value is tried in; the ids of its objects by name."""
    upload = _chain().upload()
    made = {
        "site": Certificate.objects.create(
            name="site", **{k: upload[k] for k in ("certificate", "chain", "private_key")}
        ),
        "ca": Certificate.objects.create(name="ca", certificate=cert_pem(_chain().root)),
    }
    made |= _pools(made["ca"])
    made |= _services(made)
    made |= _high_availability()
    return {name: obj.pk for name, obj in made.items()}


# -- reading the files as the daemons do ------------------------------------------------------


def haproxy_words(line):
    """The words HAProxy reads on a line (cfgparse): '...' is literal, "..." and bare text take
    backslash escapes, '#' outside quotes starts a comment."""
    words, word, quote, escaped = [], None, None, False
    for c in line:
        if escaped:
            word, escaped = word + c, False
        elif (quote == "'" and c != "'") or (quote == '"' and c not in '"\\'):
            word += c
        elif c in "'\"":
            quote, word = (None if quote else c), word or ""
        elif c == "\\":
            word, escaped = word or "", True
        elif c == "#":
            break
        elif c.isspace():
            words, word = words + [word] * (word is not None), None
        else:
            word = (word or "") + c
    return words + [word] * (word is not None)


def keepalived_words(line):
    """The words keepalived reads on a line (parser.c): blanks and non-ASCII separate them,
    "..." groups, '{' and '}' stand alone, '!' or '#' at a word's start begins a comment."""
    words, word, quoted = [], None, False
    for c in line:
        if quoted:
            word, quoted = (word, False) if c == '"' else (word + c, True)
        elif c == '"':
            word, quoted = word or "", True
        elif c in "!#" and word is None:
            break
        elif c in "{}" or c.isspace() or not c.isascii():
            words, word = words + [word] * (word is not None) + [c] * (c in "{}"), None
        else:
            word = (word or "") + c
    return words + [word] * (word is not None)


READERS = {"haproxy.cfg": haproxy_words, "keepalived.conf": keepalived_words}


def _directives(text, reader):
    return [words for words in map(reader, text.splitlines()) if words]


def _sections(text, reader):
    """A file's sections (an unindented line and the lines under it), each as its header's
    words and how many words each line has: names sort them, so their order may differ."""
    sections = []
    for line in text.splitlines():
        if words := reader(line):
            if line[0].isspace() and sections:
                sections[-1][1].append(len(words))
            else:
                sections.append((" ".join(words), [len(words)]))
    return sorted((header, tuple(sorted(counts))) for header, counts in sections)


def _acl_option(words):
    """An operator's word HAProxy reads among this acl's options: after the template's
    ``-m <method>``, a word starting with '-' is an option unless '--' ended them."""
    patterns = words[5:] if words[3:4] == ["-m"] else words[3:]
    return patterns[0] if patterns and patterns[0].startswith("-") and patterns[0] != "--" else None


def misread(files, twin):
    """How ``files`` read otherwise than ``twin``'s, or "": each section must have as many
    lines, of as many words; no acl pattern may start among the acl's options; each line of a
    map must be a key and a backend."""
    for name, reader in READERS.items():
        if name not in files:
            continue
        ours, theirs = _sections(files[name], reader), _sections(twin[name], reader)
        shapes = [counts for _, counts in theirs]
        for header, counts in ours:
            if counts not in shapes:
                return f"{name}: section {header!r} reads as lines of {list(counts)} words, unlike its twin's"
            shapes.remove(counts)
        if shapes:
            return f"{name}: {len(ours)} sections, its twin {len(theirs)}"
        acls = [words for words in _directives(files[name], reader) if words[0] == "acl"]
        if option := next(filter(None, map(_acl_option, acls)), None):
            return f"{name}: {option!r} is read as an acl option"
    maps = [line for name, text in files.items() if name.endswith(".map") for line in text.splitlines()]
    if bad := next((line for line in maps if len(line.split()) != 2 or line.startswith("#")), None):
        return f"{bad!r} is not a key and a backend in a map"
    return ""


def dropped_regexes(files):
    """The regexes of keepalived's HTTP checks that PCRE2 refuses: its config test passes them,
    its checker drops them (logging it) and then checks the status code only."""
    directives = _directives(files.get("keepalived.conf", ""), keepalived_words)
    regexes_ = [words[1] for words in directives if words[0] == "regex" and len(words) == 2]
    return [f"{r!r}: {error}" for r in regexes_ if (error := pcre.compile_error(r))]


# -- compiling as an apply does ---------------------------------------------------------------

_VERDICTS = {}


def _memoized(check, reads):
    """``check``, run once per content of the files it reads (its verdict depends on nothing else)."""

    def memo(files):
        digest = hashlib.sha256()
        for name in sorted(n for n in files if n.startswith(reads)):
            digest.update(name.encode() + b"\0" + files[name] + b"\0")
        key = (check.__name__, digest.hexdigest())
        if key not in _VERDICTS:
            _VERDICTS[key] = check(files)
        return _VERDICTS[key]

    return memo


MEMOIZED_CHECKS = {
    "check_haproxy": _memoized(check_haproxy, ("haproxy.cfg", "haproxy.d/")),
    "check_keepalived": _memoized(check_keepalived, ("keepalived.conf", "keepalived.d/")),
    "check_nftables": _memoized(check_nftables, ("firewall.nft", "keepalived.d/fulcrum.nft")),
}


def applied(snapshot):
    """``NODE``'s files as an apply compiles and checks them; PublishError if it would refuse."""
    with mock.patch.multiple(publish, **MEMOIZED_CHECKS):
        return publish.compile_for_node(snapshot, NODE)


def rendered_without_verify(snapshot):
    """``NODE``'s files, verify left out: a twin need not be valid, it is a shape to compare with."""
    facts = derive(snapshot_from_dict(snapshot))
    files = render_haproxy(facts, NODE, publish._pems(snapshot)) | render_keepalived(facts, NODE)
    return {name: content.decode() for name, content in files.items()}


REFERENCES = {"name", "default_pool", "pool", "node", "tls_ca", "client_ca", "ha_group", "certificates"}


def _replaced(data, mapping, keys, key=None):
    """``data`` with the strings under ``keys`` that ``mapping`` names replaced."""
    if isinstance(data, dict):
        return {k: _replaced(v, mapping, keys, k) for k, v in data.items()}
    if isinstance(data, list):
        return [_replaced(v, mapping, keys, key) for v in data]
    return mapping.get(data, data) if key in keys and isinstance(data, str) else data


# Characters no daemon's parser gives meaning to, kept in a twin: the renderer escapes some
# ('.' and '-' of a host wildcard become "\\." and "\\-"), and a twin's lines must stay as long.
INERT = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_*/")


def _xs(values):
    """Each value with every other character as x, distinct values kept distinct (the renderer
    compares some): one that would meet another ends in its index instead."""
    twins = {}
    for i, v in enumerate(dict.fromkeys(values)):
        twin_ = "".join(c if c in INERT else "x" for c in v)
        twins[v] = twin_ if twin_ not in twins.values() else (twin_ + format(i, "x"))[-len(v) :]
    return twins


def _locate(data, path):
    for step in path:
        named = isinstance(step, str) and isinstance(data, list)
        data = next(item for item in data if item["name"] == step) if named else data[step]
    return data


def twin(snapshot, field, answer):
    """``snapshot`` with the stored value's characters but INERT ones replaced by x, wherever
    the renderer may compare it: a name with the references to it, another value within its
    object under its key and ``field.alike``."""
    if field.at is RENAMED:
        return _replaced(snapshot, _xs([answer["name"]]), REFERENCES)
    stored = _locate(snapshot, field.at)
    mapping = _xs(stored if isinstance(stored, list) else [stored])
    scope = field.at[:2] if isinstance(snapshot[field.at[0]], list) else field.at[:1]
    twin_ = copy.deepcopy(snapshot)
    holder = _locate(twin_, scope)
    holder.update(_replaced(holder, mapping, {field.at[-1], *field.alike}))
    return twin_


# -- the property -----------------------------------------------------------------------------


ELSEWHERE = re.compile(r"\A[a-z-]+/\S+: ")  # a compiler problem of another object: "pools/web/...: ..."


def shown(value):
    """``value`` for a message: its repr, shortened when long."""
    text, unit = repr(value), "items" if isinstance(value, list) else "characters"
    return text if len(text) <= 300 else f"{text[:150]}...{text[-100:]} ({len(value)} {unit})"


def attempt(field, ids, client, value):
    """Send ``value`` as an operator would; what is refused must be refused on the field, what
    is accepted must be applied, and read by the daemons as written."""
    url, body = field.send(ids, value)
    with transaction.atomic():
        try:
            answer = client.patch(f"/api/v1/{url}", json.dumps(body), content_type="application/json")
            if answer.status_code == 200:
                _accepted(field, value, answer.json())
            else:
                _refused(field, value, body, answer)
        finally:
            transaction.set_rollback(True)


def _refused(field, value, body, answer):
    """A 400 on a field sent; or, for a value that breaks another object, the compiler's
    problem there (its path first); or a body JSON cannot carry (a lone surrogate)."""
    said = answer.content.decode(errors="replace")[:500]
    assert answer.status_code == 400, f"{field} = {shown(value)}: answered {answer.status_code}: {said}"
    assert value not in field.accepts, f"{field} = {shown(value)}: a valid value, refused: {said}"
    errors = answer.json()
    elsewhere = list(errors) == ["non_field_errors"] and all(ELSEWHERE.match(m) for m in errors["non_field_errors"])
    unparsed = str(errors.get("detail", "")).startswith("JSON parse error")
    assert set(errors) & set(body) or elsewhere or unparsed, (
        f"{field} = {shown(value)}: not refused on the field: {said}"
    )


def _accepted(field, value, answer):
    snapshot = freeze(0)
    try:
        files = applied(snapshot)
    except publish.PublishError as err:
        pytest.fail(f"{field} = {shown(value)}: the API accepted it, an apply refuses it: {err}", pytrace=False)
    dropped = dropped_regexes(files)
    assert not dropped, f"{field} = {shown(value)}: keepalived's checker would drop {dropped}"
    if field.at is not None:
        problem = misread(files, rendered_without_verify(twin(snapshot, field, answer)))
        assert not problem, f"{field} = {shown(value)}: not read as written: {problem}"


@pytest.fixture(scope="module")
def configured(django_db_setup, django_db_blocker):
    """The configuration and an administrator, made once for every field in a transaction
    rolled back at the end (each test's own changes are rolled back after it)."""
    with django_db_blocker.unblock(), transaction.atomic():
        ids = configuration()
        applied(freeze(0))  # the configuration itself is sound
        client = APIClient()
        client.force_authenticate(get_user_model().objects.create_superuser("admin", password="x" * 12))
        yield ids, client
        transaction.set_rollback(True)


def _case(field):
    defect = KNOWN_DEFECTS.get(str(field))
    return pytest.param(field, id=str(field), marks=[pytest.mark.xfail(strict=True, reason=defect)] * bool(defect))


@pytest.mark.django_db
@pytest.mark.filterwarnings("ignore:Generating overly large repr")
@pytest.mark.parametrize("field", map(_case, FIELDS))
def test_what_the_api_accepts_the_daemons_accept(field, configured):
    ids, client = configured

    @settings(
        max_examples=max(1, round(EXAMPLES * field.share)),
        derandomize=True,
        database=None,
        deadline=None,
        suppress_health_check=[Health.too_slow, Health.data_too_large, Health.large_base_example],
    )
    @given(value=field.values)
    def accepted_means_applied(value):
        attempt(field, ids, client, value)

    for value in (*field.accepts, *field.pinned):
        accepted_means_applied = example(value=value)(accepted_means_applied)
    accepted_means_applied()


# -- the catalogue's coverage -----------------------------------------------------------------

STRINGS = (models.CharField, models.TextField, models.JSONField, models.GenericIPAddressField)


def _is_text(field):
    child = getattr(field, "child", field)
    return isinstance(child, serializers.CharField) and not field.read_only


def operator_strings():
    """app.Model.field of every string an operator writes into a configuration model (choices
    aside), and app.Model.field.key for the string keys of a JSON field's declared shape."""
    found = set()
    for model, serializer in CONFIGURATION.items():
        shapes = serializer().fields
        for f in model._meta.concrete_fields:
            if not isinstance(f, STRINGS) or not f.editable or f.choices:
                continue
            label = f"{model._meta.label}.{f.name}"
            shape = getattr(shapes.get(f.name), "child", shapes.get(f.name))
            if isinstance(shape, serializers.Serializer):
                found |= {f"{label}.{key}" for key, sub in shape.fields.items() if _is_text(sub)}
            else:
                found.add(label)
    return found


def test_every_operator_string_is_covered():
    known = {f.name for f in FIELDS} | set(NOT_RENDERED)
    strings = operator_strings()
    assert not strings - known, f"neither tried with the daemons nor listed in NOT_RENDERED: {strings - known}"
    assert not known - strings, f"not an operator string (any more): {known - strings}"


def test_every_model_is_classed():
    ours = [c for c in apps.get_app_configs() if Path(c.path).is_relative_to(API_DIR)]
    models_ = {m for c in ours for m in c.get_models()}
    unclassed = {
        m._meta.label
        for m in models_
        if m not in CONFIGURATION
        and m._meta.app_label not in NOT_CONFIGURATION
        and m._meta.label not in NOT_CONFIGURATION
    }
    assert not unclassed, f"neither configuration nor listed in NOT_CONFIGURATION: {unclassed}"
