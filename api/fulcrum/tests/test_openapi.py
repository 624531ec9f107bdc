"""api/openapi.yaml is generated from the code; fail when the committed copy drifts."""

from pathlib import Path

from django.core.management import call_command

COMMITTED = Path(__file__).resolve().parents[2] / "openapi.yaml"


def test_openapi_yaml_matches_the_code(tmp_path):
    fresh = tmp_path / "openapi.yaml"
    call_command("spectacular", "--file", str(fresh), "--validate", "--fail-on-warn")
    assert fresh.read_text() == COMMITTED.read_text(), (
        "api/openapi.yaml is stale: run `make openapi` and commit the result"
    )
