"""The image acceptance tier: one appliance booted from the built qcow2 for the whole session.

The image is ``$FULCRUM_IMAGE`` or the newest ``images/.build/out/*.qcow2``; build it with
``make image``. Files of the run (serial log, overlay disk) go to ``tests/artifacts/image/``.
"""

import os
import time

import pytest
import requests

from tests.vm.image.appliance import REPO, Appliance
from tests.vm.image.setup_console import ADMIN_PASSWORD, HOSTNAME, answer_setup

ARTIFACTS = REPO / "tests" / "artifacts" / "image"


def built_image():
    if os.environ.get("FULCRUM_IMAGE"):
        return os.environ["FULCRUM_IMAGE"]
    images = sorted((REPO / "images" / ".build" / "out").glob("*.qcow2"), key=lambda p: p.stat().st_mtime)
    if not images:
        pytest.fail("no image: run `make image` (or set FULCRUM_IMAGE)")
    return images[-1]


@pytest.fixture(scope="session")
def image():
    return built_image()


@pytest.fixture(scope="session")
def appliance(image):
    box = Appliance(image, ARTIFACTS / "run")
    box.prepare()
    box.boot()
    try:
        box.transcript = answer_setup(box.serial)
        box.setup_seconds = time.monotonic() - box.started
        box.wait_for_ssh()
        # First boot goes on after the setup: database, node and tokens, then the API starts.
        box.wait_until(
            lambda: requests.get(f"{box.url}/api/v1/auth/me/", verify=False, timeout=30).status_code in (401, 403),
            900, "the API behind the console's HTTPS",
        )  # fmt: skip
        box.ready_seconds = time.monotonic() - box.started
        box.admin_password = ADMIN_PASSWORD
        box.hostname = HOSTNAME
        yield box
    except Exception:
        print(f"---- serial console (tail) ----\n{box.serial_log(120)}")
        raise
    finally:
        box.stop()
