"""Settings for pytest: development mode, the same database URL rules as everywhere else."""

import os

os.environ.setdefault("FULCRUM_DEBUG", "1")

from fulcrum.settings import *  # noqa: F403

# Still argon2 (and pbkdf2 for old hashes), without 100 MiB and a quarter second per hash.
PASSWORD_HASHERS = ["accounts.hashers.QuickArgon2PasswordHasher", *PASSWORD_HASHERS[1:]]  # noqa: F405

# Tests write through the ORM, which records nothing in the audit log: never reuse a snapshot
# (services.tests.test_current turns it on to test the reuse itself).
FULCRUM_SNAPSHOT_REUSE_S = 0
