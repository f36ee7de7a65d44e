"""The house rules, read from the source (every module's AST, function-level imports included, those
under `if TYPE_CHECKING:` not):

1. relay_graph's packages are layers: runtime, memory (the engine), desk, lab, usecases, tools. A
   module imports only its own layer and those before it, so the engine never imports the desk, and
   the runtime knows nothing of either. Each package's docstring says what it may use, and says
   exactly what this test enforces.
2. The entry points (the gateway's routes, the agents' handlers, the CLI, the tool catalogue) reach
   the graph through the use cases and the engine, never by running statements themselves: none
   imports a `queries` module.
3. Cypher lives in the `queries` packages only.
4. No module imports itself back through others: the import graph has no cycle.
5. What only the tests use lives in tests/: no public function of libs/ is used by tests and by no
   production code (libs/, services/, bench/), but for the few listed with their reasons.
6. The tests' shared helpers (modules of tests/ other than test modules and conftests) keep their
   Cypher in tests/statements.py, as named statements.
7. Every process runs on the one process context (relay_graph.usecases.context.Deps), built by its
   one bootstrap: outside a process's bootstrap module (services/<name>/bootstrap.py, `relay mcp`'s
   stdio server), no entry point (services/, the tool catalogue) constructs the parts the context
   holds (a GraphClient, Memory, Outbox, Publisher, a Deps or a Call) or calls `make_deps` or
   `build_deps`. A route or handler gets its `Call` from the context (`Deps.call`).
8. One door for writes: the entry points (services/, the tool catalogue) may use the engine, the desk
   and the lab for reads and models only; every write is a use case (relay_graph.usecases). What
   writes is read from the statements' flags (`Query.read_only`, `Query.read_receipt`) and followed
   through the calls (tests/write_paths.py), never from names; the flags themselves must say what
   the Cypher does. A use case records what it owes on its `Call`; only the use cases' context
   (`Call.flush`, `Deps.work`) and the gateway's route dependency announce.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import networkx as nx

REPO = Path(__file__).resolve().parents[1]
LIBS = REPO / "libs"
LAYERS = ("runtime", "memory", "desk", "lab", "usecases", "tools")
ENTRY_POINTS = ("services.", "relay_cli.", "relay_graph.tools.")


def _module_files() -> dict[str, Path]:
    roots = [(LIBS, "relay_graph"), (LIBS, "relay_cli"), (REPO, "services")]
    out: dict[str, Path] = {}
    for base, package in roots:
        for path in sorted((base / package).rglob("*.py")):
            parts = list(path.relative_to(base).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join(parts)] = path
    return out


MODULES = _module_files()
TREES = {name: ast.parse(path.read_text(), filename=str(path)) for name, path in MODULES.items()}


def _absolute(name: str, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    base = name.split(".") if MODULES[name].name == "__init__.py" else name.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _type_checking_only(tree: ast.AST) -> set[int]:
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip |= {id(n) for stmt in node.body for n in ast.walk(stmt)}
    return skip


def _reexports() -> dict[tuple[str, str], str]:
    """(package, name) -> the module a package's __init__ takes that name from."""
    out: dict[tuple[str, str], str] = {}
    for name, tree in TREES.items():
        if MODULES[name].name != "__init__.py":
            continue
        for node in tree.body:
            if isinstance(node, ast.ImportFrom):
                source = _absolute(name, node)
                for alias in node.names:
                    full = f"{source}.{alias.name}"
                    out[(name, alias.asname or alias.name)] = full if full in MODULES else source
    return out


def _imports() -> dict[str, set[str]]:
    """Module -> the modules of ours it imports. `from pkg import name` counts the module `name` is
    defined in when the package only re-exports it, so a package's __init__ does not hide a cycle
    nor make one."""
    reexports = _reexports()
    graph: dict[str, set[str]] = {}
    for name, tree in TREES.items():
        skip = _type_checking_only(tree)
        targets: set[str] = set()
        for node in ast.walk(tree):
            if id(node) in skip:
                continue
            if isinstance(node, ast.Import):
                targets |= {a.name for a in node.names if a.name in MODULES}
            elif isinstance(node, ast.ImportFrom):
                source = _absolute(name, node)
                if source not in MODULES:
                    continue
                for alias in node.names:
                    target = f"{source}.{alias.name}"
                    if target not in MODULES:
                        target, seen = source, set()
                        while (target, alias.name) in reexports and target not in seen:
                            seen.add(target)
                            target = reexports[(target, alias.name)]
                    targets.add(target)
        targets.discard(name)
        graph[name] = targets
    return graph


GRAPH = _imports()


