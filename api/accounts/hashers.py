"""A cheap argon2 for the test suite only (settings_test): same format, far less memory and time."""

from django.contrib.auth.hashers import Argon2PasswordHasher


class QuickArgon2PasswordHasher(Argon2PasswordHasher):
    """Hashes verify with the real hasher too (argon2 keeps its parameters in the hash)."""

    time_cost = 1
    memory_cost = 1024
    parallelism = 1
