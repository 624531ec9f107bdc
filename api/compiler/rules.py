"""Rules on operator input shared by the API's validation and the compiler's verify.

Kept in one place so that what the API accepts is exactly what the compiler can render.
Every string that reaches a configuration file is limited to characters that carry no
meaning to the daemon's parser (no whitespace, quotes, '#', backslash or '$').
"""

import re

from compiler import catalog

NAME_RE = re.compile(r"\A[A-Za-z0-9][A-Za-z0-9_.-]{0,62}\Z")
NAME_HELP = "1-63 characters: letters, digits, '_', '.', '-'; starting with a letter or digit."

# An absolute request path with an optional query, RFC 3986 characters minus the ones
# HAProxy's parser treats specially (quote, '#', '\\', '$', whitespace).
HTTP_PATH_RE = re.compile(r"\A/[A-Za-z0-9._~!&()*+,;=:@%/?-]{0,1023}\Z")
HTTP_PATH_HELP = "An absolute path such as /health (no spaces, quotes, '#', '$' or backslashes)."

# A DNS host name (for the Host header of HTTP checks).
HOST_RE = re.compile(
    r"\A(?=.{1,253}\Z)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\Z"
)

PORT_MIN, PORT_MAX = 1, 65535
WEIGHT_MIN, WEIGHT_MAX = 0, 256  # HAProxy's server weight range
HTTP_STATUS_MIN, HTTP_STATUS_MAX = 100, 599
CHECK_RISE_FALL_MAX = 100
CHECK_INTERVAL_MS_MIN, CHECK_INTERVAL_MS_MAX = 100, 3_600_000
# fulcrum-loadd's default ports (agent-check, JSON), as in agents/README.md.
FEEDBACK_AGENT_PORT, FEEDBACK_HTTP_PORT = 3333, 3334

ALGORITHMS = catalog.words(catalog.ALGORITHMS)
MEMBER_STATES = catalog.words(catalog.MEMBER_STATES)
CHECK_TYPES = catalog.words(catalog.CHECK_TYPES)
CHECK_BODY_MATCH = ("string", "regex", "digest")

# --- Layer 7 -----------------------------------------------------------------------------

PROTOCOLS = catalog.words(catalog.PROTOCOLS)
HTTP_PROTOCOLS = ("http", "https")

HTTP_REUSE = catalog.words(catalog.HTTP_REUSE)
# A new pool's reuse mode. "always" sends even a client's first request over an idle server
# connection, as nginx's upstream keepalive does: a client that makes one request per
# connection (HTTP/1.0, short-lived clients) then costs one TCP connection, not two
# (tests/bench/README.md, "The shipped defaults"). Its risk, a member closing an idle
# connection just as a client's first request goes out on it, is met by the template's L7
# retry, which only an idempotent request gets, as with nginx.
HTTP_REUSE_DEFAULT = "always"
PROXY_PROTOCOLS = catalog.words(catalog.PROXY_PROTOCOLS)
TLS_POLICIES = ("modern", "intermediate", "legacy")
CLIENT_AUTH = ("none", "optional", "required")
FORWARDED = ("none", "x-forwarded-for", "forwarded", "both")
PERSISTENCE_TYPES = catalog.words(catalog.PERSISTENCE_TYPES)
IPVS_PERSISTENCE = catalog.words(catalog.PERSISTENCE_TYPES, catalog.IPVS)  # by source address
# Which persistence works on which listener: SSL session IDs are read from the TLS
# handshake in TCP mode, everything else needs HTTP.
PERSISTENCE_TCP = ("none", "source", "ssl_session_id")
PERSISTENCE_HTTP = tuple(t for t in PERSISTENCE_TYPES if t != "ssl_session_id")

