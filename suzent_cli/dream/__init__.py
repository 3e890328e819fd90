"""The dream: the gated loop that folds the capture buffer (daily logs) into the vault, and lints the vault.

Modules: :mod:`.gate` (the decision), :mod:`.runner` (a tick under the consolidation lock), :mod:`.engine` (what
engines get and return), :mod:`.scopes` (each batch split by scope, one scope folded at a time, the writes checked), :mod:`.rules` and :mod:`.claude_agent` (the engines), :mod:`.vault_tools` (the claude
engine's file tools), :mod:`.lint`, :mod:`.revisit`, :mod:`.values` (the model half of the same-subject test: does a new value stand in for
an older one; the configured embedder, loaded only when a change shares no word with what it replaces). The vault format it writes (pages, claims, ``log.md``, the
``.state/`` files) belongs to :mod:`suzent_cli.vault`; the dream never imports the index's writer (:mod:`.values` reads the index's embedder and yardstick only).
"""
