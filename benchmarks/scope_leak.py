#!/usr/bin/env python3
"""The project-scope leak benchmark (issue 26, section 1): does a recall in one project return another project's
facts, and does scoping cost the person's facts anything?

A home holds ``--projects`` K projects × ``--facts`` M facts each, worded to overlap on purpose: every project
has a database, a CI, a deploy target, a test runner, a language, a cache, a queue, a monitoring tool, an issue
tracker and a code host, each stated in the same words with a different value ("The database is Postgres 16 on
Hetzner"), plus filler facts in the same words ("The payments service owns the nightly job 3"). The person has
``--person`` facts (preferences, personal, goals) captured from inside the projects, as a person does. Every line
goes through the capture library's scope rule (``suzent_cli.capture.scoped``, mode ``auto``) into real daily logs,
then the real indexer builds a real LanceDB table (HashEmbedder ``hash:256`` by default; ``--model`` for the
bundled all-MiniLM-L6-v2).

Queries:

* **project questions**, from each project, one per attribute ("which database does this project use?"): with
  the default scope (the project's facts and the person's) and unscoped (``--all-projects``): the share of top-5
  hits from another project (goal 0) and recall@5 of the project's own answer;
* **person questions**, from every project, one per person fact: recall@5 scoped from each project vs unscoped
  (goal: unchanged).

Each on two paths: lance (a cold CLI's store: prefiltered searches) and resident (a warm server's copy: masks).
Prints a table and the command line.

Usage: python benchmarks/scope_leak.py [--projects 8] [--facts 30] [--person 20] [--model] [--modes hybrid,fts]
"""

from __future__ import annotations

import argparse
import random
import shlex
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

ATTRIBUTES = {  # attribute: (the fact's words, the question, values)
    "database": ("The database is {v}", "which database does this project use",
                 ["Postgres 16 on Hetzner", "MySQL 8 on RDS", "SQLite in a single file", "CockroachDB on GKE",
                  "MongoDB Atlas", "MariaDB on a VPS", "DynamoDB", "Postgres 14 on Supabase", "ClickHouse Cloud",
                  "Firebird on the office server"]),
    "ci": ("CI runs on {v}", "where does CI run for this project",
           ["Woodpecker", "GitHub Actions", "GitLab CI", "Jenkins", "CircleCI", "Buildkite", "Drone", "Travis",
            "TeamCity", "Azure Pipelines"]),
    "deploy": ("We deploy to {v}", "where do we deploy this project",
               ["fly.io", "Heroku", "a Kubernetes cluster", "Render", "AWS Lambda", "Vercel", "a Hetzner VPS",
                "Google Cloud Run", "Netlify", "bare metal in Frankfurt"]),
    "tests": ("The test runner is {v}", "which test runner does this project use",
              ["pytest", "jest", "vitest", "go test", "cargo test", "rspec", "mocha", "unittest", "phpunit",
               "JUnit 5"]),
    "language": ("The backend is written in {v}", "what language is the backend written in",
                 ["Python", "TypeScript", "Go", "Rust", "Ruby", "Elixir", "Kotlin", "Java", "PHP", "Scala"]),
    "cache": ("The cache is {v}", "which cache does this project use",
              ["Redis", "Memcached", "Varnish", "KeyDB", "Dragonfly", "Hazelcast", "Ehcache", "Caffeine",
               "an in-process LRU", "Cloudflare KV"]),
    "queue": ("The job queue is {v}", "which job queue does this project use",
              ["Celery with RabbitMQ", "Sidekiq", "BullMQ", "SQS", "Kafka", "NATS", "Oban", "Faktory", "RQ",
               "Temporal"]),
    "monitoring": ("Monitoring uses {v}", "what do we use for monitoring in this project",
                   ["Grafana and Prometheus", "Datadog", "New Relic", "Sentry", "Honeycomb", "Zabbix", "Nagios",
                    "Checkly", "Uptime Kuma", "Elastic APM"]),
    "tracker": ("Issues are tracked in {v}", "where are issues tracked for this project",
                ["Linear", "Jira", "GitHub Issues", "YouTrack", "Shortcut", "Trello", "Redmine", "Asana",
                 "Plane", "a shared spreadsheet"]),
    "host": ("The code is hosted on {v}", "where is the code hosted",
             ["GitHub", "GitLab", "Codeberg", "Bitbucket", "Gitea", "SourceHut", "Azure Repos", "AWS CodeCommit",
              "a self-hosted Forgejo", "Launchpad"]),
}
PERSON_FACTS = [  # (category, fact, question)
    ("preference", "Prefers tabs over spaces in every editor", "does the user prefer tabs or spaces"),
    ("preference", "Likes green tea in the morning", "what does the user drink in the morning"),
    ("personal", "Lives in Lisbon near the river", "where does the user live"),
    ("goal", "Wants to run a marathon in 2027", "what sport goal does the user have"),
    ("preference", "Prefers small pull requests over large ones", "what size of pull request does the user like"),
    ("personal", "Has a dog named Pixel", "what is the name of the user's dog"),
    ("preference", "Uses a split ergonomic keyboard", "what keyboard does the user type on"),
    ("goal", "Is learning Japanese for a trip to Kyoto", "which language is the user learning"),
    ("personal", "Works four days a week", "how many days a week does the user work"),
    ("preference", "Reads code reviews in the afternoon only", "when does the user read code reviews"),
    ("interaction", "Wants answers without emojis", "how should answers be formatted for the user"),
    ("preference", "Prefers dark themes in terminals", "which theme does the user like in the terminal"),
    ("personal", "Plays the cello on weekends", "what instrument does the user play"),
    ("goal", "Plans to give a talk at a conference next spring", "what talk does the user plan"),
    ("preference", "Takes notes in plain markdown files", "how does the user take notes"),
    ("personal", "Is allergic to peanuts", "what is the user allergic to"),
    ("interaction", "Likes a short summary before details", "how does the user like explanations structured"),
    ("preference", "Commutes by bicycle", "how does the user get to work"),
    ("goal", "Wants to read one book a month", "what reading goal does the user have"),
    ("personal", "Speaks Portuguese and German", "which languages does the user speak"),
]
NAMES = ["billing", "tax-client", "atlas", "harbor", "lumen", "orchid", "quarry", "sprocket", "tundra", "vellum",
         "wicker", "zephyr"]
