"""Test harness shared by tests/netns, tests/bench and `make demo`: network-namespace lab
(`lab.py`) and the WebBench file set (`webbench.py`)."""
