"""Checks of single values (names, addresses, ranges, texts, patterns) that every domain's
verification uses; each returns a list of problems (path, message)."""

import ipaddress

from compiler import pcre, rules


def duplicate_names(items, kind):
    seen, problems = set(), []
    for item in items:
        if item.name in seen:
            problems.append((f"{kind}/{item.name}", "duplicate name"))
        seen.add(item.name)
    return problems


def name_problems(value, path):
    return [] if rules.NAME_RE.match(value) else [(path, f"invalid name {value!r}: {rules.NAME_HELP}")]


def parsed_address(value):
    """``value`` as an ip_address, or None if it is not one."""
    try:
        return ipaddress.ip_address(value)
    except ValueError:
        return None


def address_problems(value, path):
    return [] if parsed_address(value) is not None else [(path, f"not an IP address: {value!r}")]


BROADCAST = ipaddress.IPv4Address("255.255.255.255")


def unusable(address):
    """Why no packet can be sent to ``address`` (an ip_address) from a node, or "": multicast,
    broadcast, or a zone (fe80::1%eth0), which means something on one host only."""
    return (
        (address.is_multicast and "a multicast address")
        or (address == BROADCAST and "the broadcast address")
        or (getattr(address, "scope_id", None) and "a scoped address (%zone)")
        or ""
    )


def member_address_problems(value, loopback, path):
    """A member HAProxy and IPVS can connect to; the unspecified address would reach the node
    itself (HAProxy connecting to its own listeners). A loopback address reaches a service on
    each node itself: only when the member says so (``loopback``), as a typo for a real
    server's address would otherwise send its traffic to whatever listens on the node."""
    if (address := parsed_address(value)) is None:
        return address_problems(value, path)
    why = unusable(address) or (address.is_unspecified and "the unspecified address, which reaches the node itself")
    if why:
        return [(path, f"{value!r} is {why}: it cannot be a member")]
    if address.is_loopback and not loopback:
        return [
            (path, f"{value!r} is a loopback address, which reaches each node itself: set loopback if it is meant to")
        ]
    if loopback and not address.is_loopback:
        return [
            (path.rsplit("/", 1)[0] + "/loopback", f"set, but {value} is not a loopback address (127.0.0.0/8, ::1)")
        ]
    return []


def port_end_problems(port, port_end, path):
    """A port range's last port (0: no range) comes after its first."""
    return within(port_end, port + 1, rules.PORT_MAX, path) if port_end else []


def vip_problems(value, path):
    """A VIP the nodes can hold and bind (0.0.0.0 and :: bind every address, as HAProxy's
    ``bind :80``): not IPv4-mapped IPv6 (the IPv4 address is the VIP), nor IPv6 link-local
    (bound only with a zone)."""
    if (address := parsed_address(value)) is None:
        return address_problems(value, path)
    why = unusable(address)
    if not why and address.version == 6 and address.ipv4_mapped:
        why = f"an IPv4-mapped IPv6 address (make {address.ipv4_mapped} the VIP)"
    elif not why and address.version == 6 and address.is_link_local:
        why = "an IPv6 link-local address"
    return [(path, f"{value!r} is {why}: it cannot be a VIP")] if why else []


def within(value, low, high, path):
    return [] if low <= value <= high else [(path, f"{value} is outside {low}..{high}")]


def one_of(value, allowed, path):
    return [] if value in allowed else [(path, f"{value!r} is not one of {', '.join(map(str, allowed))}")]


def page_problems(text, limit, path):
    """A page HAProxy answers: it must fit in the buffer HAProxy answers it from."""
    size = len(text.encode())
    if size <= limit:
        return []
    return [(path, f"{size} bytes (UTF-8): HAProxy answers a page of at most {limit} bytes from its buffer")]


def field_name_problems(value, path):
    return [] if rules.FIELD_NAME_RE.match(value) else [(path, f"invalid name {value!r}: {rules.FIELD_NAME_HELP}")]


def text_problems(value, path, limit=rules.VALUE_MAX):
    if len(value) > limit:
        return [(path, f"longer than {limit} characters")]
    return [] if rules.TEXT_RE.match(value) else [(path, f"invalid text {value!r}: {rules.TEXT_HELP}")]


def regex_problems(value, path):
    """A pattern the daemons' engine (PCRE2) compiles."""
    problems = text_problems(value, path, rules.REGEX_MAX)
    if not problems and (error := pcre.compile_error(value)):
        problems.append((path, f"regular expression does not compile in HAProxy and keepalived (PCRE2): {error}"))
    return problems


def cidr_problems(value, path):
    """An address or a block with a prefix length. Not a mask: Python reads 10.0.0.0/0.255.255.255
    as the hostmask of 10.0.0.0/8, HAProxy as a netmask that lets 11.0.0.0 in."""
    try:
        network = ipaddress.ip_network(value, strict=False)
    except ValueError:
        return [(path, f"not an address or CIDR block: {value!r}")]
    if "/" in value and not value.partition("/")[2].isdigit():
        return [(path, f"{value!r}: write the prefix length, such as {network.with_prefixlen}, not a mask")]
    return []


def digest_problems(value, path):
    return [] if rules.DIGEST_RE.match(value) else [(path, f"invalid digest {value!r}: {rules.DIGEST_HELP}")]


def interface_problems(value, path):
    if rules.INTERFACE_RE.match(value):
        return []
    return [(path, f"invalid interface {value!r}: {rules.INTERFACE_HELP}")]
