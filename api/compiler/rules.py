"""Rules on operator input shared by the API's validation and the compiler's verify.

Kept in one place so that what the API accepts is exactly what the compiler can render.
Every string that reaches a configuration file is limited to characters that carry no
meaning to the daemon's parser (no whitespace, quotes, '#', backslash or '$').
"""

import re

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

PROTOCOLS = ("http", "tcp")
ALGORITHMS = ("round-robin", "weighted-round-robin", "least-connections", "source-hash")
MEMBER_STATES = ("enabled", "drain", "disabled")
CHECK_TYPES = ("tcp", "http")
