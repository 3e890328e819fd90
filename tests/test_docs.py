"""Docs that cannot drift: generated completions, man pages and docs/cli.md match the app; every command has an
example."""

from __future__ import annotations

import re

import pytest
import typer.main

from conftest import REPO, invoke, load_script
from suzent_cli.cli.app import app


def _gen():
    return load_script("scripts/gen_docs.py", "gen_docs")


def test_completions_and_man_pages_are_fresh(tmp_path):
    generated = _gen().generate(tmp_path)
    assert {"completions/suzent.bash", "completions/_suzent", "completions/suzent.fish", "man/suzent.1",
            "docs/cli.md"} <= set(generated)
    stale = [rel for rel, text in generated.items()
             if not (REPO / rel).is_file() or (REPO / rel).read_text(encoding="utf-8") != text]
    assert not stale, f"run `make docs`: stale {stale}"
    orphans = sorted(f"man/{p.name}" for p in (REPO / "man").glob("*.1") if f"man/{p.name}" not in generated)
    assert not orphans, f"man pages of commands that no longer exist: {orphans}"
    pages = {rel for rel in generated if rel.startswith("man/")}
    for path, _ in _walk(typer.main.get_command(app)):  # one page per command, subcommands of a group included
        assert f"man/suzent-{'-'.join(path)}.1" in pages, path


def _walk(command, path=()):
    for name, sub in getattr(command, "commands", {}).items():
        yield (*path, name), sub
        yield from _walk(sub, (*path, name))


@pytest.mark.parametrize("name", sorted(typer.main.get_command(app).commands))
def test_every_command_has_help_with_an_example(name):
    command = typer.main.get_command(app).commands[name]
    assert command.help and "Example:" in command.help, name


def test_completions_offer_every_command():
    """The generated scripts call back into `suzent` (_SUZENT_COMPLETE), so they complete commands added later."""
    root = typer.main.get_command(app)
    for words, cword, expected in [("suzent ", 1, set(root.commands)),
                                   *[(f"suzent {name} ", 2, set(cmd.commands)) for name, cmd in root.commands.items()
                                     if getattr(cmd, "commands", None)]]:
        r = invoke(None, env_extra={"_SUZENT_COMPLETE": "complete_bash", "COMP_WORDS": words, "COMP_CWORD": str(cword)})
        assert set(r.stdout.split()) == expected, words
    for name in ("suzent.bash", "_suzent", "suzent.fish"):
        assert "_SUZENT_COMPLETE" in (REPO / "completions" / name).read_text(encoding="utf-8"), name


# --- the hand-written docs: short README, links that resolve, a code map that matches the tree ----------------

DOCS = sorted((REPO / "docs").glob("*.md"))


def test_readme_is_what_a_newcomer_needs():
    text = (REPO / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 250, "README.md is over 250 lines: move the detail into docs/"
    for doc in DOCS:
        assert f"(docs/{doc.name})" in text, f"README.md does not link docs/{doc.name}"
    assert "(BENCHMARKS.md)" in text


def _slug(heading: str) -> str:
    """GitHub's anchor for a Markdown heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _anchors(path) -> set[str]:
    text = re.sub(r"^```.*?^```", "", path.read_text(encoding="utf-8"), flags=re.S | re.M)
    return {_slug(m.group(1)) for m in re.finditer(r"^#{1,6}\s+(.*?)\s*$", text, re.M)}


@pytest.mark.parametrize("doc", ["README.md", *(f"docs/{p.name}" for p in DOCS)])
def test_local_links_resolve(doc):
    """Every relative link names a file of the repo, and every #anchor a heading of that file."""
    path = REPO / doc
    text = re.sub(r"^```.*?^```", "", path.read_text(encoding="utf-8"), flags=re.S | re.M)
    text = re.sub(r"`[^`\n]*`", "", text)  # a link shown as code is an example, not a link
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"^[a-z]+:", target):
            continue  # an external URL
        file, _, anchor = target.partition("#")
        linked = (path.parent / file).resolve() if file else path
        rel = linked.relative_to(REPO).as_posix()
        assert linked.exists(), f"{doc}: link to {target}: no such file"
        if anchor:
            assert anchor in _anchors(linked), f"{doc}: link to {target}: no such heading in {rel}"


def _code_map() -> list[str]:
    """The paths of the code map in docs/ARCHITECTURE.md ("Layers"), e.g. ``suzent_cli/index/store.py``."""
    text = (REPO / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    block = text.split("\n## Layers\n", 1)[1].split("```\n", 1)[1].split("\n```", 1)[0]
    paths, stack = [], []
    for line in block.splitlines():
        if not line.strip():
            continue
        depth = (len(line) - len(line.lstrip())) // 2
        names = re.split(r"\s{2,}", line.strip(), maxsplit=1)[0]
        del stack[depth:]
        for name in names.split(", "):
            if "<" not in name:
                paths.append("".join(stack) + name)
        if names.endswith("/"):
            stack.append(names)
    return paths


def test_the_code_map_is_the_tree():
    paths = _code_map()
    assert "suzent_cli/index/indexer.py" in paths and "suzent_cli/vault/state/" in paths and len(paths) > 40
    missing = [p for p in paths if not (REPO / p.split()[0]).exists()]
    assert not missing, f"docs/ARCHITECTURE.md names paths that do not exist: {missing}"
    modules = {p.relative_to(REPO).as_posix() for p in (REPO / "suzent_cli").glob("*.py")} - {
        "suzent_cli/__init__.py", "suzent_cli/__main__.py"}
    packages = {f"{p.relative_to(REPO).as_posix()}/" for p in (REPO / "suzent_cli").iterdir()
                if (p / "__init__.py").is_file()}
    unmapped = sorted((modules | packages) - set(paths))
    assert not unmapped, f"docs/ARCHITECTURE.md's code map misses {unmapped}"


def test_docs_name_only_paths_that_exist():
    """A module path in backticks anywhere in the docs names a file that exists (or one arriving with a sibling)."""
    for doc in ["README.md", *(f"docs/{p.name}" for p in DOCS)]:
        text = (REPO / doc).read_text(encoding="utf-8")
        for path in re.findall(r"`((?:suzent_cli|tests|scripts)/[\w/]+\.(?:py|md))`", text):
            assert (REPO / path).exists(), f"{doc} names {path}"


def test_format_lists_every_state_file():
    """Every file name the code writes state to (a ``.json``/``.jsonl``/``.txt``/``.lock`` literal, wherever the
    module holding it) is described in docs/FORMAT.md. The embedder's model files are not suzent's state."""
    import ast

    text = (REPO / "docs" / "FORMAT.md").read_text(encoding="utf-8")
    names = set()
    for path in (REPO / "suzent_cli").rglob("*.py"):
        if path.relative_to(REPO).as_posix() == "suzent_cli/index/embed.py":
            continue  # reads a sentence-transformers model dir (config.json, modules.json)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and \
                    re.fullmatch(r"(?:\.state/)?\.?[\w.\-]+\.(?:jsonl|json|txt|lock|holder)", node.value):
                names.add(node.value.removeprefix(".state/"))
    assert {"tombstones.jsonl", "dream_state.json", ".dream.lock", "claude_code.json"} <= names
    missing = sorted(n for n in names if n not in text)
    assert not missing, f"docs/FORMAT.md does not describe {missing}"
