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


def test_the_consoles_catalogue_module_matches_the_schema():
    """webui/src/lib/api/catalog.gen.ts is written from openapi.yaml's x-fulcrum-catalog."""
    import yaml

    from fulcrum.console_catalog import typescript

    module = COMMITTED.parents[1] / "webui" / "src" / "lib" / "api" / "catalog.gen.ts"
    assert module.read_text() == typescript(yaml.safe_load(COMMITTED.read_text())), (
        "webui/src/lib/api/catalog.gen.ts is stale: run `make openapi` and commit the result"
    )
