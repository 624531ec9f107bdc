"""Accessibility of the whole console (webui/e2e/a11y.spec.ts): axe finds no serious or critical
WCAG 2.1 AA violation on any page in light, dark or at phone width; the keyboard reaches the
shell and the phone menu; the theme switch holds. The spec deletes the shl-a11y objects it
made, so afterwards nothing of it is left and nothing new is pending."""

import pytest

pytestmark = pytest.mark.browser


def test_every_page_accessible_light_dark_and_narrow(stack, playwright):
    if stack.api.get("/api/v1/revisions/").json()["count"] == 0:
        # The revision detail page needs one; the stack's objects are all applied or deleted.
        stack.apply("shl: a revision for the accessibility check")
    pending = stack.api.get("/api/v1/revisions/pending/").json()["pending"]
    playwright("a11y.spec.ts")
    pools = [p["name"] for p in stack.api.get("/api/v1/pools/?limit=1000").json()["results"]]
    services = [s["name"] for s in stack.api.get("/api/v1/virtual-services/?limit=1000").json()["results"]]
    assert "shl-a11y" not in pools + services
    assert stack.api.get("/api/v1/revisions/pending/").json()["pending"] == pending
