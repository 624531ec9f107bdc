"""A throwaway PKI for the tests, made with ``cryptography``: keys, CAs and leaves as PEM."""

from datetime import UTC, datetime, timedelta

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID


def rsa_key(bits=2048):
    return rsa.generate_private_key(public_exponent=65537, key_size=bits)


def ec_key(curve=ec.SECP256R1):
    return ec.generate_private_key(curve())


def ed25519_key():
    return ed25519.Ed25519PrivateKey.generate()


def issue(key, common_name, *, issuer=None, ca=False, sans=None, days=90, starts=-1, client=False):
    """A certificate for ``key`` signed by ``issuer`` (``(certificate, key)``) or self-signed.
    ``starts`` and ``days`` place its validity relative to now, in days."""
    now = datetime.now(UTC)
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    issuer_cert, issuer_key = issuer if issuer else (None, key)
    usage = ExtendedKeyUsageOID.CLIENT_AUTH if client else ExtendedKeyUsageOID.SERVER_AUTH
    builder = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer_cert.subject if issuer_cert else subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now + timedelta(days=starts))
        .not_valid_after(now + timedelta(days=starts + days))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
    )
    if issuer_cert is not None:
        builder = builder.add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(issuer_cert.public_key()), critical=False
        )
    if not ca:
        names = [x509.DNSName(n) for n in (sans if sans is not None else [common_name])]
        builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
        builder = builder.add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
    algorithm = None if isinstance(issuer_key, ed25519.Ed25519PrivateKey) else hashes.SHA256()
    return builder.sign(issuer_key, algorithm)


def cert_pem(*certificates):
    return "".join(c.public_bytes(serialization.Encoding.PEM).decode() for c in certificates)


def cert_der(certificate):
    return certificate.public_bytes(serialization.Encoding.DER)


def key_pem(key, passphrase=None, traditional=False):
    """PKCS#8 PEM (or the traditional OpenSSL form), encrypted when a passphrase is given."""
    encryption = (
        serialization.BestAvailableEncryption(passphrase.encode()) if passphrase else serialization.NoEncryption()
    )
    form = serialization.PrivateFormat.TraditionalOpenSSL if traditional else serialization.PrivateFormat.PKCS8
    return key.private_bytes(serialization.Encoding.PEM, form, encryption).decode()


class Chain:
    """root CA -> intermediate CA -> leaf, with every key kept."""

    def __init__(self, common_name="www.example.com", leaf_key=None):
        self.root_key = ec_key()
        self.root = issue(self.root_key, "Fulcrum Test Root", ca=True, days=3650)
        self.intermediate_key = ec_key()
        self.intermediate = issue(
            self.intermediate_key, "Fulcrum Test Intermediate", issuer=(self.root, self.root_key), ca=True, days=1800
        )
        self.leaf_key = leaf_key or rsa_key()
        self.leaf = issue(self.leaf_key, common_name, issuer=(self.intermediate, self.intermediate_key))

    def upload(self, name="web"):
        """An API body: leaf, intermediate as the chain, and the key."""
        return {
            "name": name,
            "certificate": cert_pem(self.leaf),
            "chain": cert_pem(self.intermediate),
            "private_key": key_pem(self.leaf_key),
        }

    def client(self, common_name):
        """A client certificate from this chain's intermediate: leaf, intermediate and key in one PEM."""
        key = ec_key()
        leaf = issue(key, common_name, issuer=(self.intermediate, self.intermediate_key), client=True)
        return cert_pem(leaf, self.intermediate) + key_pem(key)
