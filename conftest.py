"""Repository-wide pytest options."""


def pytest_addoption(parser):
    parser.addoption(
        "--regen-golden",
        action="store_true",
        help="rewrite api/compiler/tests/golden/*/ expected outputs from the current compiler",
    )
