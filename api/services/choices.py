"""Choice lists for the services app, made from compiler.catalog (words and labels)."""

from django.db import models

from compiler import catalog, rules


def _text_choices(name, choices):
    """A TextChoices class of the catalogue's ``choices``: members named after the words
    (``round-robin`` is ``ROUND_ROBIN``), labelled as the catalogue says."""
    return models.TextChoices(name, [(c.word.upper().replace("-", "_"), (c.word, c.label)) for c in choices])


Protocol = _text_choices("Protocol", catalog.PROTOCOLS)
Algorithm = _text_choices("Algorithm", catalog.ALGORITHMS)
MemberState = _text_choices("MemberState", catalog.MEMBER_STATES)
CheckType = _text_choices("CheckType", catalog.CHECK_TYPES)
Forwarding = _text_choices("Forwarding", catalog.FORWARDING)


def choices(words, labels=None):
    """Django choices from one of compiler.rules' word tuples."""
    labels = labels or {}
    return [(w, labels.get(w, str(w).replace("_", " ").capitalize())) for w in words]


# A member's own IPVS forwarding method, or its service's (the OpenAPI schema names this set).
MEMBER_FORWARDING = choices(rules.MEMBER_FORWARDING, {"": "The service's method"})
