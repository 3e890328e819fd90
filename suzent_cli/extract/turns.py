"""Reading a conversation turn or transcript given to ``capture --turn-from``.

Accepted shapes: plain text (taken as the user's words), JSON ``{"user": …, "assistant": …}``, ``{"messages": […]}``,
a JSON list of ``{"role": …, "content": …}`` messages, or the same messages as JSON Lines (records that wrap them as
``{"message": {"role", "content"}}`` are unwrapped), where ``content`` is a string or a list of content blocks (only ``text``
blocks are read; tool calls, tool results and images are not the user's words).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from ..errors import InputInvalid


@dataclass(frozen=True)
class Message:
    role: str  # "user" | "assistant" | other roles kept as given
    text: str


@dataclass(frozen=True)
class Turn:
    messages: tuple[Message, ...]

    def by(self, role: str) -> list[str]:
        return [m.text for m in self.messages if m.role == role and m.text.strip()]

    def as_text(self) -> str:
        return "\n\n".join(f"{m.role.upper()}: {m.text}" for m in self.messages if m.text.strip())


def _content_text(content) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
                parts.append(block["text"])
        return "\n".join(parts)
    if isinstance(content, dict) and isinstance(content.get("text"), str):
        return content["text"]
    return ""


def _message(item: object, where: str) -> Message:
    if isinstance(item, dict) and isinstance(item.get("message"), dict) and "role" in item["message"]:
        item = item["message"]  # a transcript record wrapping its message
    if not isinstance(item, dict) or "role" not in item:
        raise InputInvalid(f"{where}: each message of a turn needs a role and content")
    return Message(str(item["role"]), _content_text(item.get("content")))


def _messages(data: object) -> Turn:
    if isinstance(data, dict):
        if isinstance(data.get("messages"), list):
            data = data["messages"]
        elif "user" in data or "assistant" in data:
            return Turn(tuple(Message(role, _content_text(data.get(role))) for role in ("user", "assistant")
                              if data.get(role)))
        elif "role" in data or "message" in data:
            data = [data]
        else:
            raise InputInvalid('turn JSON must be {"user": …, "assistant": …}, {"messages": […]} or a list of '
                               "{role, content} messages")
    if isinstance(data, list):
        return Turn(tuple(_message(item, f"message {i + 1}") for i, item in enumerate(data)))
    raise InputInvalid("turn JSON must be an object or a list of messages")


def parse_turn(text: str) -> Turn:
    """Parse turn input: plain text (one user message), a JSON object or list (see module docstring), or JSON
    Lines with one message per line. Input that starts like JSON but does not parse is an error, never silently
    taken as text: a hook that sends a broken payload must hear about it.

    Raises :class:`InputInvalid` with the position of the first JSON error.
    """
    stripped = text.lstrip("\ufeff").strip()
    if stripped[:1] not in ("[", "{"):
        return Turn((Message("user", text),))
    try:
        return _messages(json.loads(stripped))
    except RecursionError:
        raise InputInvalid("turn JSON is nested too deeply") from None
    except ValueError as exc:
        if stripped.startswith("[") and isinstance(exc, json.JSONDecodeError) and exc.pos <= 1:
            return Turn((Message("user", text),))  # "[Monday] I moved …": text that merely starts with a bracket
        lines = [line for line in stripped.splitlines() if line.strip()]
        if len(lines) > 1 and all(line.lstrip().startswith("{") for line in lines):
            try:
                return _messages([json.loads(line) for line in lines])
            except (ValueError, RecursionError):
                pass
        pos = f" (line {exc.lineno}, column {exc.colno})" if isinstance(exc, json.JSONDecodeError) else ""
        raise InputInvalid(f"turn input looks like JSON but does not parse{pos}: {getattr(exc, 'msg', exc)}") from None