TOP = 5


def project_facts(index: int, count: int, rng: random.Random) -> list[tuple[str, str]]:
    """``count`` facts of project ``index``: one per attribute (values rotate, so neighbours differ), then fillers
    in the same words. ``[(attribute or "", text)]``."""
    out = []
    for k, (attr, (words, _question, values)) in enumerate(ATTRIBUTES.items()):
        out.append((attr, words.format(v=values[(index + 3 * k) % len(values)])))
    teams = ["payments", "search", "mobile", "data", "platform", "growth"]
    while len(out) < count:
        n = len(out)
        out.append(("", f"The {rng.choice(teams)} service owns the nightly database and CI job {n}"))
    return out[:count]


def build(home: Path, projects: int, facts: int, person: int, embedder_name: str):
    """The home (its logs written through the capture library's scope rule, then indexed). Returns
    ``(settings, keys, answers {(key, attribute): content}, person [(content, question)])``."""
    from suzent_cli.archive import Fact
    from suzent_cli.capture import scoped, write_facts
    from suzent_cli.config import resolve_settings
    from suzent_cli.index.api import run_index

    settings = resolve_settings(home=home, now="2026-06-20T12:00", env={"SUZENT_EMBEDDER": embedder_name})
    rng = random.Random(26)
    keys = [f"github.com/acme/{NAMES[i % len(NAMES)]}{'' if i < len(NAMES) else i}" for i in range(projects)]
    answers: dict[tuple[str, str], str] = {}
    people = PERSON_FACTS[:person]
    day = 0
    for i, key in enumerate(keys):
        batch = project_facts(i, facts, rng)
        for attr, text in batch:
            if attr:
                answers[(key, attr)] = text
        lines = [Fact(text, "technical") for _, text in batch]
        # the person's facts are said inside projects too: the rule keeps them the person's
        lines += [Fact(text, cat) for cat, text, _ in people[i::projects]]
        rng.shuffle(lines)
        size = max(6, len(lines) // 40)  # entries of six lines (more at scale), a day per project
        for start in range(0, len(lines), size):
            write_facts(settings, scoped(lines[start:start + size], key, "auto"), session=f"s{i}",
                        day=settings.today.replace(day=1 + day % 28), refresh=False)
        day += 1
    run_index(settings)
    return settings, keys, answers, [(text, q) for _, text, q in people]


def measure(settings, keys, answers, people, embedder, mode: str, resident: bool) -> dict:
    from suzent_cli.index.store import ReadStore
    from suzent_cli.recall import Filters, search
    from suzent_cli.scope import PERSON, scopes_for

    store = ReadStore.open(settings.paths.index_dir, embedder.name, embedder.dim)
    if resident:
        assert store.keep_resident(wait=True), "the resident copy was not made"
    out = {"hits": 0, "leaked": 0, "found": 0, "asked": 0, "all_hits": 0, "all_leaked": 0, "all_found": 0,
           "person_found": 0, "person_all_found": 0, "person_asked": 0, "seconds": 0.0, "queries": 0,
           "all_seconds": 0.0, "all_queries": 0}

    def run(query: str, scopes):
        t0 = time.perf_counter()
        hits = search(store, embedder if mode != "fts" else None, query, mode=mode, limit=TOP,
                      today=settings.today, filters=Filters(scopes=scopes))
        kind = "" if scopes is not None else "all_"
        out[kind + "seconds"] += time.perf_counter() - t0
        out[kind + "queries"] += 1
        return hits

    for key in keys:
        own = scopes_for(key)
        for attr, (_words, question, _values) in ATTRIBUTES.items():
            if (key, attr) not in answers:
                continue
            answer = answers[(key, attr)]
            scoped_hits = run(question, own)
            every = run(question, None)
            out["asked"] += 1
            out["hits"] += len(scoped_hits)
            out["leaked"] += sum(h.scope not in (PERSON, key) for h in scoped_hits)
            out["found"] += any(h.content == answer and h.scope == key for h in scoped_hits)
            out["all_hits"] += len(every)
            out["all_leaked"] += sum(h.scope not in (PERSON, key) for h in every)
            out["all_found"] += any(h.content == answer and h.scope == key for h in every)
        for text, question in people:
            out["person_asked"] += 1
            out["person_found"] += any(h.content == text for h in run(question, own))
    for text, question in people:
        out["person_all_found"] += any(h.content == text for h in run(question, None)) * len(keys)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--projects", type=int, default=8, help="K projects (at least 2)")
    parser.add_argument("--facts", type=int, default=30, help="M facts per project (at least 10: one per attribute)")
    parser.add_argument("--person", type=int, default=20, help=f"the person's facts (at most {len(PERSON_FACTS)})")
    parser.add_argument("--extra", type=int, default=0, help="more rows: filler facts per project (latency at scale)")
    parser.add_argument("--model", action="store_true", help="the bundled all-MiniLM-L6-v2 instead of hash:256")
    parser.add_argument("--modes", default="hybrid,fts", help="recall modes, comma-separated (hybrid, fts, vector)")
    args = parser.parse_args()
    if args.projects < 2 or args.facts < len(ATTRIBUTES) or not 0 <= args.person <= len(PERSON_FACTS) \
            or args.extra < 0:
        parser.error(f"argument --projects/--facts/--person: need K ≥ 2, M ≥ {len(ATTRIBUTES)}, "
                     f"0 ≤ person ≤ {len(PERSON_FACTS)}")
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    if not modes or any(m not in ("hybrid", "fts", "vector") for m in modes):
        parser.error("argument --modes: hybrid, fts or vector, comma-separated")
    from suzent_cli.index.embed import load_embedder

    name = "all-MiniLM-L6-v2" if args.model else "hash:256"
    embedder = load_embedder(name)
    with tempfile.TemporaryDirectory(prefix="scope-leak-") as tmp:
        t0 = time.perf_counter()
        settings, keys, answers, people = build(Path(tmp) / "home", args.projects, args.facts + args.extra,
                                                args.person, name)
        built = time.perf_counter() - t0
        print(f"home: {args.projects} projects x {args.facts + args.extra} facts + {len(people)} person facts, "
              f"embedder {name}, "
              f"built and indexed in {built:.1f} s")
        print(f"{'path':9} {'mode':7} {'leak@5 scoped':>14} {'leak@5 all':>11} {'R@5 own scoped':>15} "
              f"{'R@5 own all':>12} {'person R@5 scoped':>18} {'person R@5 all':>15} {'ms scoped':>9} {'ms all':>7}")
        rows = []
        for resident in (False, True):
            for mode in modes:
                r = measure(settings, keys, answers, people, embedder, mode, resident)
                rows.append(r)
                pct = lambda a, b: f"{100 * a / b:.1f}%" if b else "-"  # noqa: E731
                print(f"{'resident' if resident else 'lance':9} {mode:7} "
                      f"{pct(r['leaked'], r['hits']):>14} {pct(r['all_leaked'], r['all_hits']):>11} "
                      f"{pct(r['found'], r['asked']):>15} {pct(r['all_found'], r['asked']):>12} "
                      f"{pct(r['person_found'], r['person_asked']):>18} "
                      f"{pct(r['person_all_found'], r['person_asked']):>15} "
                      f"{1000 * r['seconds'] / max(1, r['queries']):9.1f} "
                      f"{1000 * r['all_seconds'] / max(1, r['all_queries']):7.1f}")
    print("command: python " + " ".join(shlex.quote(a) for a in ["benchmarks/scope_leak.py", *sys.argv[1:]]))
    return 1 if any(r["leaked"] for r in rows) else 0


if __name__ == "__main__":
    raise SystemExit(main())
