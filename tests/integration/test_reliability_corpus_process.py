"""The reliability corpus harness end to end on a small subset: each case's steps run as real processes, since
what the harness judges (a traceback on stderr, a hang, a killed or out-of-memory process, an exit code) belongs
to a process. Its verdicts are tested in process in tests/test_reliability_corpus.py, which names the subset."""

from __future__ import annotations

import threading
import time
import types

import pytest
from test_reliability_corpus import ATTACK_SUBSET, SUBSET, att, rel

from conftest import invoke


def _step_in_process(home, step):
    """One template step through the CLI in this process, with :func:`rel.run_step`'s environment and result."""
    env = {k: v for k, v in rel.base_env(home).items() if k in ("SUZENT_EMBEDDER", "SUZENT_TODAY", "HOME")}
    t0 = time.monotonic()
    r = invoke(home, *step.args, input=step.stdin or b"", env_extra={**env, **step.env})
    return rel.Ran(step, r.returncode, r.stdout.decode("utf-8", "replace"), r.stderr.decode("utf-8", "replace"),
                   time.monotonic() - t0, False)


@pytest.fixture
def setup_in_process(monkeypatch):
    """What is not under test runs in this process: the template home (nine setup commands) and the verdicts'
    ``recall --json`` queries of a case's home (:func:`rel.recall_texts`, its own code with its one step run here,
    one at a time: the harness runs two cases at once in threads). Every case step still runs as its own process.
    In-process, each of those saves a fresh interpreter's lancedb import (seconds apiece on this machine)."""
    build = rel.build_template

    def build_here(root):
        with pytest.MonkeyPatch.context() as m:
            m.setattr(rel, "run_step", _step_in_process)
            return build(root)

    one_at_a_time = threading.Lock()

    def query_step(home, step):
        with one_at_a_time:
            return _step_in_process(home, step)

    recall_here = types.FunctionType(rel.recall_texts.__code__, {**vars(rel), "run_step": query_step},
                                     "recall_texts")
    monkeypatch.setattr(rel, "build_template", build_here)
    monkeypatch.setattr(rel, "recall_texts", recall_here)


def test_a_subset_of_the_corpus_passes_end_to_end(tmp_path, setup_in_process):
    """The real thing on a few cases: template home, each case step a subprocess, verdicts."""
    cases = [c for c in rel.CASES if c.name in SUBSET]
    verdicts = rel.run_corpus(cases, jobs=2, keep=tmp_path)
    table = rel.table(verdicts)
    assert len(verdicts) == len(SUBSET) and table.count("| PASS |") == len(SUBSET), table + "\n" + "\n".join(
        f"{v.case.name}: {v.traceback + v.lost}" for v in verdicts if not v.ok)


def test_a_subset_of_the_attack_corpus_passes_end_to_end(tmp_path, setup_in_process):
    """benchmarks/attack.py on the same harness: a case per capture-side item of issue 24 (umask 000, a stamp, a
    planted line, secrets), each step a subprocess, the attack checks judging the home afterwards."""
    cases = [c for c in att.CASES if c.name in ATTACK_SUBSET]
    verdicts = rel.run_corpus(cases, jobs=2, keep=tmp_path)
    table = rel.table(verdicts)
    assert len(verdicts) == len(ATTACK_SUBSET) and table.count("| PASS |") == len(ATTACK_SUBSET), table + "\n" + \
        "\n".join(f"{v.case.name}: {v.traceback + v.lost}" for v in verdicts if not v.ok)
