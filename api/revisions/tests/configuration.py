"""A configuration with one of every kind of object, made through the API as an operator
would make it, for the rollback and backup tests."""

from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from certificates.models import Certificate
from certificates.tests.pki import Chain, cert_pem
from cluster.models import HaGroup, IpvsSync, Node
from revisions.models import Revision
from services.models import Pool, VirtualService


def admin_client(name="admin"):
    client = APIClient()
    client.force_authenticate(get_user_model().objects.create_superuser(name, password="x" * 12))
    return client


def agent_client(token):
    agent = APIClient()
    agent.credentials(HTTP_AUTHORIZATION=f"Node {token}")
    return agent


def post(client, url, body, expected=201):
    response = client.post(f"/api/v1/{url}", body, format="json")
    assert response.status_code == expected, (url, response.status_code, response.data)
    return response.data


def build(client):
    """Certificates (a chain with key, a generated one, a CA bundle), two nodes, two pools
    (members, health checks, persistence, re-encryption), two services (TLS with SNI,
    rules in order, a rate limit), an HA group with a VRRPv2 password, and IPVS sync.
    Returns the agent tokens by node name."""
    chain = Chain("www.example.com")
    site = post(client, "certificates/", {**chain.upload("site"), "description": "the public site"})
    other = post(client, "certificates/generate/", {"name": "other", "common_name": "api.example.com"})
    ca = post(client, "certificates/", {"name": "ca", "certificate": cert_pem(chain.root)})
    tokens = {}
    for name, address in (("lb1", "10.0.1.3"), ("lb2", "10.0.1.4")):
        tokens[name] = post(client, "nodes/", {"name": name, "address": address})["token"]
    web = post(
        client, "pools/", {"name": "web", "description": "the web tier", "persistence": {"type": "cookie_insert"}}
    )
    for i in (1, 2, 3):
        post(client, "members/", {"pool": web["id"], "name": f"s{i}", "address": f"10.0.2.1{i}", "port": 80})
    post(client, "health-checks/", {"pool": web["id"], "type": "http", "path": "/health"})
    api = post(client, "pools/", {"name": "api", "tls": True, "tls_ca": ca["id"], "algorithm": "least-connections"})
    post(client, "members/", {"pool": api["id"], "name": "a1", "address": "10.0.3.11", "port": 8443, "weight": 5})
    www = post(
        client,
        "virtual-services/",
        {
            "name": "www",
            "vip": "10.0.0.10",
            "port": 443,
            "protocol": "https",
            "default_pool": web["id"],
            "default_certificate": site["id"],
            "sni_certificates": [other["id"]],
            "description": "the shop",
            "rate_limit_requests": 100,
            "rate_limit_period_s": 20,
        },
    )
    prefix = [{"kind": "path_prefix", "values": ["/api/"], "name": "", "negate": False}]
    post(
        client,
        "rules/",
        {"virtual_service": www["id"], "name": "to-api", "conditions": prefix, "action": "use_pool", "pool": api["id"]},
    )
    post(
        client,
        "rules/",
        {
            "virtual_service": www["id"],
            "name": "seen",
            "conditions": [{"kind": "method", "values": ["GET"], "name": "", "negate": False}],
            "action": "set_response_header",
            "header_name": "X-Seen",
            "header_value": "yes",
        },
    )
    post(
        client,
        "virtual-services/",
        {"name": "plain", "vip": "10.0.0.10", "port": 80, "default_pool": web["id"], "redirect_https": True},
    )
    nodes = [{"node": Node.objects.get(name=n).pk, "priority": p} for n, p in (("lb1", 150), ("lb2", 100))]
    group = {"name": "front", "vrid": 51, "vips": ["10.0.0.10"], "vrrp_version": 2, "advert_interval_ms": 1000}
    group = post(client, "ha-groups/", {**group, "auth_password": "s3cret", "nodes": nodes})
    sync = client.put(
        "/api/v1/ipvs-sync/", {"enabled": True, "interface": "eth0", "ha_group": group["id"]}, format="json"
    )
    assert sync.status_code == 200, sync.data
    return tokens


def wipe():
    """An empty appliance: no object, node or revision."""
    VirtualService.objects.all().delete()
    Pool.objects.all().delete()
    IpvsSync.objects.all().delete()
    HaGroup.objects.all().delete()
    Certificate.objects.all().delete()
    Node.objects.all().delete()
    Revision.objects.all().delete()
