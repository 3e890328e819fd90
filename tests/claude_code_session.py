"""A Claude Code session as the hooks see it, for the hook tests (tests/test_claude_code.py and
tests/integration/test_claude_code_process.py): a transcript writer shaped like Claude Code's JSON Lines, the hook
payloads (Stop/PreCompact/SessionEnd and UserPromptSubmit), and readers of what a capture left in a home."""

from __future__ import annotations

import json
from pathlib import Path

DAY = "2026-06-01"
SID = "5c9e2b7a-3f41-4d8e-9b6a-0e1f2a3b4c5d"


class Transcript:
    """Writes a Claude Code session transcript (JSON Lines), one record per call, like Claude Code does."""

    def __init__(self, path: Path, session: str = SID, copy_of: Transcript | None = None):
        self.path, self.session = path, session
        self.n, self.second, self.parent = (copy_of.n, copy_of.second, copy_of.parent) if copy_of else (0, 0, None)
        path.write_text(copy_of.path.read_text(encoding="utf-8") if copy_of else "", encoding="utf-8")

    def _ts(self) -> str:
        self.second += 1
        return f"{DAY}T{9 + self.second // 3600:02d}:{self.second // 60 % 60:02d}:{self.second % 60:02d}.{self.n % 1000:03d}Z"

    def raw(self, line: str) -> None:
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write(line + "\n")

    def record(self, kind: str, content, *, sidechain: bool = False, **extra) -> str:
        self.n += 1
        uid = f"{self.session[:4]}-{self.n:05d}-uuid"
        message = {"role": kind, "content": content}
        if kind == "assistant":
            message = {"id": f"msg_{self.n}", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
                       "content": content, "stop_reason": None, "usage": {"input_tokens": 4, "output_tokens": 9}}
        rec = {"parentUuid": self.parent, "isSidechain": sidechain, "userType": "external", "cwd": "/work/proj",
               "sessionId": self.session, "version": "2.0.14", "gitBranch": "main", "type": kind,
               "message": message, "uuid": uid, "timestamp": self._ts(), **extra}
        if not sidechain:
            self.parent = uid
        self.raw(json.dumps(rec))
        return uid

    def user(self, text, **extra) -> str:
        return self.record("user", text, **extra)

    def assistant(self, *blocks, **extra) -> str:
        return self.record("assistant", [b if isinstance(b, dict) else {"type": "text", "text": b} for b in blocks],
                           **extra)

    def tool_round(self, name: str = "Bash", result: str = "ok") -> None:
        """An assistant tool call and the user-role tool_result that continues the turn."""
        tid = f"toolu_{self.n:04d}"
        self.assistant({"type": "tool_use", "id": tid, "name": name, "input": {"command": "pytest -q"}})
        self.record("user", [{"tool_use_id": tid, "type": "tool_result", "content": result, "is_error": False}],
                    toolUseResult={"stdout": result, "stderr": "", "interrupted": False})

    def turn(self, said: str, answer: str = "Done.") -> None:
        self.user(said)
        self.assistant({"type": "thinking", "thinking": "let me think", "signature": "sig"})
        self.assistant("On it.", {"type": "tool_use", "id": f"toolu_x{self.n}", "name": "Read", "input": {}})
        self.record("user", [{"tool_use_id": f"toolu_x{self.n - 1}", "type": "tool_result", "content": "file body"}])
        self.assistant(answer)


def payload(transcript: Path, event: str = "Stop", session: str = SID, **extra) -> str:
    data = {"session_id": session, "transcript_path": str(transcript), "cwd": "/",
            "hook_event_name": event, "permission_mode": "default", **extra}
    if event == "Stop":
        data.setdefault("stop_hook_active", False)
    return json.dumps(data)


def facts(home: Path, day: str = DAY) -> list[str]:
    log = home / "sandbox" / "shared" / "memory" / "archive" / f"{day}.md"
    return [ln for ln in log.read_text(encoding="utf-8").splitlines() if ln.startswith("- [")] if log.exists() else []


def state_dir(home: Path) -> Path:
    return home / "notebook" / ".state"


def spooled(home: Path) -> list[str]:
    d = state_dir(home) / "spool"
    return sorted(p.name for p in d.glob("*.json")) if d.is_dir() else []


def failed(home: Path) -> list[str]:
    d = state_dir(home) / "spool" / "failed"
    return sorted(p.name for p in d.iterdir()) if d.is_dir() else []


def prompt(text: str) -> str:
    return json.dumps({"session_id": SID, "transcript_path": "/tmp/t.jsonl", "cwd": "/",
                       "permission_mode": "default", "hook_event_name": "UserPromptSubmit", "prompt": text})


def indexed_recall_home(home: Path) -> Path:
    """``home`` with three facts captured on :data:`DAY` and indexed with the hash embedder, for the recall hook."""
    from conftest import invoke

    env = {"SUZENT_EMBEDDER": "hash:64"}
    r = invoke(home, "--now", DAY, "capture", "--fact", "[preference] Prefers green tea in the morning",
               "--fact", "[personal] Lives in Lisbon", "--fact", "[technical] Uses neovim as editor with the gruvbox theme",
               env_extra=env)
    assert r.returncode == 0, r.stderr
    r = invoke(home, "index", env_extra=env)
    assert r.returncode == 0, r.stderr
    return home
