"""What changed between two revisions: the objects (from their snapshots) and the files
rendered for each node. Pure: the caller passes snapshots and file maps in.

Objects are compared by name, never by position, so reordering a list of pools is not a
change; a rule list is ordered, and its order is part of the service. Certificate bundles
hold private keys: a changed ``.pem`` is reported without its content, and a secret field
(an HA group's password) only as changed.
"""

import difflib
import hashlib
import json

from accounts.audit import CHANGED, SECRET, is_secret
from compiler.snapshot import NO_DEFAULT, SECTIONS, field_default

SINGLETONS = {"ipvs_sync": "ipvs-sync"}
SECRET_SUFFIXES = (".pem",)
DIFF_CONTEXT = 3


def _key(item, index):
    """A list entry's stable name: its name, a node entry's node, else its position."""
    if isinstance(item, dict):
        for field in ("name", "node"):
            if isinstance(item.get(field), str):
                return item[field]
    return str(index)


def _flatten(value, prefix, out):
    """``{path: scalar}`` of a JSON value; named list entries are keyed by their names."""
    if isinstance(value, dict):
        if not value and prefix:
            out[prefix] = {}
        for field, inner in value.items():
            _flatten(inner, f"{prefix}/{field}" if prefix else field, out)
    elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        for index, inner in enumerate(value):
            _flatten(inner, f"{prefix}/{_key(inner, index)}", out)
        # The order of named entries matters for some lists (a service's rules).
        out[f"{prefix}/order"] = [_key(v, i) for i, v in enumerate(value)]
    else:
        out[prefix] = value
    return out


def _fields(old, new, section):
    """The field changes of one object of snapshot ``section``; in an object added or removed,
    a field at its default says so (``default``), for the console to fold away."""
    flat_old, flat_new = _flatten(old, "", {}), _flatten(new, "", {})
    whole = not old or not new  # added or removed: every field is listed
    changes = []
    for path in sorted(set(flat_old) | set(flat_new)):
        before, after = flat_old.get(path), flat_new.get(path)
        if before == after:
            continue
        present = after if not old else before  # of an object added or removed
        default = whole and (wanted := field_default(section, path)) is not NO_DEFAULT and present == wanted
        if is_secret(path.rsplit("/", 1)[-1]):
            before, after = _hidden(before, after)
        changes.append({"field": path, "old": before, "new": after, "default": default})
    return changes


def _hidden(before, after):
    """A secret's old and new value as the diff shows them: set, changed or unset, never the value."""
    if before and after:
        return CHANGED, CHANGED
    return (SECRET if before else before), (SECRET if after else after)


def object_changes(old, new, fields=True):
    """The objects added, removed or changed from snapshot ``old`` to ``new`` (dicts), in the
    order of their paths. With ``fields=False`` each leaves out its field changes: enough to
    count them, to decide that nothing changed, or to page them and list the fields of a
    page only (``with_fields``); every field of 10,000 services added took 10 s to list."""
    old, new = old or {}, new or {}
    changes = []
    for section, label in SECTIONS.items():
        before = {item["name"]: item for item in old.get(section) or []}
        after = {item["name"]: item for item in new.get(section) or []}
        for name in sorted(set(before) | set(after)):
            if name not in before:
                change = "added"
            elif name not in after:
                change = "removed"
            elif before[name] != after[name]:
                change = "changed"
            else:
                continue
            changes.append({"path": f"{label}/{name}", "change": change})
    for section, label in SINGLETONS.items():
        before, after = old.get(section), new.get(section)
        if before != after:
            change = "added" if before is None else "removed" if after is None else "changed"
            changes.append({"path": label, "change": change})
    return with_fields(old, new, changes) if fields else changes


def fingerprint(snapshot):
    """A digest of ``snapshot``'s objects, kept with each revision: two snapshots between which
    object_changes finds nothing have the same one, and any change gives another (but for a
    collision of SHA-256). Sections are taken by name, as object_changes takes them (reordered
    pools are not a change); an object's fields as they are (its rules' order is). Deciding
    "nothing changed" from it saves reading the last revision's snapshot back: 1.5 s at
    10,000 services."""
    snapshot = snapshot or {}
    canonical = {section: sorted(snapshot.get(section) or [], key=lambda item: item["name"]) for section in SECTIONS}
    canonical |= {section: snapshot.get(section) for section in SINGLETONS}
    text = json.dumps(canonical, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def with_fields(old, new, changes):
    """``changes`` (from ``object_changes(old, new, fields=False)``, or a page of them), each
    with the changes of its fields."""
    old, new = old or {}, new or {}
    sections = {label: section for section, label in SECTIONS.items()}
    singletons = {label: section for section, label in SINGLETONS.items()}
    named = {}

    def find(snapshot, section, name):
        if (id(snapshot), section) not in named:
            named[id(snapshot), section] = {item["name"]: item for item in snapshot.get(section) or []}
        return named[id(snapshot), section].get(name) or {}

    listed = []
    for change in changes:
        if change["path"] in singletons:
            section = singletons[change["path"]]
            before, after = old.get(section) or {}, new.get(section) or {}
        else:
            label, name = change["path"].split("/", 1)
            section = sections[label]
            before, after = find(old, section, name), find(new, section, name)
        listed.append({**change, "fields": _fields(before, after, section)})
    return listed


def file_changes(old, new, old_label, new_label):
    """Unified diffs of one node's files (``{name: text}``) from ``old`` to ``new``."""
    old, new = old or {}, new or {}
    changes = []
    for name in sorted(set(old) | set(new)):
        before, after = old.get(name), new.get(name)
        if before == after:
            continue
        change = "added" if before is None else "removed" if after is None else "changed"
        if name.endswith(SECRET_SUFFIXES):
            diff = "(a certificate bundle with a private key: its content is not shown)\n"
        else:
            diff = "".join(
                difflib.unified_diff(
                    (before or "").splitlines(keepends=True),
                    (after or "").splitlines(keepends=True),
                    fromfile=f"{old_label}/{name}",
                    tofile=f"{new_label}/{name}",
                    n=DIFF_CONTEXT,
                )
            )
        changes.append({"file": name, "change": change, "diff": diff})
    return changes
