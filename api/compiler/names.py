"""How the rendered files name the operator's objects.

One place for the renderers, which write these names, and for compiler.locate, which reads
a daemon's complaints back to the objects by the same names. Operator names are already
limited to inert characters (rules.NAME_RE); the renderers still escape what they write.
"""


def frontend(service_name):
    """The HAProxy frontend of a proxied virtual service."""
    return f"vs-{service_name}"


def backend(pool_name):
    """The HAProxy backend of a pool; also what content switching routes to."""
    return f"pool-{pool_name}"


def certificate_file(name):
    """haproxy.d/ leaf of a certificate's chain and key."""
    return f"cert-{name}.pem"


def ca_file(name):
    """haproxy.d/ leaf of a certificate's CA bundle (client or member verification)."""
    return f"ca-{name}.pem"


def error_page_file(service_name, status):
    """haproxy.d/ leaf of a virtual service's error page for ``status``."""
    return f"vs-{service_name}.error-{status}.http"


def rules_map_file(service_name, start):
    """haproxy.d/ leaf of the map that a run of a service's rules, from ``start``, compiles to."""
    return f"vs-{service_name}.rules-{start}.map"


def maintenance_page_file(pool_name):
    """haproxy.d/ leaf of a pool's maintenance page."""
    return f"pool-{pool_name}.maintenance.html"


def witness_script(group_name):
    """keepalived's vrrp_script that pings an HA group's witness."""
    return f"fulcrum_witness_{group_name}"
