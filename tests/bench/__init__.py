"""Benchmarks reproducing the seed studies (run as root: `python -m tests.bench.webbench`)."""
