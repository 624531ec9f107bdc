"""compiler.catalog is the one list of each choice: what the compiler accepts, the daemons'
tokens and the layers that have a choice all come from it and agree."""

import re

from compiler import catalog, rules, tokens
from compiler.catalog import IPVS, PROXY


def test_a_choice_has_a_daemon_token_exactly_on_the_layers_that_have_it():
    for choice in catalog.ALGORITHMS:
        assert (PROXY in choice.layers) == bool(choice.haproxy), choice
        assert (IPVS in choice.layers) == bool(choice.ipvs), choice
    for choice in catalog.FORWARDING:
        assert (choice.word != "proxy") == bool(choice.ipvs), choice


def test_the_compilers_lists_and_tables_are_the_catalogues():
    assert tuple(c.word for c in catalog.ALGORITHMS) == rules.ALGORITHMS
    assert set(tokens.HAPROXY_BALANCE) == {c.word for c in catalog.ALGORITHMS if PROXY in c.layers}
    assert tokens.IPVS_SCHEDULER["dynamic-least-load"] == "dllc"
    assert rules.PROXY_CHECK_TYPES == ("tcp", "http", "https", "agent", "ping")
    assert rules.IPVS_CHECK_TYPES == ("tcp", "http", "https", "ping", "dns", "script")
    assert rules.IPVS_PERSISTENCE == ("none", "source")
    assert tokens.IPVS_METHOD == {"nat": "NAT", "direct-routing": "DR", "tunnel": "TUN"}
    for kind, choices in catalog.CATALOG.items():
        words = [c.word for c in choices]
        assert len(set(words)) == len(words), kind
        assert all(c.layers and set(c.layers) <= {PROXY, IPVS} and c.label for c in choices), kind


def test_the_exported_patterns_mean_what_the_compilers_do():
    """The console's patterns are rules' own with JavaScript's anchors; read back with Python's
    (no trailing newline in the samples, where ^...$ and \\A...\\Z would differ) they decide the same."""
    samples = ["web", "web-1", "-web", "a" * 64, "/health", "/a b", "eth0", "x.example.com", "", "ab'c", "@host", "."]
    for name, entry in rules.exported_patterns().items():
        assert "\\A" not in entry["pattern"] and "\\Z" not in entry["pattern"], name
        ours, theirs = re.compile(entry["pattern"]), getattr(rules, f"{name}_RE")
        assert [bool(ours.search(s)) for s in samples] == [bool(theirs.search(s)) for s in samples], name
