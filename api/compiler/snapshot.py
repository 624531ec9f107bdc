"""The frozen, typed form of a revision's JSON snapshot.

``snapshot_from_dict`` only checks shape (keys and types); ``verify`` checks meaning.
"""

from dataclasses import MISSING, dataclass

from compiler.errors import VerifyError


@dataclass(frozen=True)
class HealthCheck:
    type: str
    interval_ms: int
    timeout_ms: int
    rise: int
    fall: int
    path: str = "/"
    expected_status: int = 200
    host: str = ""


@dataclass(frozen=True)
class Member:
    name: str
    address: str
    port: int
    weight: int
    state: str


@dataclass(frozen=True)
class Pool:
    name: str
    algorithm: str
    members: tuple[Member, ...]
    health_check: HealthCheck | None = None


@dataclass(frozen=True)
class VirtualService:
    name: str
    vip: str
    port: int
    protocol: str
    enabled: bool
    default_pool: str


@dataclass(frozen=True)
class Snapshot:
    revision: int
    virtual_services: tuple[VirtualService, ...]
    pools: tuple[Pool, ...]

    def pool(self, name):
        return next((p for p in self.pools if p.name == name), None)


def _build(cls, data, path, **nested):
    if not isinstance(data, dict):
        raise VerifyError([(path, f"expected an object, got {type(data).__name__}")])
    fields = cls.__dataclass_fields__
    unknown = sorted(set(data) - set(fields))
    if unknown:
        raise VerifyError([(path, f"unknown field(s): {', '.join(unknown)}")])
    values = {}
    for name, field in fields.items():
        if name in nested:
            values[name] = nested[name]
        elif name in data:
            values[name] = _typed(data[name], field.type, f"{path}/{name}")
        elif field.default is MISSING:
            raise VerifyError([(f"{path}/{name}", "missing")])
    return cls(**values)


def _typed(value, annotation, path):
    expected = {"str": str, "int": int, "bool": bool}.get(getattr(annotation, "__name__", annotation))
    # bool is an int in Python; a snapshot must not confuse the two.
    if expected and (not isinstance(value, expected) or (expected is int and isinstance(value, bool))):
        raise VerifyError([(path, f"expected {expected.__name__}, got {type(value).__name__}")])
    return value


def _list(data, key, path):
    items = data.get(key, [])
    if not isinstance(items, list):
        raise VerifyError([(f"{path}{key}", "expected a list")])
    return items


def _pool(data, path):
    members = tuple(
        _build(Member, m, f"{path}/members/{_label(m, i)}") for i, m in enumerate(_list(data, "members", f"{path}/"))
    )
    check = data.get("health_check")
    check = None if check is None else _build(HealthCheck, check, f"{path}/health_check")
    return _build(Pool, data, path, members=members, health_check=check)


def snapshot_from_dict(data):
    """Turn a snapshot's JSON (as stored in a Revision) into frozen dataclasses."""
    if not isinstance(data, dict):
        raise VerifyError([("", "a snapshot is a JSON object")])
    pools = tuple(_pool(p, f"pools/{_label(p, i)}") for i, p in enumerate(_list(data, "pools", "")))
    services = tuple(
        _build(VirtualService, s, f"virtual-services/{_label(s, i)}")
        for i, s in enumerate(_list(data, "virtual_services", ""))
    )
    return _build(Snapshot, data, "", virtual_services=services, pools=pools)


def _label(item, index):
    return item.get("name", index) if isinstance(item, dict) else index
