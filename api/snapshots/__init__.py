"""The configuration as the compiler sees it: when the stored objects last changed (the
snapshot generation). services.snapshot (freezing) and revisions.restore are to join it."""
