"""Certificates and keys through the ``cryptography`` library: split and load PEM text,
describe what it holds, make self-signed certificates.

Pure: no Django, no database, no clock (callers pass ``now``). Loaders raise ``PemError``
with a message for the operator; validators.py decides which field it belongs to.
"""

import ipaddress
import itertools
import re
from datetime import timedelta

from cryptography import x509
from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

MIN_RSA_BITS = 2048
CURVE_NAMES = {"secp256r1": "p256", "secp384r1": "p384", "secp521r1": "p521"}
SUPPORTED_KEYS = f"RSA ({MIN_RSA_BITS} bits or more) or ECDSA (P-256, P-384, P-521)"
# Backdate generated certificates a little so a node whose clock lags still accepts them.
CLOCK_SKEW = timedelta(minutes=5)

# One armoured block: BEGIN line, a body holding no other armour line, the matching END line.
_BLOCK_RE = re.compile(r"-----BEGIN ([A-Z0-9 ]{1,64})-----\n((?:(?!-----)[\s\S])*?)-----END \1-----")
_CERTIFICATE = "CERTIFICATE"
_KEY_LABELS = ("PRIVATE KEY", "RSA PRIVATE KEY", "EC PRIVATE KEY", "ENCRYPTED PRIVATE KEY")
_EC_PARAMETERS = "EC PARAMETERS"  # `openssl ecparam -genkey` writes it before the key; dropped
_NOT_PEM = "Not PEM text: paste the {what} from the -----BEGIN line to the -----END line, and nothing else."


class PemError(ValueError):
    """Input that is not what it should be; the message is meant for the operator."""


class PassphraseError(PemError):
    """The passphrase, rather than the key, is at fault."""


def split_pem(text, what):
    """The ``(label, block)`` pairs in ``text``. Anything but whitespace between the blocks
    (DER, notes, a second payload) is refused rather than skipped."""
    text = text.replace("\r\n", "\n")
    blocks, position = [], 0
    for match in _BLOCK_RE.finditer(text):
        if text[position : match.start()].strip():
            raise PemError(_NOT_PEM.format(what=what))
        blocks.append((match[1], match[0] + "\n"))
        position = match.end()
    if text[position:].strip() or not blocks:
        raise PemError(_NOT_PEM.format(what=what))
    return blocks


def load_certificates(text):
    """Every certificate in ``text``, in order."""
    certificates = []
    for number, (label, block) in enumerate(split_pem(text, "certificate(s)"), 1):
        if label != _CERTIFICATE:
            raise PemError(f"Block {number} is a {label.lower()}; only certificates belong here.")
        try:
            certificate = x509.load_pem_x509_certificate(block.encode("ascii"))
            describe(certificate)  # extensions are parsed lazily: fail here, not on read
        except ValueError:
            raise PemError(f"Certificate {number} does not parse as X.509.") from None
        certificates.append(certificate)
    return certificates


def load_private_key(text, passphrase=""):
    """The one private key in ``text``, decrypted with ``passphrase`` when it is encrypted."""
    blocks = [(label, block) for label, block in split_pem(text, "private key") if label != _EC_PARAMETERS]
    others = [label for label, _ in blocks if label not in _KEY_LABELS]
    if others:
        raise PemError(f"Holds a {others[0].lower()}; only one private key belongs here.")
    if len(blocks) != 1:
        raise PemError(f"Holds {len(blocks)} private keys; give exactly one.")
    label, block = blocks[0]
    encrypted = label == "ENCRYPTED PRIVATE KEY" or "Proc-Type: 4,ENCRYPTED" in block
    if encrypted and not passphrase:
        raise PemError("Encrypted: give its passphrase in passphrase (the key is then stored decrypted).")
    if passphrase and not encrypted:
        raise PassphraseError("private_key is not encrypted; leave passphrase out.")
    try:
        return serialization.load_pem_private_key(block.encode("ascii"), passphrase.encode() or None)
    except UnsupportedAlgorithm:
        raise PemError(f"Unsupported key or encryption algorithm; use {SUPPORTED_KEYS}.") from None
    except (ValueError, TypeError):
        if encrypted:
            raise PassphraseError("Does not decrypt private_key.") from None
        raise PemError("Does not parse as a private key.") from None


def key_type(key):
    """``rsa-2048``, ``ecdsa-p256``... for a public or private key; PemError for keys the
    appliance refuses (weak RSA, other algorithms or curves)."""
    if isinstance(key, rsa.RSAPrivateKey | rsa.RSAPublicKey):
        if key.key_size < MIN_RSA_BITS:
            raise PemError(f"RSA key of {key.key_size} bits; at least {MIN_RSA_BITS} are required.")
        return f"rsa-{key.key_size}"
    if isinstance(key, ec.EllipticCurvePrivateKey | ec.EllipticCurvePublicKey) and key.curve.name in CURVE_NAMES:
        return f"ecdsa-{CURVE_NAMES[key.curve.name]}"
    raise PemError(f"Unsupported key type; use {SUPPORTED_KEYS}.")


