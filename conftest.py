"""Repository-wide pytest options, and the private PostgreSQL the API tests run on."""

import os


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
