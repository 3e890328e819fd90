"""The dream: the gated loop that folds the capture buffer (daily logs) into the vault, and lints the vault.

Modules: :mod:`.gate` (the decision), :mod:`.runner` (a tick under the consolidation lock), :mod:`.ledger`
(``log.md`` and the watermark), :mod:`.state` (``dream_state.json``), :mod:`.engine` (what engines get and
return), :mod:`.rules` and :mod:`.claude_agent` (the engines), :mod:`.lint`, :mod:`.pages` and :mod:`.lifecycle`
(page and claim format), :mod:`.status`.
"""
