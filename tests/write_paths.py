"""Which functions write the graph, read from the statements' own flags and the code's calls.

A function writes when it runs a named statement that is neither `read_only` nor a `read_receipt`
(the trace a read leaves: who consulted what) (it names one: a `Query`
of a `queries` module, a mapping of them, or a builder whose statements are not read-only), or when
it calls a function that writes. Calls are followed through what a module imports (modules,
functions, classes), `self`/`cls` methods, and, for a method called on any other object, every
method of that name in relay_graph (`memory.write_fact(...)` is `Memory.write_fact`).

Used by tests/test_architecture.py (rule 8: one door for writes)."""

from __future__ import annotations

import ast
import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from relay_graph.runtime.queries import Query


@dataclass
class Function:
    key: str  # module:qualname (nested defs are part of the function they are in)
    module: str
    refs: set[tuple[str, str]] = field(default_factory=set)  # (queries module, attribute) named
    builds: bool = False  # constructs a Query without read_only=True (a builder in a queries module)
    calls: set[str] = field(default_factory=set)  # resolved callee keys
    methods: set[str] = field(default_factory=set)  # method names called on other objects


def is_statements(module: str) -> bool:
    return module.startswith("relay_graph.") and ".queries" in module


def _writing_value(value: object, seen: set[int] | None = None) -> bool | None:
    """True/False for a statement (or a mapping, list or tuple of them); None for anything else."""
    if isinstance(value, Query):
        return not (value.read_only or value.read_receipt)
    if isinstance(value, (Mapping, list, tuple)):
        items = list(value.values()) if isinstance(value, Mapping) else list(value)
        flags = [f for f in (_writing_value(v) for v in items) if f is not None]
        return any(flags) if flags else None
    return None