def layer_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if parts[0] == "relay_graph" and len(parts) > 1 else None


def test_the_scan_sees_the_code():
    for layer in LAYERS:
        assert sum(1 for m in MODULES if layer_of(m) == layer) >= 3, layer
    assert len([m for m in MODULES if m.startswith("services.")]) >= 30
    assert sum(len(t) for t in GRAPH.values()) > 500


def test_every_module_of_relay_graph_is_in_a_layer():
    stray = sorted(m for m in MODULES if m.startswith("relay_graph.") and layer_of(m) not in LAYERS)
    assert not stray, f"modules outside the packages by role: {stray}"
    assert not GRAPH["relay_graph"], "relay_graph/__init__ imports nothing: each package stands alone"


def test_each_layer_imports_only_itself_and_those_before_it():
    rank = {layer: i for i, layer in enumerate(LAYERS)}
    wrong = sorted(
        f"{module} ({layer_of(module)}) imports {target} ({layer_of(target)})"
        for module, targets in GRAPH.items() if layer_of(module) in rank
        for target in targets if layer_of(target) in rank and rank[layer_of(target)] > rank[layer_of(module)]
    )
    assert not wrong, "\n".join(wrong)


def test_each_package_says_what_it_may_use():
    for i, layer in enumerate(LAYERS):
        doc = ast.get_docstring(TREES[f"relay_graph.{layer}"]) or ""
        said = re.search(r"May use: (.*?)(?:\.\s|\.$)", doc, re.S)
        assert said, f"relay_graph.{layer}'s docstring does not say what it may use"
        named = set(re.findall(r"relay_graph\.(\w+)", said.group(1)))
        assert named == set(LAYERS[:i]), (layer, named)


