#!/usr/bin/env python3
"""What a warm server's resident copy costs in RSS, with and without giving the freed heap back
(``store.release_freed_heap``, glibc's ``malloc_trim``). One process per run; alternate them:

    for v in off on off on; do python benchmarks/resident_rss.py $v [INDEX_DIR]; done

INDEX_DIR: an index directory (default: the 100k table that ``benchmarks/recall_floor.py`` caches). Prints one line
per run: VmRSS (MB) before and after ``keep_resident(wait=True)``, the copy's arrays (MB), the read's seconds.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import suzent_cli.index.store as store  # noqa: E402

DEFAULT = Path("/tmp/suzent-recall-floor/100000-hash_384-ann_auto/memory")


def rss_mb() -> float:
    """This process's VmRSS now, MB."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def main() -> int:
    if len(sys.argv) < 2 or sys.argv[1] not in ("on", "off"):
        sys.exit("usage: resident_rss.py on|off [INDEX_DIR]")
    if sys.argv[1] == "off":
        store.release_freed_heap = lambda: None
    index_dir = Path(sys.argv[2]) if len(sys.argv) > 2 else DEFAULT
    kept = store.ReadStore.open_existing(index_dir)
    kept.fts_search("coffee", 5)  # lancedb loaded and the table open before the first figure
    before = rss_mb()
    t0 = time.perf_counter()
    kept.keep_resident(wait=True)
    read = time.perf_counter() - t0
    after = rss_mb()
    copy = kept._resident_now()
    print(f"command: python benchmarks/resident_rss.py {' '.join(sys.argv[1:])}")
    print(f"trim {sys.argv[1]:3}  RSS before {before:.0f} MB, after {after:.0f} MB (+{after - before:.0f}); copy "
          f"{(copy.nbytes / 1e6 if copy is not None else 0):.0f} MB of arrays; read {read:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