class Scan:
    """The functions of `modules` (name -> (path, tree)) and what each one writes."""

    def __init__(self, modules: dict[str, Path], trees: dict[str, ast.AST]):
        self.modules, self.trees = modules, trees
        self.functions: dict[str, Function] = {}
        self.classes: dict[str, dict[str, str]] = {}  # module:Class -> method name -> key
        self.by_method: dict[str, set[str]] = {}
        for name, tree in trees.items():
            self._collect(name, tree)
        self.reexports = _reexports(modules, trees)
        self.writing_attrs = self._statement_flags()
        self.writes = self._close()

    # ---------------------------------------------------------------- reading the code

    def _bindings(self, name: str, tree: ast.AST) -> dict[str, tuple[str, str | None]]:
        """Local name -> (module, attribute or None for the module itself)."""
        out: dict[str, tuple[str, str | None]] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    if a.asname and a.name in self.modules:
                        out[a.asname] = (a.name, None)
            elif isinstance(node, ast.ImportFrom):
                source = _absolute(self.modules, name, node)
                for a in node.names:
                    full = f"{source}.{a.name}"
                    out[a.asname or a.name] = (full, None) if full in self.modules else (source, a.name)
        for node in tree.body if isinstance(tree, ast.Module) else []:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                out[node.name] = (name, node.name)
        return out

    def _collect(self, name: str, tree: ast.AST) -> None:
        binds = self._bindings(name, tree)
        for node in tree.body if isinstance(tree, ast.Module) else []:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self._function(name, node.name, node, binds, None)
            elif isinstance(node, ast.ClassDef):
                methods: dict[str, str] = {}
                for item in node.body:
                    if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        key = self._function(name, f"{node.name}.{item.name}", item, binds, node.name)
                        methods[item.name] = key
                        if name.startswith("relay_graph."):
                            self.by_method.setdefault(item.name, set()).add(key)
                self.classes[f"{name}:{node.name}"] = methods

    def _function(self, module: str, qualname: str, node: ast.AST, binds: dict, cls: str | None) -> str:
        f = Function(f"{module}:{qualname}", module)
        for n in ast.walk(node):
            if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name):
                target = binds.get(n.value.id)
                if target and target[1] is None and is_statements(target[0]):
                    f.refs.add((target[0], n.attr))
            elif isinstance(n, ast.Name):
                target = binds.get(n.id)
                if target and target[1] is not None and is_statements(target[0]):
                    f.refs.add((target[0], target[1]))
            if isinstance(n, ast.Call):
                self._call(f, n, binds, module, cls)
        self.functions[f.key] = f
        return f.key

    def _call(self, f: Function, n: ast.Call, binds: dict, module: str, cls: str | None) -> None:
        func = n.func
        if isinstance(func, ast.Name):
            if func.id == "Query" and not any(k.arg == "read_only" and isinstance(k.value, ast.Constant)
                                              and k.value.value is True for k in n.keywords):
                f.builds = True
            target = binds.get(func.id)
            if target and target[1] is not None:
                f.calls.add(f"{target[0]}:{target[1]}")
        elif isinstance(func, ast.Attribute):
            base = func.value
            if isinstance(base, ast.Name) and base.id in ("self", "cls") and cls:
                f.calls.add(f"{module}:{cls}.{func.attr}")
            elif isinstance(base, ast.Name) and base.id in binds:
                target = binds[base.id]
                if target[1] is None:
                    f.calls.add(f"{target[0]}:{func.attr}")
                else:  # Class.method, or a module-level object's method
                    f.calls.add(f"{target[0]}:{target[1]}.{func.attr}")
                    f.methods.add(func.attr)
            else:
                f.methods.add(func.attr)

    # ---------------------------------------------------------------- the statements' flags

    def _statement_flags(self) -> set[tuple[str, str]]:
        """(queries module, attribute) of everything there that runs as a write."""
        out: set[tuple[str, str]] = set()
        for module in self.modules:
            if not is_statements(module):
                continue
            loaded = importlib.import_module(module)
            for attr, value in vars(loaded).items():
                flag = _writing_value(value)
                if flag:
                    out.add((module, attr))
        return out

    # ---------------------------------------------------------------- closing over calls

    def _resolve(self, key: str) -> str:
        module, _, name = key.partition(":")
        head, dot, rest = name.partition(".")
        seen = set()
        while (module, head) in self.reexports and (module, head) not in seen:
            seen.add((module, head))
            module = self.reexports[(module, head)]
        return f"{module}:{head}{dot}{rest}"

    def _callees(self, f: Function) -> set[str]:
        out = set()
        for c in map(self._resolve, f.calls):
            if c in self.functions:
                out.add(c)
            elif c in self.classes:  # a class called: its __init__ (and __post_init__)
                out |= {k for m, k in self.classes[c].items() if m in ("__init__", "__post_init__")}
        for m in f.methods:
            out |= self.by_method.get(m, set())
        return out

    def _close(self) -> dict[str, str]:
        """Function key -> why it writes (the statement, or the first callee that writes)."""
        writes: dict[str, str] = {}
        for key, f in self.functions.items():
            named = sorted(r for r in f.refs if r in self.writing_attrs)
            if named:
                writes[key] = "runs " + ".".join(named[0]).replace("relay_graph.", "")
            elif f.builds and is_statements(f.module):
                writes[key] = "builds a write statement"
        callees = {k: self._callees(f) for k, f in self.functions.items()}
        changed = True
        while changed:
            changed = False
            for key, targets in callees.items():
                if key in writes:
                    continue
                for t in sorted(targets):
                    if t in writes:
                        writes[key] = f"calls {t}"
                        changed = True
                        break
        return writes

    def direct_writes(self, key: str, layers: tuple[str, ...]) -> list[str]:
        """The callees of `key` in `layers` (e.g. relay_graph.desk) that write, with why."""
        f = self.functions[key]
        found = []
        for t in sorted(self._callees(f)):
            if t in self.writes and t.split(":")[0].startswith(layers):
                found.append(f"{t} ({self.writes[t]})")
        return found


def _reexports(modules: dict[str, Path], trees: dict[str, ast.AST]) -> dict[tuple[str, str], str]:
    """(package, name) -> the module a package's __init__ takes that name from."""
    out: dict[tuple[str, str], str] = {}
    for name, tree in trees.items():
        if modules[name].name != "__init__.py":
            continue
        for node in tree.body:
            if isinstance(node, ast.ImportFrom):
                source = _absolute(modules, name, node)
                for a in node.names:
                    if f"{source}.{a.name}" not in modules:
                        out[(name, a.asname or a.name)] = source
    return out


def _absolute(modules: dict[str, Path], name: str, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    base = name.split(".") if modules[name].name == "__init__.py" else name.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))
