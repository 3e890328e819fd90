"""Shared fixtures: a temp suzent home, settings for it, and a small deterministic embedder."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from suzent_cli.config import resolve_settings
from suzent_cli.errors import EmbeddingFailed
from suzent_cli.index.embed import HashEmbedder

REPO = Path(__file__).resolve().parent.parent


class CountingEmbedder(HashEmbedder):
    """The hash embedder, counting texts embedded; ``fail_on`` makes encode raise when a text contains it."""

    def __init__(self, dim: int = 64, fail_on: str | None = None):
        super().__init__(dim)
        self.calls = 0
        self.texts = 0
        self.fail_on = fail_on

    def encode(self, texts: list[str]) -> np.ndarray:
        if self.fail_on and any(self.fail_on in t for t in texts):
            raise EmbeddingFailed(f"simulated failure on {self.fail_on!r}")
        self.calls += 1
        self.texts += len(texts)
        return super().encode(texts)


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch, tmp_path):
    """No test ever reads the real ~/.suzent, an API key, or a user's config."""
    for key in list(os.environ):
        if key.startswith("SUZENT_") or key.startswith("ANTHROPIC_"):
            monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "user-home"))


@pytest.fixture
def home(tmp_path) -> Path:
    return tmp_path / "suzent-home"


@pytest.fixture
def settings(home):
    return resolve_settings(home=home, today="2026-06-10", env={})


@pytest.fixture
def embedder():
    return CountingEmbedder()


def cli_env(home: Path, **extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SUZENT_", "ANTHROPIC_"))}
    env.update(SUZENT_HOME=str(home), NO_COLOR="1", COLUMNS="120", **extra)
    return env


def run_cli(home: Path, *args: str, input: str | bytes | None = None, env_extra: dict | None = None,
            timeout: float = 180) -> subprocess.CompletedProcess:
    """Run ``python -m suzent_cli ARGS`` as a real subprocess against ``home``."""
    text = not isinstance(input, bytes)
    return subprocess.run([sys.executable, "-m", "suzent_cli", *args], input=input, capture_output=True, text=text,
                          env=cli_env(home, **(env_extra or {})), timeout=timeout, cwd=REPO)


def invoke(home: Path | None, *args: str, input: str | bytes | None = None, env_extra: dict | None = None,
           timeout: float | None = None) -> subprocess.CompletedProcess:
    """Run ``suzent ARGS`` in this process against ``home``: same environment, stdin and result shape as
    :func:`run_cli` (``returncode``, ``stdout``, ``stderr`` as text), without paying a new interpreter and the
    lancedb import per call. ``timeout`` is accepted for drop-in use and ignored. Keep :func:`run_cli` where the
    process is the point (hard exits, signals, concurrency, kill tests, the README as a newcomer runs it)."""
    from click.testing import CliRunner

    from suzent_cli.cli.app import main

    env: dict[str, str | None] = {k: None for k in os.environ if k.startswith(("SUZENT_", "ANTHROPIC_"))}
    env.update(NO_COLOR="1", COLUMNS="120", **(env_extra or {}))
    if home is not None:
        env["SUZENT_HOME"] = str(home)
    argv = [str(a) for a in args]
    with CliRunner().isolation(input=input, env=env) as (out, err, _mixed):
        code = main(argv)
        sys.stdout.flush()
        sys.stderr.flush()
        stdout, stderr = out.getvalue(), err.getvalue()
    if isinstance(input, bytes):
        return subprocess.CompletedProcess(["suzent", *argv], code, stdout, stderr)
    return subprocess.CompletedProcess(["suzent", *argv], code, stdout.decode("utf-8", "replace"),
                                       stderr.decode("utf-8", "replace"))


@pytest.fixture
def cli(home):
    """``cli(*args, input=None, env_extra=None)``: :func:`invoke` against the test's ``home``."""
    return lambda *args, **kw: invoke(home, *args, **kw)



# --- testsb ---
@pytest.fixture(autouse=True)
def _fsync_is_a_check(monkeypatch):
    """``os.fsync`` only checks its descriptor (``os.fstat``: a closed or bad one still raises) instead of waiting
    for the disk, in this process. The suite never cuts the power, so no assertion can observe the flush; a
    process killed mid-write (the kill tests) loses nothing the page cache holds. It is most of the time of
    exporting thousands of facts (one fsynced append each, ~10 ms apiece on a busy disk). A test that injects a
    failing fsync patches ``os.fsync`` again on top of this."""
    monkeypatch.setattr(os, "fsync", lambda fd: os.fstat(fd) and None)