def test_the_engine_loads_nothing_of_the_desk():
    """What importing the engine actually loads (not only what its source names)."""
    code = ("import sys, relay_graph.memory.facade, relay_graph.memory.recall; "
            "print(sorted(m for m in sys.modules if m.startswith('relay_graph.') "
            "and m.split('.')[1] not in ('runtime', 'memory')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO)
    assert out.stdout.strip() == "[]", out.stdout


def _string_constants(module: str) -> set[str]:
    return {n.value for n in ast.walk(TREES[module]) if isinstance(n, ast.Constant) and isinstance(n.value, str)}


def test_the_engines_registry_names_no_desk_predicate():
    """The desk's vocabulary is the desk's: the engine's registry neither registers (imported alone
    its registry is empty) nor names any of its predicates, their types or edges."""
    from relay_graph.desk import vocabulary

    desk = {w for p in vocabulary.PREDICATES for w in (p.name, p.subject_type, p.object_type, p.edge)}
    named = sorted(desk & _string_constants("relay_graph.memory.registry"))
    assert not named, f"the engine's registry names the desk's {named}"
    code = ("import relay_graph.memory.facade, relay_graph.memory.recall; "
            "from relay_graph.memory import registry; print(sorted(registry.REGISTRY))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO)
    assert out.stdout.strip() == "[]", out.stdout


def test_the_runtimes_schema_names_no_desk_label():
    """The desk's and the catalogue's indexes are declared by the desk; the runtime creates what
    the loaded packages declared, and names none of the desk's labels itself."""
    import relay_graph.desk  # noqa: F401 (declares the desk's indexes)
    from relay_graph.runtime.queries import schema

    labels = {label for owner, indexes in schema._declared.items() if owner.startswith("relay_graph.desk")
              for label, *_ in (*indexes.range, *indexes.fulltext, *indexes.vector)}
    assert {"Ticket", "NetNode", "Faq"} <= labels
    runtime = [m for m in MODULES if m == "relay_graph.runtime.db" or m.startswith("relay_graph.runtime.queries")]
    named = sorted(f"{m}: {label}" for m in runtime for label in labels & _string_constants(m))
    assert not named, "\n".join(named)
    code = ("import relay_graph.runtime.db, relay_graph.memory.facade; from relay_graph.runtime.queries import schema; "
            "d = schema.declared(); print(sorted({i[0] for i in (*d.range, *d.fulltext, *d.vector)}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO)
    assert not labels & set(ast.literal_eval(out.stdout.strip())), out.stdout


def _is_statements(module: str) -> bool:
    return ".queries" in module and layer_of(module) is not None


def test_entry_points_reach_statements_only_through_the_use_cases():
    wrong = sorted(f"{module} imports {target}" for module, targets in GRAPH.items()
                   if module.startswith(ENTRY_POINTS) for target in targets if _is_statements(target))
    assert not wrong, "\n".join(wrong)


# A statement's text, not a command that carries one (the driver's GRAPH.QUERY in runtime.db).
CYPHER = re.compile(r"\b(MATCH|MERGE|CREATE|UNWIND)\s*[\(\$]")


def test_cypher_lives_in_the_statement_packages():
    found = []
    for module, tree in TREES.items():
        if _is_statements(module):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and CYPHER.search(node.value):
                if ast.get_docstring(tree) == node.value:
                    continue
                found.append(f"{module}:{node.lineno}: {node.value[:60]!r}")
    assert not found, "\n".join(found)


def test_no_import_cycles():
    graph = nx.DiGraph([(m, t) for m, targets in GRAPH.items() for t in targets])
    cycles = [sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1]
    assert not cycles, cycles


# What a process's context holds, and what builds one.
CONTEXT_PARTS = {"GraphClient", "Memory", "Outbox", "Publisher", "BrokerPublisher", "Deps", "Call"}
CONTEXT_BUILDERS = {"make_deps", "build_deps"}
BOOTSTRAPS = re.compile(r"^services\.\w+\.bootstrap$|^relay_graph\.tools\.stdio$")


def _ours(tree: ast.AST, name: str) -> set[str]:
    """The names a module binds by importing them from our packages (the ones a call could mean)."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            source = _absolute(name, node) if name in MODULES else (node.module or "")
            if source.split(".")[0] in ("relay_graph", "services"):
                out |= {a.asname or a.name for a in node.names}
        elif isinstance(node, ast.Import):
            out |= {(a.asname or a.name).split(".")[0] for a in node.names if a.name.startswith("relay_graph")}
    return out


def context_built(name: str, tree: ast.AST) -> list[str]:
    """Where module `name`, not a bootstrap, constructs a part of the process context or builds a
    context: `Memory(...)` (imported from our packages), `db.GraphClient(...)`, `make_deps(...)`."""
    if BOOTSTRAPS.match(name):
        return []
    ours = _ours(tree, name)
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        called = (func.id if isinstance(func, ast.Name) and func.id in ours else
                  func.attr if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)
                  and func.value.id in ours else None)
        if called in CONTEXT_PARTS | CONTEXT_BUILDERS:
            found.append(f"{name}:{node.lineno}: {called}(...)")
    return found


def test_entry_points_build_no_context_of_their_own():
    wrong = sorted(f for module, tree in TREES.items() if module.startswith(("services.", "relay_graph.tools."))
                   for f in context_built(module, tree))
    assert not wrong, "build these through the process's bootstrap (usecases.context.make_deps):\n" + "\n".join(wrong)
    for service in ("gateway", "intake", "resolver", "netops"):  # each process has its bootstrap, and uses it
        assert f"services.{service}.bootstrap" in MODULES, service
        assert any(CONTEXT_BUILDERS & {n.id for n in ast.walk(TREES[f"services.{service}.bootstrap"])
                                       if isinstance(n, ast.Name)}), service


def test_a_context_built_by_hand_would_be_seen():
    route = ast.parse("from relay_graph.memory.facade import Memory\nfrom relay_graph.runtime import db\n"
                      "from relay_graph.usecases.context import build_deps\n"
                      "def f(c):\n    return Memory(db.GraphClient(c)), build_deps('x', c)\n")
    assert sorted(context_built("services.gateway.routers.chat", route)) == [
        "services.gateway.routers.chat:5: GraphClient(...)", "services.gateway.routers.chat:5: Memory(...)",
        "services.gateway.routers.chat:5: build_deps(...)"]
    assert context_built("services.intake.bootstrap", route) == []  # the composition root builds them
    local = ast.parse("class Memory:\n    pass\nm = Memory()\n")  # a name of its own is not ours
    assert context_built("services.simulator.world", local) == []


def test_a_cycle_or_a_wrong_import_would_be_seen():
    """The checks above on a graph with the faults they look for."""
    graph = nx.DiGraph([("a", "b"), ("b", "c"), ("c", "a")])
    assert [c for c in nx.strongly_connected_components(graph) if len(c) > 1]
    assert "relay_graph.runtime.db" in GRAPH["relay_graph.memory.facts"] or any(
        layer_of(t) == "runtime" for t in GRAPH["relay_graph.memory.facts"])
    assert _is_statements("relay_graph.memory.queries.facts") and not _is_statements("relay_graph.memory.facts")


TESTS = REPO / "tests"
# The tests' shared read helpers (tests/reads.py) keep their Cypher here, as named statements.
TEST_STATEMENTS = TESTS / "statements.py"


def _is_test_helper(path: Path) -> bool:
    """A module of tests/ that tests share (not a test module, nor a conftest: those hold fixtures)."""
    return not path.name.startswith("test_") and path.name != "conftest.py"


def test_the_tests_shared_helpers_keep_their_cypher_in_one_module():
    helpers = [p for p in sorted(TESTS.rglob("*.py")) if _is_test_helper(p)]
    assert TEST_STATEMENTS in helpers and TESTS / "reads.py" in helpers
    found = []
    for path in helpers:
        if path == TEST_STATEMENTS:
            continue
        tree = ast.parse(path.read_text(), filename=str(path))
        found += [f"{path.relative_to(REPO)}:{node.lineno}: {node.value[:60]!r}" for node in ast.walk(tree)
                  if isinstance(node, ast.Constant) and isinstance(node.value, str) and CYPHER.search(node.value)
                  and ast.get_docstring(tree) != node.value]
    assert not found, "\n".join(found)


# Public functions of libs/ that only tests call, each with why it stays in its package.
TESTED_ONLY = {
    "relay_graph.desk.customers.case_move.needs_move":
        "case_move's documented decision for a caller of move_case (its docstring's example)",
    "relay_graph.memory.fact_planning.trust_score":
        "the trust formula in Python; the writes compute it in Cypher (queries/facts.py), the test pins it",
    "relay_graph.memory.recall.anchors.find_entities":
        "the engine's public lookup (recall.__all__); recall itself runs its two halves concurrently",
    "relay_graph.memory.entity_graph.entity_salience":
        "the engine's PageRank read, public API of the entity graph with no entry point yet",
    "relay_graph.desk.catalogue.geocoder.make_geocoder":
        "the optional geocoder's factory (catalogue.__all__); nothing configures a geocoder yet",
    "relay_graph.desk.catalogue.reads.playbook_steps":
        "the seeded playbooks' read; the resolver still follows its own (services/resolver/playbooks.py)",
    "relay_graph.runtime.streams.dead_letters.read_dead_letters":
        "the reader of the format dead_letter writes, kept beside it; no operator route reads a DLQ yet",
}


def _referenced_names(trees) -> dict[str, set[str]]:
    """Name -> the files whose code uses it (a name, an attribute, or an import that is not a
    package's re-export: `from .x import f` in an __init__ makes `f` reachable, it does not use it)."""
    out: dict[str, set[str]] = {}
    for where, tree in trees:
        reexports = where.endswith("__init__.py")
        for node in ast.walk(tree):
            if isinstance(node, ast.Name):
                name = node.id
            elif isinstance(node, ast.Attribute):
                name = node.attr
            elif isinstance(node, ast.alias) and not reexports:
                name = node.name.rsplit(".", 1)[-1]
            else:
                continue
            out.setdefault(name, set()).add(where)
    return out


def functions_only_tests_use(defined, production, tests) -> list[str]:
    """`module.name` of every public, undecorated module-level function in `defined` that `tests`
    use and `production` does not (decorated ones are registered by their decorator: routes,
    tools, commands). Each argument: (file, AST) pairs; `defined`: (module, AST). Uses are found by
    name: a function whose name production code uses for something else is not caught, and one
    production reaches only through a string (getattr) would need an entry in TESTED_ONLY."""
    used, tested = _referenced_names(production), _referenced_names(tests)
    return sorted(f"{module}.{node.name}" for module, tree in defined for node in tree.body
                  if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not node.name.startswith("_")
                  and not node.decorator_list and node.name in tested and node.name not in used)


def _trees(root: Path):
    return [(str(p.relative_to(REPO)), ast.parse(p.read_text(), filename=str(p))) for p in sorted(root.rglob("*.py"))]


def test_no_public_function_of_libs_is_only_for_the_tests():
    """A helper only tests call lives in tests/ (tests/reads.py, tests/sample_network.py), not in
    the packages; the entries of TESTED_ONLY say why theirs stay."""
    defined = [(m, TREES[m]) for m in MODULES if not m.startswith("services.")]
    production = [(str(MODULES[m].relative_to(REPO)), TREES[m]) for m in MODULES] + _trees(REPO / "bench")
    found = functions_only_tests_use(defined, production, _trees(TESTS))
    only_tested = sorted(set(found) - set(TESTED_ONLY))
    assert not only_tested, f"used only by tests, move them into tests/: {only_tested}"
    stale = sorted(set(TESTED_ONLY) - set(found))
    assert not stale, f"no longer used only by tests, drop them from TESTED_ONLY: {stale}"


def test_a_function_only_the_tests_use_would_be_seen():
    lib = ast.parse("def used(): ...\ndef tested(): ...\ndef _private(): ...\n@register\ndef tool(): ...\n"
                    "def unused(): ...")
    production = [("app.py", ast.parse("from lib import used\nused()")),
                  ("pkg/__init__.py", ast.parse("from lib import tested"))]
    tests = [("tests/test_lib.py", ast.parse("import lib\nlib.used(); lib.tested(); lib._private(); lib.tool()"))]
    assert functions_only_tests_use([("lib", lib)], production, tests) == ["lib.tested"]


# ---------------------------------------------------------------- 8. one door for writes

WRITE_LAYERS = ("relay_graph.memory", "relay_graph.desk", "relay_graph.lab")
ENTRY_FUNCTIONS = ("services.", "relay_graph.tools.")
WRITE_CLAUSE = re.compile(r"\b(CREATE|MERGE|SET|DELETE|REMOVE)\b|CALL\s+db\.(create|drop)", re.I)


def _scan(modules: dict[str, Path], trees: dict[str, ast.AST]):
    import relay_graph.desk  # noqa: F401 (registers the desk's predicates: per-predicate statements are built from them)
    import relay_graph.lab  # noqa: F401
    from tests.write_paths import Scan

    return Scan(modules, trees)


def _direct_writes(scan, prefixes: tuple[str, ...] = ENTRY_FUNCTIONS) -> list[str]:
    return sorted(f"{key} -> {target}" for key in scan.functions if key.startswith(prefixes)
                  for target in scan.direct_writes(key, WRITE_LAYERS))


def test_every_statements_flag_says_what_its_cypher_does():
    import importlib

    from relay_graph.runtime.queries import Query

    wrong = []
    for module in MODULES:
        if not _is_statements(module):
            continue
        for name, value in vars(importlib.import_module(module)).items():
            if isinstance(value, Query) and value.read_only == bool(WRITE_CLAUSE.search(value.cypher)):
                wrong.append(f"{module}.{name}: read_only={value.read_only}")
            elif isinstance(value, Query) and value.read_receipt and "CONSULTED" not in value.cypher:
                wrong.append(f"{module}.{name}: a read receipt that records no read")
    assert not wrong, "\n".join(wrong)


def test_entry_points_write_only_through_the_use_cases():
    wrong = _direct_writes(_scan(MODULES, TREES))
    assert not wrong, "write through a use case (relay_graph.usecases) instead:\n" + "\n".join(wrong)


def test_entry_points_announce_only_through_the_call():
    """No entry point announces by itself: it records (`Call.owe`) and the call's owner flushes."""
    found = []
    for module, tree in TREES.items():
        if not module.startswith(ENTRY_FUNCTIONS) or module == "services.gateway.deps":
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                func = node.func
                name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
                if name in ("announce", "notify", "publish_kept", "flush") and not (
                        module == "relay_graph.tools.toolset" and name == "flush"):
                    found.append(f"{module}:{node.lineno}: {name}(...)")
    assert not found, "\n".join(found)


def test_a_direct_write_would_be_seen():
    """Rule 8 on code with the faults it looks for: a route writing through the desk, a handler
    writing through a method of the engine, and a use case doing the same (allowed)."""
    route = ast.parse("from relay_graph.desk.tickets import store as tickets\n"
                      "async def f(client):\n    await tickets.set_stage(client, 't', 'x', 'fixed')\n"
                      "async def g(client):\n    await tickets.get_ticket(client, 't', 'x')\n")
    handler = ast.parse("async def h(deps):\n    await deps.memory.write_fact('t', None)\n")
    case = ast.parse("from relay_graph.desk.tickets import store as tickets\n"
                     "async def u(call):\n    await tickets.set_stage(call.client, 't', 'x', 'fixed')\n")
    modules = dict(MODULES, **{"services.fake.route": REPO / "route.py", "services.fake.handler": REPO / "handler.py",
                               "relay_graph.usecases.fake": REPO / "fake.py"})
    trees = dict(TREES, **{"services.fake.route": route, "services.fake.handler": handler,
                           "relay_graph.usecases.fake": case})
    scan = _scan(modules, trees)
    assert "relay_graph.usecases.fake:u" in scan.writes  # a use case writes: that is its job
    assert "services.fake.route:g" not in scan.writes  # a read is a read
    wrong = _direct_writes(scan, ("services.fake.",))
    assert [w.split(" (")[0] for w in wrong] == [
        "services.fake.handler:h -> relay_graph.memory.facade:Memory.write_fact",
        "services.fake.route:f -> relay_graph.desk.tickets.store:set_stage"], wrong
