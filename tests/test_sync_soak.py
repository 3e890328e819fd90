"""The two-machine sync soak (benchmarks/sync_soak.py) in its short mode: two homes capturing concurrently (real
processes), syncs between them through one bare remote, forgets on both; 0 lost, 0 duplicated, forgets total, verify green on both."""

from __future__ import annotations

from conftest import load_script


def test_the_sync_soak_short_mode_loses_and_duplicates_nothing(tmp_path, capsys):
    soak = load_script("benchmarks/sync_soak.py", "sync_soak")
    result = soak.run(seconds=4, rate=8, forget_every=2, workdir=tmp_path, min_forgets=2)  # 2 forgets at any speed
    assert result["captured"] >= 2 and result["forgets"] >= 2 and result["sync_failures"] == 0
    assert result["lost"] == {"A": 0, "B": 0} and result["duplicated"] == {"A": 0, "B": 0}
    assert result["logs_identical"]
    assert result["forgotten_with_tombstone"] == {"A": result["forgets"], "B": result["forgets"]}
    assert result["index_rows_holding_forgotten_text"] == {"A": 0, "B": 0}
    assert result["recall_hits_holding_forgotten_text"] == {"A": 0, "B": 0}  # -1 would mean recall found nothing
    assert result["verify"] == {"A": "ok", "B": "ok"}
