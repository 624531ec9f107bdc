"""Settings for pytest: development mode, the same database URL rules as everywhere else."""

import os

os.environ.setdefault("FULCRUM_DEBUG", "1")

from fulcrum.settings import *  # noqa: F403
