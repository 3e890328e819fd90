"""Imports point one way: ``cli`` -> stages -> tiers (``index`` > ``vault`` > ``archive``) -> base.

Every module of ``suzent_cli`` is parsed with :mod:`ast` (no import runs), and every ``import``/``from … import``
in it counts, at module level or inside a function (a lazy import is still a dependency). Relative imports are
resolved against the module's package. An import names the first two parts of a dotted path
(``suzent_cli.vault.pages`` -> unit ``vault``), and each unit sits in one layer:

* ``cli``: :data:`CLI` (the ``cli`` package and ``__main__``).
* stages: :data:`STAGES` — may import each other, but the stage packages must not form a cycle.
* tiers: :data:`TIERS`, ranked ``index`` > ``vault`` > ``archive``: a tier imports only lower tiers and base.
* base: :data:`BASE` — imports only base.

Rules (one line per violation, ``module -> imported (rule)``): a tier never imports a stage; a tier never imports
a higher tier (so ``vault`` never imports ``index``); ``archive`` imports only base; base imports only base;
nothing outside ``cli`` imports ``cli``. Edges other work items are still removing are in :data:`ALLOWLIST`, each
with the item that removes it; an allowlisted edge that no longer exists fails the test too, so the list shrinks.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = "suzent_cli"
ROOT = Path(__file__).resolve().parent.parent / PACKAGE

CLI = {"cli", "__main__"}
STAGES = {"capture", "recall", "dream", "reconcile", "forget", "promote", "legacy", "dryrun", "run", "status",
          "init", "hooks", "demo", "server", "verify", "transfer", "projects", "sync"}
TIERS = {"index": 3, "vault": 2, "archive": 1}
BASE = {"config", "files", "errors", "text", "claude", "signals", "guard", "privacy", "scope", "copies", "dreamer", "__init__"}

# Edges still present that other items of issue 14 remove. Each entry: (importing module, imported module): why.
# The merger empties this as those items land; an entry whose edge is gone fails test_allowlist_is_not_stale.
ALLOWLIST: dict[tuple[str, str], str] = {}


def _unit(module: str) -> str | None:
    """The layer unit of a dotted ``suzent_cli`` module name (``suzent_cli.vault.pages`` -> ``vault``)."""
    parts = module.split(".")
    if parts[0] != PACKAGE:
        return None
    return parts[1] if len(parts) > 1 else "__init__"


def _layer(unit: str) -> str:
    if unit in CLI:
        return "cli"
    if unit in STAGES:
        return "stage"
    if unit in TIERS:
        return "tier"
    if unit in BASE:
        return "base"
    raise AssertionError(f"suzent_cli.{unit} is in no layer: add it to CLI, STAGES, TIERS or BASE in {__file__}")


def _module_name(path: Path) -> tuple[str, bool]:
    """``(dotted name, is a package __init__)`` of a source file under :data:`ROOT`."""
    rel = path.relative_to(ROOT.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__" and len(parts) > 1:
        return ".".join(parts[:-1]), True
    return ".".join(parts), False


def _imports(path: Path) -> set[str]:
    """Every ``suzent_cli`` module the source file ``path`` imports (see :func:`_imports_of`)."""
    name, is_pkg = _module_name(path)
    return _imports_of(path.read_text(encoding="utf-8"), name, is_pkg=is_pkg)


def _imports_of(source: str, name: str, *, is_pkg: bool = False) -> set[str]:
    """Every ``suzent_cli`` module the source of module ``name`` imports, anywhere in it, a function body included
    (``from x import y`` gives ``x.y`` when ``x.y`` is a module of the package, else ``x``)."""
    package = name if is_pkg else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(source, name)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            found.add(target)
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                if _exists(sub):
                    found.add(sub)
    return {m for m in found if m == PACKAGE or m.startswith(PACKAGE + ".")}


def _exists(module: str) -> bool:
    rel = Path(*module.split("."))
    return (ROOT.parent / rel).with_suffix(".py").is_file() or (ROOT.parent / rel / "__init__.py").is_file()


def _edges() -> set[tuple[str, str]]:
    """Every ``(importing module, imported module)`` pair of the package, both inside ``suzent_cli``."""
    out = set()
    for path in sorted(ROOT.rglob("*.py")):
        name = _module_name(path)[0]
        out.update((name, target) for target in _imports(path) if target != name)
    return out


def _rule(src: str, dst: str) -> str | None:
    """The rule the import ``src -> dst`` breaks, or None when it points the right way."""
    a, b = _unit(src), _unit(dst)
    if a is None or b is None or a == b:
        return None
    la, lb = _layer(a), _layer(b)
    if lb == "cli" and la != "cli":
        return "nothing outside cli imports cli"
    if la == "base" and lb != "base":
        return "base imports only base"
    if la == "tier":
        if lb == "stage":
            return "a tier never imports a stage"
        if a == "archive" and lb != "base":
            return "archive imports only base"
        if lb == "tier" and TIERS[b] > TIERS[a]:
            return f"tiers import downwards only ({' > '.join(sorted(TIERS, key=TIERS.get, reverse=True))})"
    return None


def _violations() -> dict[tuple[str, str], str]:
    return {(src, dst): rule for src, dst in _edges() if (rule := _rule(src, dst))}


def test_imports_point_one_way():
    found = _violations()
    unexpected = sorted(f"{src} -> {dst} ({rule})" for (src, dst), rule in found.items() if (src, dst) not in ALLOWLIST)
    assert not unexpected, "imports pointing the wrong way:\n" + "\n".join(unexpected)


def test_allowlist_is_not_stale():
    """Every allowlisted edge still exists and still breaks a rule: one that does not is removed from the list."""
    found = _violations()
    stale = sorted(f"{src} -> {dst} ({why})" for (src, dst), why in ALLOWLIST.items() if (src, dst) not in found)
    assert not stale, "allowlisted edges that no longer break a rule (remove them from ALLOWLIST):\n" + "\n".join(stale)


def test_stage_packages_form_no_cycle():
    """Stages may import each other, but never in a cycle (``dream -> promote -> dream``)."""
    graph: dict[str, set[str]] = {}
    for src, dst in _edges():
        a, b = _unit(src), _unit(dst)
        if a in STAGES and b in STAGES and a != b:
            graph.setdefault(a, set()).add(b)
    cycles: list[str] = []
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                cycles.append(" -> ".join(path[path.index(nxt):] + [node, nxt]) if nxt in path
                              else f"{node} -> {nxt}")
            elif nxt not in state:
                visit(nxt, path + [node])
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [])
    assert not cycles, "stage import cycles:\n" + "\n".join(cycles)


def test_every_module_is_in_a_layer():
    for path in ROOT.rglob("*.py"):
        unit = _unit(_module_name(path)[0])
        assert unit is not None
        _layer(unit)


def test_the_checker_sees_lazy_and_relative_imports():
    """The parser counts a function-level import and resolves a relative one (the two ways an edge could hide)."""
    assert _rule("suzent_cli.vault.memory_md", "suzent_cli.index.rank") is not None
    assert _rule("suzent_cli.archive", "suzent_cli.vault.state") == "archive imports only base"
    assert _rule("suzent_cli.files", "suzent_cli.cli.app") == "nothing outside cli imports cli"
    assert _rule("suzent_cli.index.sources", "suzent_cli.vault.pages") is None
    assert _rule("suzent_cli.dream.runner", "suzent_cli.promote") is None
    probe = "import os\ndef f():\n    from suzent_cli.index import rank\n    from . import pages\n    from .. import files\n"
    assert _imports_of(probe, "suzent_cli.vault.probe") == {
        "suzent_cli.index", "suzent_cli.index.rank", "suzent_cli.vault", "suzent_cli.vault.pages", "suzent_cli",
        "suzent_cli.files"}
    found = {f"{src} -> {dst}" for (src, dst), _ in _violations().items()}
    assert all(" -> " in line for line in found)
