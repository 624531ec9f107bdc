"""Fixtures for the namespace tier: a lab and the whole stack on it (root needed)."""

import os

import pytest

from tests.harness.lab import Lab
from tests.harness.loadd import LoadAgents, build_loadd
from tests.harness.stack import Stack

# The study's worked example (seeds-digest §002): A = s1 50 %, B = s2 30 %, C = s3 70 %.
EXAMPLE_LOADS = {"s1": "0.5", "s2": "0.3", "s3": "0.7"}


@pytest.fixture(scope="session", autouse=True)
def _root():
    """This tier proves behaviour in real namespaces; without root it fails rather than skips."""
    if os.geteuid() != 0:
        pytest.fail("the netns tier needs root (network namespaces)")


@pytest.fixture(scope="module")
def lab(_root):
    with Lab() as lab:
        yield lab


@pytest.fixture(scope="module")
def stack(lab):
    with Stack(lab) as stack:
        yield stack


@pytest.fixture(scope="session")
def loadd_bin(tmp_path_factory):
    return build_loadd(tmp_path_factory.mktemp("loadd-bin"))


@pytest.fixture(scope="module")
def loads(lab, loadd_bin, tmp_path_factory):
    """fulcrum-loadd on every lab server, with the worked example's loads (logs beside)."""
    with LoadAgents(lab, loadd_bin, tmp_path_factory.mktemp("loadd"), EXAMPLE_LOADS) as agents:
        yield agents
