"""Validation of certificate content and names: every problem on the field it concerns."""

import ipaddress
import re
from dataclasses import dataclass

from django.core.exceptions import ValidationError

from certificates import crypto
from compiler import rules

MAX_PEM_BYTES = 64 * 1024
MAX_PASSPHRASE_CHARS = 1024
SUBJECT_NAME_HELP = "Enter a DNS name (www.example.com, *.example.com) or an IP address."
IMMUTABLE = "{field} cannot be changed: create a new certificate with the new content and point the service at it."
_WILDCARD_PREFIX = re.compile(r"\A\*\.")
_NUMERIC = re.compile(r"\A[0-9.]+\Z")  # looks like an IPv4 address but is not a valid one


def validate_pem_size(value):
    """Refuse PEM text over 64 KiB before any parsing (a long chain is a few KiB)."""
    if len(value.encode()) > MAX_PEM_BYTES:
        raise ValidationError(f"Too large: at most {MAX_PEM_BYTES // 1024} KiB of PEM text.")


def validate_subject_name(value):
    """A DNS name, optionally with a leading wildcard label, or an IP address."""
    try:
        ipaddress.ip_address(value)
        return
    except ValueError:
        pass
    host = _WILDCARD_PREFIX.sub("", value, count=1)
    if not rules.HOST_RE.match(host) or _NUMERIC.match(host):
        raise ValidationError(SUBJECT_NAME_HELP)


@dataclass(frozen=True)
class Content:
    """Checked content in the canonical PEM form that is stored."""

    certificate: str
    chain: str
    private_key: str
    fingerprint: str


def validate_content(certificate, chain, private_key, passphrase, now):
    """Parse and check an upload; raise ValidationError naming every field at fault, so
    nothing is stored unless the whole of it is sound. ``now`` None skips the validity
    dates (a restore brings back certificates that have expired since; they warn as usual)."""
    errors = {}
    leaf = _check(errors, "certificate", _load_leaf, certificate, now)
    chain_certificates = _check(errors, "chain", crypto.load_certificates, chain) if chain else []
    key = None
    if private_key:
        key = _check(errors, "private_key", _load_key, private_key, passphrase)
    elif passphrase:
        errors["passphrase"] = ["Only used to decrypt private_key, which is empty."]
    if leaf is not None and key is not None and not crypto.key_matches(key, leaf):
        errors["private_key"] = ["Does not match the certificate's public key."]
    if errors:
        raise ValidationError(errors)
    return Content(
        certificate=crypto.certificates_pem([leaf]),
        chain=crypto.certificates_pem(chain_certificates or []),
        private_key=crypto.private_key_pem(key) if key is not None else "",
        fingerprint=crypto.describe(leaf)["fingerprint"],
    )


def canonical_content(field, value):
    """``value`` as it would be stored in ``field``, or None when it does not load (an update
    compares this with the stored text to tell a resend from a change)."""
    if not isinstance(value, str):
        return None
    if not value.strip():
        return ""
    try:
        if field == "private_key":
            return crypto.private_key_pem(crypto.load_private_key(value))
        return crypto.certificates_pem(crypto.load_certificates(value))
    except crypto.PemError:
        return None


def _check(errors, field, load, *args):
    try:
        return load(*args)
    except crypto.PassphraseError as exc:
        errors.setdefault("passphrase", []).append(str(exc))
    except crypto.PemError as exc:
        errors.setdefault(field, []).append(str(exc))
    return None


def _load_leaf(text, now):
    certificates = crypto.load_certificates(text)
    if len(certificates) > 1:
        raise crypto.PemError(
            f"Holds {len(certificates)} certificates: put the server certificate (or, for a CA bundle, "
            "the first CA) here and the others in chain."
        )
    leaf = certificates[0]
    if now is not None and leaf.not_valid_before_utc > now:
        raise crypto.PemError(f"Not valid before {leaf.not_valid_before_utc:%Y-%m-%d %H:%M} UTC.")
    if now is not None and leaf.not_valid_after_utc <= now:
        raise crypto.PemError(f"Expired on {leaf.not_valid_after_utc:%Y-%m-%d %H:%M} UTC.")
    crypto.key_type(leaf.public_key())
    return leaf


def _load_key(text, passphrase):
    key = crypto.load_private_key(text, passphrase)
    crypto.key_type(key)
    return key
