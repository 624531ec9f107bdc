"""The one error type the compiler raises."""


class VerifyError(ValueError):
    """A snapshot that cannot be compiled; each problem names its object path.

    ``problems`` is a list of ``(path, message)``, e.g.
    ``("virtual-services/web/default_pool", "pool 'x' does not exist")``.
    """

    def __init__(self, problems):
        self.problems = list(problems)
        super().__init__("; ".join(f"{path}: {message}" for path, message in self.problems))


# The first segment of a problem's path, and the kind of object it names.
OBJECT_KINDS = {
    "virtual-services": "virtual-service",
    "pools": "pool",
    "certificates": "certificate",
    "ha-groups": "ha-group",
    "nodes": "node",
    "ipvs-sync": "ipvs-sync",
}


def split_path(path):
    """``(kind, name, field)`` of a problem's path: ``("pool", "web", "members/s1/port")``.

    ipvs-sync is one object, without a name (""); a path that names no object gives
    ``(None, None, "")``.
    """
    first, _, rest = path.partition("/")
    kind = OBJECT_KINDS.get(first)
    if kind is None:
        return None, None, ""
    if kind == "ipvs-sync":
        return kind, "", rest
    name, _, field = rest.partition("/")
    return kind, name, field
