"""suzent: long-term memory for AI agents.

Three tiers, data flowing one way: the capture buffer (append-only daily logs), the knowledge
base (a markdown vault written by the dream) and the search index (LanceDB, derived from both,
written only by :mod:`suzent_cli.index.indexer`).
"""

__version__ = "0.1.0"
