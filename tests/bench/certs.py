"""Throw-away TLS material for the benchmark, made with the openssl CLI at bench time.

Per key type (RSA-2048, ECDSA P-256): a CA, a server certificate for the VIPs and a
client certificate, both signed by that CA. The servers of one key type trust that CA
for client certificates, so a client-certificate handshake costs one signature of the
same kind on each side.
"""

from __future__ import annotations

import hashlib
import ssl
import subprocess
from dataclasses import dataclass
from pathlib import Path

from tests.bench.plan import TLS_KEY_TYPES

KEY_ARGS = {"rsa": ["-newkey", "rsa:2048"], "ecdsa": ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256"]}
DAYS = "3"
SERVER_NAME = "bench.fulcrum.test"


@dataclass(frozen=True)
class KeyTypeMaterial:
    """PEM texts and the files they were written to, for one key type."""

    ca_pem: str
    server_cert_pem: str  # leaf + CA
    server_key_pem: str
    client_cert_path: Path
    client_key_path: Path

    @property
    def server_bundle(self) -> str:
        """Leaf, chain and key in one PEM (HAProxy's crt, and nginx reads it whole too)."""
        return self.server_cert_pem + self.server_key_pem


def fingerprint(pem: str) -> str:
    """SHA-256 of the first certificate's DER, as a snapshot names certificates."""
    end = "-----END CERTIFICATE-----"
    first = pem[: pem.index(end) + len(end)]
    return hashlib.sha256(ssl.PEM_cert_to_DER_cert(first)).hexdigest()


def _openssl(*args: str) -> None:
    proc = subprocess.run(["openssl", *args], capture_output=True, text=True, timeout=60)
    if proc.returncode != 0:
        raise RuntimeError(f"openssl {' '.join(args[:2])}: {proc.stderr.strip()}")


def _signed(directory: Path, stem: str, key_type: str, subject: str, ext: str) -> None:
    key, csr, cert, extfile = (directory / f"{stem}.{suffix}" for suffix in ("key", "csr", "pem", "ext"))
    extfile.write_text(ext)
    _openssl("req", *KEY_ARGS[key_type], "-nodes", "-keyout", str(key), "-out", str(csr), "-subj", subject)
    ca = directory / f"ca-{key_type}"
    _openssl(
        "x509", "-req", "-in", str(csr), "-CA", f"{ca}.pem", "-CAkey", f"{ca}.key", "-CAcreateserial",
        "-days", DAYS, "-sha256", "-out", str(cert), "-extfile", str(extfile),
    )  # fmt: skip


def generate(directory: Path) -> dict[str, KeyTypeMaterial]:
    """Make every key type's CA, server and client certificate under ``directory``."""
    material = {}
    for key_type in TLS_KEY_TYPES:
        ca = directory / f"ca-{key_type}"
        _openssl(
            "req", "-x509", *KEY_ARGS[key_type], "-nodes", "-keyout", f"{ca}.key", "-out", f"{ca}.pem",
            "-days", DAYS, "-sha256", "-subj", f"/CN=Fulcrum bench {key_type} CA",
        )  # fmt: skip
        _signed(
            directory,
            f"server-{key_type}",
            key_type,
            f"/CN={SERVER_NAME}",
            f"subjectAltName=DNS:{SERVER_NAME}\nextendedKeyUsage=serverAuth\n",
        )
        _signed(directory, f"client-{key_type}", key_type, "/CN=bench client", "extendedKeyUsage=clientAuth\n")
        ca_pem = (directory / f"ca-{key_type}.pem").read_text()
        material[key_type] = KeyTypeMaterial(
            ca_pem=ca_pem,
            server_cert_pem=(directory / f"server-{key_type}.pem").read_text() + ca_pem,
            server_key_pem=(directory / f"server-{key_type}.key").read_text(),
            client_cert_path=directory / f"client-{key_type}.pem",
            client_key_path=directory / f"client-{key_type}.key",
        )
    return material
