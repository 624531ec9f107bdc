"""The Jinja environment of every template, and the filters that escape operator strings.

Each filter is the last line of defence for its daemon's parser: a value that could change
how the file is read raises instead of being written. Registered here, in one place.
"""

import ipaddress
import re
from functools import cache

import jinja2

from compiler import names
from compiler.switching import conf_file, log_format, quote

# haproxy.cfg words: nothing HAProxy's parser gives meaning to (space, quotes, '#', '$', '\').
_INERT_WORD = re.compile(r"\A[A-Za-z0-9_.:/%?&=+,;~!*()@\[\]-]+\Z")
# keepalived words: what may stand unquoted (names, addresses, host names).
_KEEPALIVED_WORD = re.compile(r"\A[A-Za-z0-9_.:/@-]+\Z")
# Inside double quotes keepalived still treats these specially; verify refuses them.
_KEEPALIVED_UNSAFE = re.compile(r"[\x00-\x1f\x7f!#$\"'\\{}]")
# nftables words: addresses, prefixes, ports and ranges, protocol and set names.
_NFT_WORD = re.compile(r"\A[A-Za-z0-9_.:/-]+\Z")
# nftables comments: a quoted string that cannot end early; nft refuses more than 128 bytes.
_NFT_COMMENT = re.compile(r"\A[A-Za-z0-9 _.:/@-]{1,128}\Z")


def haproxy_word(value):
    """Jinja filter: pass a value into haproxy.cfg only if it cannot change the parse."""
    text = str(value)
    if not _INERT_WORD.match(text):
        raise ValueError(f"refusing to render {text!r} into haproxy.cfg")
    return text


# An IPv4 address as ipaddress writes it (no leading zeros): rendered as it is, without parsing
# it (80,000 servers at 10,000 services: half a second).
_OCTET = r"(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
_DOTTED_QUAD = re.compile(rf"\A(?:{_OCTET}\.){{3}}{_OCTET}\Z")


def haproxy_address(address, port):
    """``10.0.0.1:80`` or ``[2001:db8::1]:80``."""
    if not _DOTTED_QUAD.match(address):
        ip = ipaddress.ip_address(address)
        address = f"[{ip.compressed}]" if ip.version == 6 else ip.compressed
    return haproxy_word(f"{address}:{port}")


def keepalived_word(value):
    """Jinja filter: an unquoted keepalived word, refused if it could change the parse."""
    text = str(value)
    if not _KEEPALIVED_WORD.match(text):
        raise ValueError(f"refusing to render {text!r} into keepalived.conf")
    return text


def keepalived_quote(value):
    """Jinja filter: a double-quoted keepalived string, refused if it holds special characters."""
    text = str(value)
    if not text or _KEEPALIVED_UNSAFE.search(text):
        raise ValueError(f"refusing to render {text!r} into keepalived.conf")
    return f'"{text}"'


def nft_word(value):
    """Jinja filter: an unquoted nftables word, refused if it could change the parse."""
    text = str(value)
    if not _NFT_WORD.match(text):
        raise ValueError(f"refusing to render {text!r} into an nftables script")
    return text


def nft_comment(value):
    """Jinja filter: a double-quoted nftables comment, refused unless it is plain text."""
    text = str(value)
    if not _NFT_COMMENT.match(text):
        raise ValueError(f"refusing to render {text!r} as an nftables comment")
    return f'"{text}"'


@cache
def environment():
    """The shared environment: templates under compiler/templates/, strict about undefined names."""
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("compiler", "templates"),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )
    env.filters.update(
        word=haproxy_word,
        address=haproxy_address,
        frontend=names.frontend,
        backend=names.backend,
        quote=quote,
        log_format=log_format,
        conf_file=conf_file,
        kword=keepalived_word,
        kquote=keepalived_quote,
        nword=nft_word,
        ncomment=nft_comment,
    )
    return env
