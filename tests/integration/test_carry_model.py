"""After a dream, with the bundled model and the CLI: the claim that replaced an older one ranks first for a question
the older one matched best (:func:`suzent_cli.recall.carry_to_current`). Before the step, "Pays for iCloud+ 200 GB"
(a related current claim) ranked above "Cancelled ChatGPT Plus and subscribed to Claude Pro instead"."""

from __future__ import annotations

import json

from conftest import invoke
from suzent_cli.index.embed import BUNDLED_NAME


def test_after_the_dream_recall_puts_the_replacement_first(home):
    def cli(*args, now):
        proc = invoke(home, *args, env_extra={"SUZENT_EMBEDDER": BUNDLED_NAME, "SUZENT_NOW": now})
        assert proc.returncode == 0, (args, proc.stdout, proc.stderr)
        return proc

    for day, fact in (("03", "[personal] Pays for ChatGPT Plus"),
                      ("06", "[personal] Pays for Spotify Family with the siblings"),
                      ("17", "[personal] Cancelled ChatGPT Plus and subscribed to Claude Pro instead"),
                      ("18", "[personal] Pays for iCloud+ 200 GB")):
        cli("capture", "--fact", fact, now=f"2026-03-{day}T09:00")
    cli("dream", "--force", "--engine", "offline", "--no-lint", now="2026-03-19T09:00")
    cli("index", now="2026-03-19T09:00")
    page = (home / "notebook/3_Personal/Profile.md").read_text(encoding="utf-8")
    assert "- Pays for ChatGPT Plus (confirmed 1x, last 2026-03-03) (until 2026-03-17)" in page
    out = cli("recall", "which AI chat subscription does the user pay for", "--json", "--explain",
              now="2026-03-19T09:00").stdout
    hits = json.loads(out)["hits"]
    assert hits[0]["content"].startswith("Cancelled ChatGPT Plus and subscribed to Claude Pro"), hits[0]
    assert hits[0]["carries"], hits[0]  # recall --explain says why
    superseded = next(h for h in hits if h["status"] == "superseded")
    assert superseded["content"] == "Pays for ChatGPT Plus"