CONDITION_KINDS = (
    "path_prefix",
    "path_suffix",
    "path_extension",
    "path_contains",
    "path_regex",
    "host_exact",
    "host_suffix",
    "host_wildcard",
    "header_present",
    "header_equals",
    "header_regex",
    "cookie_present",
    "cookie_equals",
    "query_present",
    "query_equals",
    "method",
    "source_cidr",
)
# Kinds that name a header, cookie or query parameter, and kinds that take no values.
NAMED_CONDITIONS = frozenset(k for k in CONDITION_KINDS if k.split("_")[0] in ("header", "cookie", "query"))
PRESENCE_CONDITIONS = frozenset(k for k in CONDITION_KINDS if k.endswith("_present"))
REGEX_CONDITIONS = frozenset(k for k in CONDITION_KINDS if k.endswith("_regex"))

RULE_ACTIONS = (
    "use_pool",
    "redirect",
    "deny",
    "set_request_header",
    "remove_request_header",
    "set_response_header",
    "remove_response_header",
)
# A matching terminal rule ends evaluation; header rules apply and evaluation goes on.
TERMINAL_ACTIONS = frozenset({"use_pool", "redirect", "deny"})
HEADER_ACTIONS = frozenset(a for a in RULE_ACTIONS if a.endswith("_header"))
REDIRECT_CODES = (301, 302, 303, 307, 308)
# Status codes HAProxy can answer with a custom page (http-error / errorfile).
ERROR_PAGE_STATUSES = (400, 401, 403, 404, 405, 407, 408, 410, 413, 425, 429, 500, 501, 502, 503, 504)
DENY_STATUSES = ERROR_PAGE_STATUSES
HTTP_METHODS = ("GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "CONNECT", "TRACE")
CHECK_METHODS = ("GET", "HEAD", "OPTIONS", "POST")

RULES_PER_SERVICE_MAX = 20_000
CONDITIONS_PER_RULE_MAX = 16
VALUES_PER_CONDITION_MAX = 1_000
VALUE_MAX = 1024
REGEX_MAX = 512
HEADER_VALUE_MAX = 1024
CIDRS_MAX = 10_000
COMPRESSION_TYPES_MAX = 64  # rendered over as many "compression type" lines as they need
MIME_TYPE_MAX = 100
# HAProxy answers a page from one buffer (tune.bufsize, 16384 bytes) less the room it keeps
# for rewriting headers (tune.maxrewrite, 1024): it refuses a larger file ("exceeds the buffer
# size"), and warns that a reply over 15360 bytes may fail. Bytes of UTF-8, not characters.
ERROR_PAGE_MAX = 15_360
MAINTENANCE_PAGE_MAX = 15_360

# Header, cookie and query-parameter names: an RFC 9110 token without the characters
# HAProxy's parser cares about.
FIELD_NAME_RE = re.compile(r"\A[A-Za-z0-9][A-Za-z0-9_.-]{0,63}\Z")
FIELD_NAME_HELP = "1-64 characters: letters, digits, '_', '.', '-'."

# A value matched against request data, or written into a header. Rendered inside
# HAProxy's strong (single) quotes, where nothing is interpreted, so only the single
# quote itself and control characters are refused.
TEXT_RE = re.compile(r"\A[\x20-\x26\x28-\x7e]{1,1024}\Z")
TEXT_HELP = "Printable ASCII, no single quote (') and no control characters such as newline."

PATH_PATTERN_RE = re.compile(r"\A/[A-Za-z0-9._~!&()*+,;=:@%/-]{0,1023}\Z")
PATH_PATTERN_HELP = "A path starting with '/' (no spaces, quotes, '#', '?', '$' or backslashes)."
PATH_FRAGMENT_RE = re.compile(r"\A[A-Za-z0-9._~!&()*+,;=:@%/-]{1,1024}\Z")
EXTENSION_RE = re.compile(r"\A[A-Za-z0-9_-]{1,16}\Z")
EXTENSION_HELP = "A file extension without the dot, such as jpg (letters, digits, '_', '-')."
HOST_SUFFIX_RE = re.compile(r"\A\.?[A-Za-z0-9]([A-Za-z0-9.-]{0,251}[A-Za-z0-9])?\Z")
# *.example.com, www.*.example.com: '*' stands for exactly one label.
HOST_WILDCARD_RE = re.compile(
    r"\A(\*|[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)(\.(\*|[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?))+\Z"
)
MIME_TYPE_RE = re.compile(r"\A[a-z0-9][a-z0-9.+-]*/[a-z0-9*][a-z0-9.+*-]*\Z")
# A redirect target: an absolute URL or a path; rendered quoted, so no quote or space.
REDIRECT_RE = re.compile(
    r"\A(https?://[A-Za-z0-9.:\[\]-]+)?/[A-Za-z0-9._~!&()*+,;=:@%/?-]{0,1023}\Z|\Ahttps?://[A-Za-z0-9.:\[\]-]+\Z"
)
REDIRECT_HELP = "An absolute URL (https://example.com/path) or a path (/new)."
SNI_RE = re.compile(r"\A(@host|[A-Za-z0-9]([A-Za-z0-9.-]{0,251}[A-Za-z0-9])?)\Z")

TIMEOUT_MS_MIN, TIMEOUT_MS_MAX = 100, 86_400_000
PERSISTENCE_TIMEOUT_S_MAX = 30 * 86_400
TABLE_SIZE_MAX = 10_000_000
HSTS_MAX_AGE_MAX = 2 * 365 * 86_400
MAXCONN_MAX = 1_000_000
RATE_MAX = 1_000_000
RATE_PERIOD_S_MAX = 3600
BODY_MAX = 2**40

# --- Layer 4 (IPVS through keepalived) -----------------------------------------------------

# How a service forwards: "proxy" is HAProxy (layer 7, or TCP proxying); the others are
# IPVS forwarding methods (masquerading, direct routing, IP-in-IP tunnelling).
FORWARDING = catalog.words(catalog.FORWARDING)
IPVS_FORWARDING = catalog.words(catalog.FORWARDING, catalog.IPVS)
MEMBER_FORWARDING = ("",) + IPVS_FORWARDING  # "" = the service's method
L4_PROTOCOLS = ("tcp", "udp")
ON_FAILURE = catalog.words(catalog.ON_FAILURE)  # a failed real server leaves IPVS, or stays with weight 0
IPVS_CHECK_TYPES = catalog.words(catalog.CHECK_TYPES, catalog.IPVS)
PROXY_CHECK_TYPES = catalog.words(catalog.CHECK_TYPES, catalog.PROXY)
IPVS_WEIGHT_MAX = 65535
DNS_TYPES = ("A", "AAAA", "CNAME", "MX", "NS", "SOA", "TXT")
DNS_NAME_RE = re.compile(
    r"\A(\.|(?=.{1,253}\Z)[A-Za-z0-9_]([A-Za-z0-9_-]{0,62})(\.[A-Za-z0-9_]([A-Za-z0-9_-]{0,62}))*\.?)\Z"
)
DIGEST_RE = re.compile(r"\A[0-9a-f]{32}\Z")
DIGEST_HELP = "The MD5 of the page as 32 lower-case hex digits (md5sum of the body, or keepalived's genhash)."
# Text keepalived reads inside double quotes: printable ASCII without the characters its
# parser treats specially (comments '!' '#', quotes, '\\', '$' parameters, '{' '}' blocks).
KEEPALIVED_TEXT_RE = re.compile(r"\A[\x20\x25-\x26\x28-\x5b\x5d-\x7a\x7c\x7e]{1,512}\Z")
KEEPALIVED_TEXT_HELP = "Printable ASCII without ! # $ \" ' \\ { } (keepalived's parser gives them meaning)."
# keepalived reads its configuration in lines of at most 1023 characters (a 1024-byte buffer):
# a longer line is cut, and its quote never ends. An HTTP check's regex line takes 24 of them
# besides the pattern (indentation, keyword, quotes).
KEEPALIVED_REGEX_MAX = 999
# MISC_CHECK: a program installed on the nodes under one of these directories (root-owned,
# so an API user can choose among vetted checks but not run arbitrary commands), with
# plain arguments. keepalived refuses to run a program without enable_script_security, and
# runs it as root: keepalived 2.2's --config-test is killed (SIGTERM) when the script user
# is anyone else, and a configuration we cannot test is not published.
CHECK_SCRIPT_DIRS = ("/etc/fulcrum/checks/", "/usr/lib/fulcrum/checks/")
CHECK_SCRIPT_RE = re.compile(
    r"\A(/etc/fulcrum/checks/|/usr/lib/fulcrum/checks/)[A-Za-z0-9][A-Za-z0-9_.-]{0,127}"
    r"( [A-Za-z0-9_.,:=@%+/-]{1,128}){0,16}\Z"
)
CHECK_SCRIPT_HELP = (
    "A program under /etc/fulcrum/checks/ or /usr/lib/fulcrum/checks/ and up to 16 plain arguments "
    "(letters, digits and _ . , : = @ % + / -), separated by single spaces."
)
# keepalived reads the command on one line with the member's address and port after the
# program (up to 46 characters with an IPv6 address) and 24 of indentation, keyword and quotes.
CHECK_SCRIPT_MAX = 950
SYNC_ID_MAX = 255
SYNC_MAXLEN_MAX = 65507
INTERFACE_RE = re.compile(r"\A[A-Za-z0-9][A-Za-z0-9_.@-]{0,14}\Z")
INTERFACE_HELP = "A network interface name such as eth1 (1-15 characters)."

# High availability (VRRP through keepalived, state sync through HAProxy peers).
VRID_MIN, VRID_MAX = 1, 255
VRRP_PRIORITY_MIN, VRRP_PRIORITY_MAX = 1, 254  # 255 is the address owner's; 0 means "giving up"
VRRP_VERSIONS = (2, 3)
# VRRPv3 counts in centiseconds (up to 4095); VRRPv2 in whole seconds (up to 255).
ADVERT_V3_MS_MIN, ADVERT_V3_MS_MAX, ADVERT_V3_MS_STEP = 10, 40_950, 10
ADVERT_V2_MS_MIN, ADVERT_V2_MS_MAX, ADVERT_V2_MS_STEP = 1000, 255_000, 1000
PREEMPT_DELAY_S_MAX = 1000
GARP_REFRESH_S_MAX = 86_400
GARP_REPEAT_MIN, GARP_REPEAT_MAX = 1, 100
HA_VIPS_MAX = 64
TRACK_INTERFACES_MAX = 16
# VRRPv2 PASS authentication: keepalived keeps the first 8 characters; no spaces or quotes.
VRRP_PASSWORD_RE = re.compile(r"\A[A-Za-z0-9_.:@-]{1,8}\Z")
VRRP_PASSWORD_HELP = "1-8 characters: letters, digits and _ . : @ -"
# Where a node's agent and keepalived meet: the track files and the notify FIFO.
HA_RUN_DIR = "/run/fulcrum-agent"
# HAProxy peers: stick tables (persistence) replicated between the nodes.
PEERS_PORT = 10000
PEERS_SECTION = "fulcrum"


# The patterns above the console checks fields with before it sends them, by name.
CONSOLE_PATTERNS = (
    "NAME",
    "HTTP_PATH",
    "HOST",
    "FIELD_NAME",
    "TEXT",
    "MIME_TYPE",
    "REDIRECT",
    "SNI",
    "INTERFACE",
    "DNS_NAME",
    "DIGEST",
    "CHECK_SCRIPT",
    "VRRP_PASSWORD",
    "KEEPALIVED_TEXT",
    "PATH_PATTERN",
    "EXTENSION",
)


def exported_patterns():
    """{NAME: {pattern, help}} of CONSOLE_PATTERNS, as ECMAScript patterns: Python's \\A and
    \\Z anchors are JavaScript's ^ and $ (without the multiline flag); the rest is written in
    the syntax both share."""
    out = {}
    for name in CONSOLE_PATTERNS:
        source = re.sub(r"(?<!\\)\\A", "^", globals()[f"{name}_RE"].pattern)
        out[name] = {"pattern": re.sub(r"(?<!\\)\\Z", "$", source), "help": globals().get(f"{name}_HELP", "")}
    return out
