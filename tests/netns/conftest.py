"""Fixtures for the namespace tier: a lab and the whole stack on it (root needed)."""

import os

import pytest

from tests.harness.lab import Lab
from tests.harness.stack import Stack


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
