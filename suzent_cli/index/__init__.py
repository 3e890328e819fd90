"""Tier 3, the search index: LanceDB derived from the daily logs, the vault and the core files.

``store`` is the only module that imports lancedb; ``embed`` the only one that imports sentence-transformers;
``indexer`` is the only writer of the table.
"""
