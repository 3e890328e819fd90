"""A newcomer follows the README literally: the ```sh blocks of "Quick start" and "Configuration", line by line,
in bash, in an empty HOME, with the installed `suzent` first on PATH and the network refused.

Nothing is replaced: no SUZENT_* variable is set beyond what the README itself exports (HOME is a temp dir, so
`~/.suzent` lands there), and the real bundled model is used. If a step stops working as written, fix the README.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import AUTOSTART_OFF, REPO
from suzent_cli.errors import CODES

SECTIONS = ("Quick start", "Configuration")


def readme_steps(section: str) -> list[str]:
    """The lines of the ```sh blocks under ``## section`` (up to the next ``## ``), as written."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    body = text.split(f"\n## {section}\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"^```sh\n(.*?)^```", body, re.S | re.M)
    assert blocks, f"no ```sh block under ## {section}"
    return [line for block in blocks for line in block.splitlines() if line.strip()]


def run_steps(lines: list[str], workdir: Path, env: dict) -> list[dict]:
    """Run ``lines`` in one bash (so `export` carries over), each line unchanged, recording its exit code, stdout
    and stderr."""
    script = ["set -u"]
    for i, line in enumerate(lines):
        script += [f"{{\n{line}\n}} >{workdir}/out.{i} 2>{workdir}/err.{i}", f"echo $? >{workdir}/rc.{i}"]
    proc = subprocess.run(["bash", "-c", "\n".join(script)], cwd=workdir, env=env, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr
    return [{"line": line, "rc": int((workdir / f"rc.{i}").read_text()),
             "out": (workdir / f"out.{i}").read_text(encoding="utf-8", errors="replace"),
             "err": (workdir / f"err.{i}").read_text(encoding="utf-8", errors="replace")}
            for i, line in enumerate(lines)]


@pytest.fixture(scope="module")
def newcomer(tmp_path_factory):
    root = tmp_path_factory.mktemp("newcomer")
    user_home = root / "home"
    work = root / "work"
    user_home.mkdir()
    work.mkdir()
    venv_bin = Path(sys.executable).parent
    assert (venv_bin / "suzent").is_file(), "the suzent console script is not installed next to this python"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SUZENT_", "ANTHROPIC_", "NO_COLOR"))}
    refused = "http://127.0.0.1:9"  # the discard port: any HTTP(S) attempt fails at once
    env.update(HOME=str(user_home), PATH=f"{venv_bin}{os.pathsep}{env.get('PATH', '')}", COLUMNS="120",
               http_proxy=refused, https_proxy=refused, HTTP_PROXY=refused, HTTPS_PROXY=refused, ALL_PROXY=refused,
               no_proxy="", NO_PROXY="", **AUTOSTART_OFF)
    results = {}
    lines = []
    for section in SECTIONS:
        lines += [(section, line) for line in readme_steps(section)]
    steps = run_steps([line for _, line in lines], work, env)
    for (section, _), step in zip(lines, steps, strict=False):
        results.setdefault(section, []).append(step)
    return {"home": user_home / ".suzent", "steps": results}


def step(newcomer, section: str, starts: str) -> dict:
    found = [s for s in newcomer["steps"][section] if s["line"].startswith(starts)]
    assert found, f"README {section} has no step starting {starts!r}"
    return found[0]


def test_every_step_exits_as_documented(newcomer):
    for section, steps in newcomer["steps"].items():
        for s in steps:
            # `suzent dream` exits 4 when nothing is due (docs/cli.md "Exit codes"); everything else must succeed
            allowed = {0, 4} if re.match(r"^suzent dream\b", s["line"]) else {0}
            assert s["rc"] in allowed and s["rc"] in CODES, (section, s)
            assert "Traceback" not in s["err"], (section, s)


def test_the_data_lands_in_the_home_the_readme_exports(newcomer):
    home = newcomer["home"]
    assert (home / "config.toml").is_file() and (home / "notebook" / "schema.md").is_file()
    logs = list((home / "sandbox" / "shared" / "memory" / "archive").glob("*.md"))
    assert len(logs) == 1
    text = logs[0].read_text(encoding="utf-8")
    assert "- [preference] Prefers compact dashboards `ui`\n" in text and "- [personal] Lives in Lisbon\n" in text
    assert "neovim" in text  # the turn's fact, extracted offline
    assert (home / "memory" / "archival_memories.lance").is_dir()


def test_init_and_capture_say_what_they_did(newcomer):
    init = step(newcomer, "Quick start", "suzent init")
    assert str(newcomer["home"]) in init["out"] and "created" in init["out"]
    facts = step(newcomer, "Quick start", "suzent capture --fact")
    assert "captured 2 fact(s)" in facts["out"] and "Lives in Lisbon" in facts["out"]
    turn = step(newcomer, "Quick start", "echo ")
    assert "captured 1 fact(s)" in turn["out"] and "neovim" in turn["out"]


def test_index_embeds_the_new_facts(newcomer):
    index = step(newcomer, "Quick start", "suzent index")
    assert re.search(r"rows \+3 ", index["out"]), index["out"]


def test_recall_finds_the_editor_by_meaning_with_provenance(newcomer):
    plain = step(newcomer, "Quick start", 'suzent recall "which editor')
    hits = plain["out"].splitlines()
    assert 1 <= len(hits) <= 5
    rank, score, where, date, session, content, _lifecycle = hits[0].split("\t")
    assert rank == "1" and "neovim" in content and re.fullmatch(r"\d{4}-\d{2}-\d{2}\.md:\d+", where)
    data = json.loads(step(newcomer, "Quick start", 'suzent recall "editor" --json')["out"])
    top = data["hits"][0]
    assert "neovim" in top["content"]
    for key in ("source_file", "locator", "date", "session", "score", "ranks"):  # as the README's comment lists
        assert key in top, key
    assert top["source_file"] == where.split(":")[0] and top["locator"] == int(where.split(":")[1])


def test_dream_and_status(newcomer):
    dream = step(newcomer, "Quick start", "suzent dream")
    assert re.match(r"^(lint|idle|ingested)", dream["out"]), dream["out"]
    status = step(newcomer, "Quick start", "suzent status")
    said = status["line"].split("#", 1)[1].rsplit(":", 1)[-1]  # what the README's comment says status shows
    for item in said.split(","):
        word = item.split()[0].lower()
        assert word in status["out"].lower(), f"README says status shows {item.strip()!r}: {status['out']}"


def test_config_steps(newcomer):
    show = step(newcomer, "Configuration", "suzent config show  ")
    assert f"config file: {newcomer['home'] / 'config.toml'} (exists)" in show["out"]
    assert 'home = "' in show["out"] and "# env:SUZENT_HOME" in show["out"]
    data = json.loads(step(newcomer, "Configuration", "suzent config show --json")["out"])
    assert data["settings"]["home"] == {"value": str(newcomer["home"]), "origin": "env:SUZENT_HOME"}
    assert data["settings"]["index.embedder"] == {"value": "all-MiniLM-L6-v2", "origin": "default"}
    path = step(newcomer, "Configuration", "suzent config path")
    assert path["out"].strip() == str(newcomer["home"] / "config.toml")
