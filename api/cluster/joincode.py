"""The join code's format and signature, shared by both sides of a join (``cluster.join`` on
the cluster, ``cluster.join_client`` on the joining appliance). Standard library only.

A code is ``ID`` + ``SECRET``: 4 + 16 characters of Crockford's base32 (80 bits of secret),
shown as five groups of four: ``K7QM-W2XD-9HRT-5BNP-3CAZ``.
"""

import hashlib
import hmac
import re
import secrets

ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"  # Crockford's base32: no I, L, O, U
ID_LENGTH = 4
SECRET_LENGTH = 16
GROUP = 4
# What a person may type for a character (Crockford: O is 0, I and L are 1).
_READ_AS = str.maketrans({"O": "0", "I": "1", "L": "1"})
_SEPARATORS = re.compile(r"[\s-]+")


def random_part(length):
    return "".join(secrets.choice(ALPHABET) for _ in range(length))


def display(code):
    """``K7QMW2XD...`` as ``K7QM-W2XD-...``."""
    return "-".join(code[i : i + GROUP] for i in range(0, len(code), GROUP))


def parse(text):
    """``(id, secret)`` from a code as a person may type it (any case, dashes or spaces
    anywhere, O for 0, I or L for 1); None if it cannot be a code."""
    if not isinstance(text, str):
        return None
    code = _SEPARATORS.sub("", text).upper().translate(_READ_AS)
    if len(code) != ID_LENGTH + SECRET_LENGTH or any(c not in ALPHABET for c in code):
        return None
    return code[:ID_LENGTH], code[ID_LENGTH:]


def sign(secret, text):
    """HMAC-SHA256 of ``text`` keyed by the code's secret part, in hex."""
    return hmac.new(secret.encode(), text.encode(), hashlib.sha256).hexdigest()


def signed_by(secret, text, signature):
    return isinstance(signature, str) and hmac.compare_digest(sign(secret, text), signature)
