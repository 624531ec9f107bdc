"""The apps inside api/ import one another in one direction only: no cycles, hidden ones
included (an import placed inside a function is still a dependency).

Each app's HTTP layer (``X.api``) and commands (``X.management``) sit above every app's
own modules, so a view may call any app; the apps' own modules (models, freezing, publish)
depend upwards only:

    compiler < fulcrum < certificates, services, cluster < accounts, snapshots < revisions < telemetry

``fulcrum`` here is the shared code (validators, concurrency, errors); its settings, URLs
and WSGI entry are the project, which imports everything and nothing imports."""

import ast
import collections
import itertools
from pathlib import Path

API = Path(__file__).resolve().parents[2]
PROJECT = {"fulcrum.settings", "fulcrum.settings_test", "fulcrum.urls", "fulcrum.wsgi"}
LAYERS = ("api", "management")


def layer(module, apps):
    """The node of the graph ``module`` belongs to: its app, X.api, X.management, or None
    (not one of ours, or the project)."""
    parts = module.split(".")
    if parts[0] not in apps or ".".join(parts[:2]) in PROJECT:
        return None
    return ".".join(parts[:2]) if len(parts) > 1 and parts[1] in LAYERS else parts[0]


def imports(root):
    """{node: {imported node: [file:line, ...]}} for every module under ``root``'s apps
    but tests and migrations, with every import statement wherever it stands."""
    apps = {p.name for p in root.iterdir() if (p / "__init__.py").exists()}
    graph = collections.defaultdict(lambda: collections.defaultdict(list))
    for path in sorted(root.glob("*/**/*.py")):
        relative = path.relative_to(root)
        if relative.parts[0] not in apps or {"tests", "migrations"} & set(relative.parts[:-1]):
            continue
        module = ".".join(relative.with_suffix("").parts).removesuffix(".__init__")
        source = layer(module, apps)
        if source is None:
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [f"{node.module}.{alias.name}" for alias in node.names]
            else:
                continue
            for name in names:
                target = layer(name, apps)
                if target is not None and target != source:
                    graph[source][target].append(f"{relative}:{node.lineno}")
    return graph


def cycle(graph):
    """One cycle of ``graph`` as a list of nodes (the first repeated at the end), or None."""
    state = {}

    def visit(node, path):
        state[node] = "open"
        for target in sorted(graph.get(node, ())):
            if state.get(target) == "open":
                return path[path.index(target) :] + [target]
            if target not in state:
                found = visit(target, [*path, target])
                if found:
                    return found
        state[node] = "done"
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node, [node])
            if found:
                return found
    return None


def describe(graph, loop):
    return "\n".join(f"  {a} -> {b}: {', '.join(graph[a][b][:3])}" for a, b in itertools.pairwise(loop))


def test_the_apps_have_no_import_cycle():
    graph = imports(API)
    assert {"services", "snapshots", "revisions", "services.api"} <= set(graph)  # it read the code
    loop = cycle(graph)
    assert loop is None, "an import cycle between apps:\n" + describe(graph, loop)


def test_a_cycle_through_a_function_level_import_is_found(tmp_path):
    for app, text in {
        "low": "def f():\n    from high.models import Thing\n",
        "high": "from low import helpers\n",
    }.items():
        (tmp_path / app).mkdir()
        (tmp_path / app / "__init__.py").write_text("")
        (tmp_path / app / "models.py").write_text(text)
    graph = imports(tmp_path)
    assert graph["low"]["high"] == ["low/models.py:2"]
    assert cycle(graph) == ["high", "low", "high"]
    (tmp_path / "low" / "models.py").write_text("from high import api\n")  # high.api is above low
    (tmp_path / "high" / "api.py").write_text("")
    graph = imports(tmp_path)
    assert cycle(graph) is None
