"""One writer of LanceDB, as a fact of the code (issue 14, item 4).

Readers get a :class:`ReadStore`: no write method, and the lance table it wraps is private. Only
``index/indexer.py`` builds a :class:`TableWriter` and calls its writes; only ``index/store.py`` imports lancedb
or touches a lance table. These tests read the source (``ast``), so a new reader that writes fails here even when
no other test exercises it.
"""

from __future__ import annotations

import ast
import datetime as dt
import re

from conftest import REPO
from suzent_cli import archive
from suzent_cli.archive import Fact
from suzent_cli.index.api import make_indexer
from suzent_cli.index.store import ReadStore, TableWriter
from suzent_cli.init import init_home

# The write half of the store: TableWriter's own methods (checked below to be exactly its additions).
WRITE_METHODS = {"open_or_create", "commit", "compact", "delete_ids", "ensure_fts_index", "ensure_vector_index",
                 "ensure_source_index", "ensure_scope_column"}
# What a lance Table (or connection) can change the index with.
LANCE_WRITES = {"add", "delete", "update", "merge_insert", "optimize", "create_index", "create_table", "drop_table",
                "create_fts_index", "create_scalar_index", "cleanup_old_versions", "compact_files", "restore",
                "add_columns", "alter_columns", "drop_columns"}
STORE, INDEXER = "index/store.py", "index/indexer.py"


def _trees() -> dict[str, ast.Module]:
    root = REPO / "suzent_cli"
    return {p.relative_to(root).as_posix(): ast.parse(p.read_text(encoding="utf-8")) for p in root.rglob("*.py")}


def _sources() -> dict[str, str]:
    root = REPO / "suzent_cli"
    return {p.relative_to(root).as_posix(): p.read_text(encoding="utf-8") for p in root.rglob("*.py")}


def _names(tree: ast.AST) -> set[str]:
    """Every identifier a module uses: names, attributes, and what it imports (``from x import y as z``: y)."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            out.add(node.id)
        elif isinstance(node, ast.Attribute):
            out.add(node.attr)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            out.update(alias.name.rsplit(".", 1)[-1] for alias in node.names)
    return out


def _called_methods(tree: ast.AST) -> set[str]:
    """The ``x.method(...)`` names a tree calls."""
    return {node.func.attr for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)}


def _lance_calls(tree: ast.AST) -> set[str]:
    """The methods a tree calls on a lance table (``<x>._table.method(...)``), plus a connection's table makers."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            receiver = node.func.value
            if (isinstance(receiver, ast.Attribute) and receiver.attr == "_table") or \
                    node.func.attr in {"create_table", "drop_table"}:
                out.add(node.func.attr)
    return out


def _class(tree: ast.Module, name: str) -> ast.ClassDef:
    return next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == name)


def test_a_read_store_has_no_write_method():
    # _version: the writer reads the table version live instead of once per refresh (a read, not a write)
    assert set(vars(TableWriter)) - {"__module__", "__doc__", "__init__", "__firstlineno__",
                                     "__static_attributes__", "_version"} == WRITE_METHODS
    assert issubclass(TableWriter, ReadStore)
    for name in WRITE_METHODS | {"table"}:
        assert not hasattr(ReadStore, name), name


def test_an_open_read_store_holds_no_writable_table(settings, embedder):
    init_home(settings)
    archive.append_entry(settings.paths.archive_dir, dt.date(2026, 6, 1), "10:00", "s", [Fact("Likes tea")],
                         timeout=5)
    make_indexer(settings, embedder=embedder).run()
    store = ReadStore.open(settings.paths.index_dir, embedder.name, embedder.dim)
    assert [r["content"] for r in store.rows(["content"])] == ["Likes tea"]
    public = {name for name in dir(store) if not name.startswith("_")}
    assert not public & (WRITE_METHODS | LANCE_WRITES | {"table"})
    # the attributes it holds are plain values; the lance table is the one private attribute
    assert {k for k in vars(store) if not k.startswith("_")} == {"index_dir", "home"}


def test_only_the_indexer_builds_the_writer_or_calls_a_write():
    trees = _trees()
    namers = sorted(f for f, t in trees.items() if "TableWriter" in _names(t) and f != STORE)
    assert namers == [INDEXER]
    writers = sorted(f for f, t in trees.items() if _called_methods(t) & WRITE_METHODS and f != STORE)
    assert writers == [INDEXER]


def test_only_the_store_touches_a_lance_table():
    trees = _trees()
    assert sorted(f for f, t in trees.items() if "_table" in _names(t)) == [STORE]
    assert sorted(f for f, t in trees.items() if "_lancedb" in _names(t)) == [STORE]
    # inside store.py, the lance writes sit in TableWriter only: a ReadStore method cannot write
    store = trees[STORE]
    assert _lance_calls(_class(store, "ReadStore")) & LANCE_WRITES == set()
    assert _lance_calls(_class(store, "TableWriter")) & LANCE_WRITES >= {"create_table", "delete", "merge_insert",
                                                                             "optimize", "create_index"}


def test_the_indexer_is_the_only_lancedb_writer():
    """Moved from tests/test_reconcile.py (same assertions)."""
    sources = _sources()
    importers = sorted(f for f, t in sources.items() if re.search(r"\bimport lancedb\b|\bfrom lancedb\b", t))
    assert importers == [STORE]
    writers = sorted(f for f, t in sources.items() if re.search(r"\.(commit|compact)\(", t) and f != STORE)
    assert writers == [INDEXER]
    openers = sorted(f for f, t in sources.items() if re.search(r"Indexer\(", t))
    assert openers == ["index/api.py"]



def _under_lock(tree: ast.Module, is_target) -> list[tuple[int, bool]]:
    """``(line, held)`` of every call ``is_target(call)`` accepts: ``held`` when a ``with locked(...)`` encloses it."""
    out: list[tuple[int, bool]] = []

    def visit(node: ast.AST, held: bool) -> None:
        if isinstance(node, ast.With):
            held = held or any(isinstance(i.context_expr, ast.Call) and isinstance(i.context_expr.func, ast.Name)
                               and i.context_expr.func.id == "locked" for i in node.items)
        if isinstance(node, ast.Call) and is_target(node):
            out.append((node.lineno, held))
        for child in ast.iter_child_nodes(node):
            visit(child, held)

    visit(tree, False)
    return out


def test_every_writer_is_opened_under_the_indexer_lock():
    """The indexer opens a TableWriter only inside ``with locked(<index_dir>/.indexer.lock)``, directly or in
    ``Indexer._run_locked``, whose one caller holds the lock."""
    tree = _trees()[INDEXER]
    indexer = _class(tree, "Indexer")
    run_locked = next(n for n in indexer.body if isinstance(n, ast.FunctionDef) and n.name == "_run_locked")

    def opens_writer(call: ast.Call) -> bool:
        return isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Name) \
            and call.func.value.id == "TableWriter"

    inside_run_locked = {line for line, _ in _under_lock(run_locked, opens_writer)}
    opens = _under_lock(tree, opens_writer)
    assert len(opens) >= 3  # a pass, optimize, legacy deletion
    assert all(held or line in inside_run_locked for line, held in opens), opens

    def calls_run_locked(call: ast.Call) -> bool:
        return isinstance(call.func, ast.Attribute) and call.func.attr == "_run_locked"

    callers = _under_lock(tree, calls_run_locked)
    assert callers and all(held for _, held in callers), callers
    lock_uses = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
                 and n.func.id == "locked"]
    assert all("LOCK_FILE" in ast.unparse(n.args[0]) for n in lock_uses)
