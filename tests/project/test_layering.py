"""No module of the app imports a module that imports it back, or one of a layer above
its own, even inside a function.

Read from the source (``ast``), so that an import made late, inside a function, counts
as much as one at the top: a cycle dodged by a late import is still a cycle.
"""

from __future__ import annotations

import ast
from fnmatch import fnmatchcase
from pathlib import Path

import django_snowid

PACKAGE = Path(django_snowid.__file__).resolve().parent


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def import_graph(root: Path) -> dict[str, set[str]]:
    """Each module of the package under ``root``, and the modules of it that it imports."""
    files = {
        module_name(path, root): path
        for path in root.rglob("*.py")
        if "migrations" not in path.relative_to(root).parts
    }
    graph: dict[str, set[str]] = {name: set() for name in files}
    for name, path in files.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:  # ``from ..x import y``: up node.level - 1 packages
                    parts = package.split(".")
                    anchor = parts[: len(parts) - node.level + 1]
                    base = ".".join(anchor + ([node.module] if node.module else []))
                # ``from .pkg import sub``: the submodule when there is one, else the module.
                targets = [
                    f"{base}.{alias.name}" if f"{base}.{alias.name}" in files else base
                    for alias in node.names
                ]
            else:
                continue
            graph[name].update(t for t in targets if t in files and t != name)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


#: The layers, from the bottom: a module imports modules of its own layer or below. The
#: first pattern that matches a module (its name without ``django_snowid.``) places it.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("core", "core.*", "exceptions"),  # pure: neither Django nor Redis
    ("conf", "settings_layouts"),
    # What every feature shares (the store layer: none of it imports a feature).
    (
        "db",
        "db.*",
        "stores",
        "stores.*",
        "inventory",
        "models",
        "sequences.models",
        "checks",
        "settings_checks",
        "metrics",
    ),
    # What a feature builds on: where its state lives, its options, how it is read.
    (
        "*.stores",
        "*.stores.*",
        "workers.pool",
        "orders.formats",
        "sequences.spec",
        "ids.lookups",
        "ids.publicids",
        "ids.reading",
        "orders.reading",
        "ids.database.geometry",
        "ids.database.postgresql",
        "ids.database.default",
        "encoders",
        "adopt.journal",
    ),
    # What issues values (and the field base, which calls them).
    (
        "ids.issuer",
        "workers.sources",
        "workers.leased",
        "workers.lease",
        "workers.heartbeat",
        "workers.held",
        "orders.issuer",
        "orders.blocks",
        "orders.keys",
        "orders.recovery",
        "orders.retry",
        "sequences.issuer",
        "sequences.compat",
        "ids.database.reservation",
        "ids.database.install",
        "fieldbase",
    ),
    ("*.fields", "fields", "orders.queryset"),
    (
        "orders.status",
        "workers.status",
        "sequences.status",
        "sequences.from_django_sequences",
        "ids.database.status",
        "readings",
        "readings.*",
        "drf",
        "pagination",
        "pagination.*",
        "graphql",
        "graphql.*",
        "import_export",
        "audit",
        "audit.*",
        "adopt",
        "adopt.*",
    ),
    # What Django loads: checks, the admin, commands, app configs, the packages' faces.
    (
        "*.checks",
        "metrics.collector",
        "metrics.multiprocess",
        "health",
        "health.*",
        "admin",
        "admin.*",
        "management",
        "management.*",
        "*.management",
        "*.management.*",
        "apps",
        "*.apps",
        "testing",
        "testing.*",
        "",
        "ids",
        "ids.database",
        "orders",
        "workers",
        "sequences",
    ),
)


def layer_of(module: str) -> int:
    name = module.removeprefix("django_snowid").removeprefix(".")
    for layer, patterns in enumerate(LAYERS):
        if any(fnmatchcase(name, pattern) for pattern in patterns):
            return layer
    raise LookupError(f"{module} is in no layer: place it in LAYERS")


def upward_imports(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    return sorted(
        (module, imported)
        for module, imports in graph.items()
        for imported in imports
        if layer_of(imported) > layer_of(module)
    )


def test_no_module_imports_one_of_a_layer_above_its_own():
    assert upward_imports(import_graph(PACKAGE)) == []


def test_an_upward_import_is_found():
    graph = {"django_snowid.core.layout": {"django_snowid.conf"}, "django_snowid.conf": set()}
    assert upward_imports(graph) == [("django_snowid.core.layout", "django_snowid.conf")]


def test_the_graph_sees_late_imports():
    graph = import_graph(PACKAGE)
    # sequences/stores/database.py imports its model inside functions only.
    assert "django_snowid.sequences.models" in graph["django_snowid.sequences.stores.database"]
    assert "django_snowid.conf" in graph["django_snowid.stores.redis_client"]


def test_no_module_imports_a_module_that_imports_it_back():
    assert cycles(import_graph(PACKAGE)) == []


def test_a_cycle_is_found(tmp_path):
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sub" / "__init__.py").write_text("")
    (package / "a.py").write_text("from .sub import b\n")
    (package / "sub" / "b.py").write_text("def f():\n    from ..a import x\n")
    assert cycles(import_graph(package)) == [["pkg.a", "pkg.sub.b"]]


#: The files every feature keeps its roles in (where the feature has the role).
FEATURE_ROLES = {
    "ids": {"fields", "issuer", "checks"},
    "orders": {"fields", "issuer", "checks", "status", "stores"},
    "workers": {"checks", "status", "stores"},
    "sequences": {"fields", "issuer", "checks", "status", "stores"},
}


def test_every_feature_keeps_its_roles_in_the_same_files():
    for feature, roles in FEATURE_ROLES.items():
        modules = {path.stem if path.stem != "__init__" else path.parent.name
                   for path in (PACKAGE / feature).glob("*/__init__.py")}  # fmt: skip
        modules |= {path.stem for path in (PACKAGE / feature).glob("*.py")}
        assert roles <= modules, (feature, sorted(roles - modules))
        if "stores" in roles:
            stores = {path.stem for path in (PACKAGE / feature / "stores").glob("*.py")}
            assert {"__init__", "base", "database", "redis"} <= stores, (feature, stores)


def test_every_feature_declares_its_store_families():
    import importlib

    from django_snowid.stores import Family

    for feature, roles in FEATURE_ROLES.items():
        if "stores" in roles:
            module = importlib.import_module(f"django_snowid.{feature}.stores")
            families = [v for v in vars(module).values() if isinstance(v, Family)]
            assert families, f"django_snowid.{feature}.stores declares no Family"


def test_only_stores_import_redis_at_the_top_of_a_module():
    found = []
    for path in PACKAGE.rglob("*.py"):
        if "stores" in path.relative_to(PACKAGE).parts:
            continue
        for node in ast.parse(path.read_text()).body:
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and not node.level:
                names = [node.module or ""]
            if any(n == "redis" or n.startswith("redis.") for n in names):
                found.append(str(path.relative_to(PACKAGE)))
    assert found == []
