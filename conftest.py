"""Repository-wide pytest options, and the private PostgreSQL the API tests run on."""

import os
import sys

import pytest


def pytest_addoption(parser):
    parser.addoption(
        "--regen-golden",
        action="store_true",
        help="rewrite api/compiler/tests/golden/*/ expected outputs from the current compiler",
    )


def pytest_configure(config):
    # Settings point at the private cluster unless DATABASE_URL names another server;
    # make sure it runs before any test opens a connection.
    if "DATABASE_URL" not in os.environ:
        from tests.harness import pg

        pg.start()


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup):
    """pytest-django's test database, and before it is dropped: a test's long-poll may have
    started this process's revision news listener, whose connection would keep it."""
    yield
    news = sys.modules.get("revisions.news")
    if news is not None:
        news.NEWS.stop()
