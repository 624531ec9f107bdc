"""What the compiler integration hands to daemons and puts in snapshots.

Pure: each helper reads the attributes of a Certificate (or anything shaped like one) and
touches neither the database nor the clock. Stored content is canonical PEM, so joining
the blocks is enough.
"""


def haproxy_pem(cert):
    """Certificate, chain, then key in one file: the form HAProxy's ``crt`` loads."""
    if not cert.private_key:
        raise ValueError(f"certificate {cert.name} has no private key: it can only verify peers")
    return _join(cert.certificate, cert.chain, cert.private_key)


def ca_pem(cert):
    """Certificate and chain, without key: the form HAProxy's ``ca-file`` loads."""
    return _join(cert.certificate, cert.chain)


def snapshot_entry(cert):
    """The certificate as a revision snapshot names it: no PEM, no secret."""
    return {"name": cert.name, "fingerprint": cert.fingerprint, "has_key": cert.has_key}


def _join(*texts):
    # Every block ends in a newline, so no two armour lines ever share a line.
    return "".join(text.strip() + "\n" for text in texts if text.strip())
