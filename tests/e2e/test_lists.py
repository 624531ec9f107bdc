"""The services list at more than a page (webui/e2e/lists.spec.ts) against the real API: the
console asks for one page, searched and sorted by the API, and pages through the rest. This
file creates the lst-* services it reads and deletes them afterwards."""

import pytest

pytestmark = pytest.mark.browser

PREFIX = "lst"
COUNT = 130  # a page of 100 and 30 more
VIP_NET = "10.77.150"


def test_the_services_list_is_paged_searched_and_sorted_by_the_api(stack, playwright):
    pool = stack.api.create("/api/v1/pools/", name=f"{PREFIX}-pool", algorithm="round-robin")
    made = []
    try:
        for i in range(COUNT):
            name, vip = f"{PREFIX}-{i:03d}", f"{VIP_NET}.{i + 1}"
            made.append(
                stack.api.create("/api/v1/virtual-services/", name=name, vip=vip, port=80, default_pool=pool["id"])
            )
        total = stack.api.get("/api/v1/virtual-services/?limit=1").json()["count"]
        playwright("lists.spec.ts", LIST_PREFIX=PREFIX, LIST_COUNT=str(COUNT), LIST_TOTAL=str(total))
        assert stack.api.get("/api/v1/virtual-services/?limit=1").json()["count"] == total  # looking changed nothing
    finally:
        for service in made:
            stack.api.delete(f"/api/v1/virtual-services/{service['id']}/")
        stack.api.delete(f"/api/v1/pools/{pool['id']}/")
    assert stack.api.get(f"/api/v1/virtual-services/?search={PREFIX}-").json()["count"] == 0
