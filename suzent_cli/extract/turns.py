"""Reading a conversation turn or transcript given to ``capture --turn-from``.

Accepted shapes: plain text (taken as the user's words), JSON ``{"user": …, "assistant": …}``, or a JSON list of
``{"role": …, "content": …}`` messages, where ``content`` is a string or a list of content blocks (only ``text``
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


def parse_turn(text: str) -> Turn:
    """Parse turn input (see module docstring). Plain text that is not JSON is one user message.

    Raises :class:`InputInvalid` for JSON of another shape.
    """
    stripped = text.strip()
    if stripped[:1] in "[{":
        try:
            data = json.loads(stripped)
        except ValueError:
            data = None
        if isinstance(data, dict):
            if "messages" in data and isinstance(data["messages"], list):
                data = data["messages"]
            elif "user" in data or "assistant" in data:
                msgs = [Message(role, _content_text(data.get(role))) for role in ("user", "assistant") if data.get(role)]
                return Turn(tuple(msgs))
            elif "role" in data:
                data = [data]
            else:
                raise InputInvalid('turn JSON must be {"user": …, "assistant": …} or a list of {role, content} messages')
        if isinstance(data, list):
            msgs = []
            for item in data:
                if not isinstance(item, dict) or "role" not in item:
                    raise InputInvalid("each message of a turn list needs a role and content")
                msgs.append(Message(str(item["role"]), _content_text(item.get("content"))))
            return Turn(tuple(msgs))
    return Turn((Message("user", text),))