def key_matches(key, certificate):
    """Whether ``key`` is the private half of ``certificate``'s public key."""
    return _public_der(key.public_key()) == _public_der(certificate.public_key())


def certificates_pem(certificates):
    """Certificates as canonical PEM text, one block after another."""
    return "".join(c.public_bytes(serialization.Encoding.PEM).decode("ascii") for c in certificates)


def private_key_pem(key):
    """A key as unencrypted PKCS#8 PEM, the form stored and handed to HAProxy."""
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode("ascii")


def describe(certificate):
    """The facts the API shows about a certificate."""
    return {
        "subject": certificate.subject.rfc4514_string(),
        "issuer": certificate.issuer.rfc4514_string(),
        "sans": subject_alt_names(certificate),
        "not_before": certificate.not_valid_before_utc,
        "not_after": certificate.not_valid_after_utc,
        "fingerprint": certificate.fingerprint(hashes.SHA256()).hex(),
        "is_ca": _extension(certificate, x509.BasicConstraints, "ca", False),
    }


def subject_alt_names(certificate):
    """DNS names then IP addresses from the subjectAltName extension, as strings."""
    names = _extension(certificate, x509.SubjectAlternativeName, None, None)
    if names is None:
        return []
    return names.get_values_for_type(x509.DNSName) + [str(ip) for ip in names.get_values_for_type(x509.IPAddress)]


def link_warnings(leaf, chain):
    """Where the chain a server sends fails to lead from the leaf towards a root."""
    found = []
    if chain and not _issued_by(leaf, chain[0]):
        found.append(
            f"the chain does not link to the certificate's issuer: it was issued by "
            f"{leaf.issuer.rfc4514_string()}, the chain starts with {chain[0].subject.rfc4514_string()}"
        )
    for number, (child, parent) in enumerate(itertools.pairwise(chain), 1):
        if not _issued_by(child, parent):
            found.append(f"chain certificate {number} is not issued by chain certificate {number + 1}")
    return found


def expiry_warnings(chain, now):
    """Chain certificates already expired (kept as warnings: old cross-signs often linger)."""
    return [
        f"chain certificate {number} ({c.subject.rfc4514_string()}) expired on {c.not_valid_after_utc:%Y-%m-%d}"
        for number, c in enumerate(chain, 1)
        if c.not_valid_after_utc <= now
    ]


def generate_self_signed(common_name, sans, key_type_name, days, now):
    """A new key and a self-signed server certificate for it, as ``(certificate_pem, key_pem)``."""
    key = _new_key(key_type_name)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - CLOCK_SKEW)
        .not_valid_after(now + timedelta(days=days))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.SubjectAlternativeName([_general_name(s) for s in sans]), critical=False)
        .add_extension(_server_key_usage(isinstance(key, rsa.RSAPrivateKey)), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA384() if key_type_name == "ecdsa-p384" else hashes.SHA256())
    )
    return certificates_pem([certificate]), private_key_pem(key)


def _new_key(key_type_name):
    algorithm, _, size = key_type_name.partition("-")
    if algorithm == "rsa":
        return rsa.generate_private_key(public_exponent=65537, key_size=int(size))
    curves = {"p256": ec.SECP256R1, "p384": ec.SECP384R1}
    return ec.generate_private_key(curves[size]())


def _server_key_usage(is_rsa):
    # RSA key exchange (TLS 1.2 without ECDHE) enciphers with the key; ECDSA only signs.
    return x509.KeyUsage(
        digital_signature=True,
        content_commitment=False,
        key_encipherment=is_rsa,
        data_encipherment=False,
        key_agreement=False,
        key_cert_sign=False,
        crl_sign=False,
        encipher_only=False,
        decipher_only=False,
    )


def _general_name(value):
    try:
        return x509.IPAddress(ipaddress.ip_address(value))
    except ValueError:
        return x509.DNSName(value)


def _extension(certificate, kind, attribute, default):
    try:
        value = certificate.extensions.get_extension_for_class(kind).value
    except x509.ExtensionNotFound:
        return default
    return getattr(value, attribute) if attribute else value


def _issued_by(child, parent):
    try:
        child.verify_directly_issued_by(parent)
    except (ValueError, TypeError, InvalidSignature):
        return False
    return True


def _public_der(public_key):
    return public_key.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
