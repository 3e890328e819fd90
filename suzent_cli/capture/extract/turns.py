"""Reading a conversation turn or transcript given to ``capture --turn-from``.

Accepted shapes: plain text (taken as the user's words), JSON ``{"user": …, "assistant": …}``, ``{"messages": […]}``,
a JSON list of ``{"role": …, "content": …}`` messages, or the same messages as JSON Lines (records that wrap them as
``{"message": {"role", "content"}}`` are unwrapped), where ``content`` is a string or a list of content blocks (only ``text``
blocks are read; tool calls, tool results and images are not the user's words).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from suzent_cli.errors import InputInvalid
from suzent_cli.text import loads_json, strip_control


@dataclass(frozen=True)
class Message:
    """One message of a turn. Its ``text`` holds no control character that is not whitespace and no bidirectional
    embedding, override or isolate (:func:`suzent_cli.text.strip_control`, the rule :func:`~suzent_cli.text.repair`
    applies to raw input): a JSON string may escape them (``"\\u202e"``, ``"\\u0001"``), and a hook's transcript
    carries them as sent. They are removed here, once, for every extractor, and the text around them is kept: an
    override must never reach a fact (it displays otherwise than it reads), nor cost the words it sits among."""

    role: str  # "user" | "assistant" | other roles kept as given
    text: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "text", strip_control(self.text))


@dataclass(frozen=True)
class Turn:
    """A conversation turn. A user message that quotes someone else (a pasted system prompt, a role-labelled
    transcript, persona text) is split on construction into the roles it quotes (:func:`split_pasted`), so
    ``by("user")`` is only what the user said."""

    messages: tuple[Message, ...]

    def __post_init__(self) -> None:
        split = tuple(part for m in self.messages for part in (split_pasted(m.text) if m.role == "user" else (m,)))
        object.__setattr__(self, "messages", split)

    @classmethod
    def of_split(cls, messages) -> Turn:
        """A turn of messages that are already split (parts of another turn, e.g. its newest part): they are not
        split again, which could read a part differently than the whole."""
        turn = object.__new__(cls)
        object.__setattr__(turn, "messages", tuple(messages))
        return turn

    def by(self, role: str) -> list[str]:
        """The non-blank texts of the messages of ``role``, in order."""
        return [m.text for m in self.messages if m.role == role and m.text.strip()]

    def as_text(self) -> str:
        return "\n\n".join(f"{m.role.upper()}: {m.text}" for m in self.messages if m.text.strip())


# --- what the user said: a pasted prompt or transcript is not the user's words ----------------------------------

# A block that is someone else's text: <system>…</system> and kin, Llama's <<SYS>>…<</SYS>>. Unclosed: to the end.
_BLOCK = re.compile(r"<(?P<tag>system|system[-_ ]?prompt|system-reminder|sys|instructions?|persona|assistant)"
                    r"(?=[\s>])[^>\n]{0,80}>"
                    r"(?P<body>.*?)(?:</(?P=tag)\s*>|\Z)|<<SYS>>(?P<sys>.*?)(?:<</SYS>>|\Z)", re.I | re.S)
_STRAY_CLOSE = re.compile(r"</(?:system|system[-_ ]?prompt|sys|instructions?|persona)\s*>|<</SYS>>", re.I)
_USER_TAG = re.compile(r"</?(?:user|human)\s*>", re.I)
# "USER: …", "**Assistant:** …", "### System:" at the start of a line. Its runs of blanks are possessive ("*+"):
# what follows each (#, *, _, a letter, ":") is never a blank, so giving blanks back can never match (a line of MBs
# of spaces was tried once per blank).
_ROLE_LINE = re.compile(r"^[ \t>]*+(?:#{1,6}[ \t]*+)?[*_]{0,2}(?P<role>user|human|system|developer|assistant|ai|"
                        r"bot|model|chatgpt|claude)[*_]{0,2}[ \t]*+:[*_]{0,2}[ \t]*", re.I | re.M)
_ROLES = {"user": "user", "human": "user", "system": "system", "developer": "system"}  # others: assistant
_TRANSCRIPT_LABELS = ("USER", "HUMAN", "SYSTEM", "ASSISTANT")  # one of these, upper-case, is a transcript alone
# A paragraph that opens by telling a model who it is: "You are a helpful assistant.", "You are Nova, …",
# "Act as a travel agent.", "As an AI language model, …". The whole paragraph is persona text. The opening run of
# blanks, quotes and emphasis is possessive ("*+"): every alternative starts with a letter, so giving characters of
# the run back can never match, and trying it cost ~0.2 s per MB of leading whitespace.
_PERSONA = re.compile(
    r"^[\s\"'*_]*+(?:(?:you are|you're|you will (?:be|act as|play)|act as|pretend (?:to be|you are)|role-?play as|"
    r"behave (?:as|like))\s+(?:an?\s+|the\s+)?(?:[\w'-]+[ \t]+){0,5}?(?:assistant|ai|bot|chatbot|agent|model|llm|"
    r"gpt|persona|character|companion|tutor|coach|expert|specialist|advis[eo]r|helper|narrator|"
    r"(?:travel|customer \w+|support|sales) agent)\b"
    r"|(?-i:You are|You're|YOU ARE) (?-i:[A-Z][\w-]+)\s*,"
    r"|as an? (?:ai|assistant|language model|large language model|chatbot)\b"
    r"|(?:system prompt|system instructions?)\s*:)", re.I)
_PARAGRAPH = re.compile(r"\n[ \t]*\n")


def split_pasted(text: str) -> tuple[Message, ...]:
    """A user message's text as the messages it holds: what the user said (role ``user``) and what they pasted
    from others, which is never their claim about themselves.

    * ``<system>…</system>``, ``<system-prompt>``, ``<instructions>``, ``<persona>``, ``<assistant>`` blocks and
      ``<<SYS>>…<</SYS>>`` are ``system`` (``assistant``) text; an unclosed block runs to the end, and text before
      a stray closing tag is system text too. ``<user>`` tags are dropped, their text kept.
    * Lines labelled ``USER:`` / ``SYSTEM:`` / ``ASSISTANT:`` / ``Human:`` / ``AI:`` … start a message of that
      role, running to the next label, when the text is a transcript: two different roles are labelled, or one
      of USER/HUMAN/SYSTEM/ASSISTANT is written upper-case (``System: Ubuntu 22.04`` alone is the user's words).
    * A paragraph of the user's text that opens with persona text ("You are a helpful assistant …", "You are
      Nova, …", "Act as a …", "As an AI …") is ``system`` text as a whole.

    Text with none of these is returned as one user message, unchanged. Never raises.
    """
    if not any(c in text for c in "<:") and not _PERSONA.search(text):
        return (Message("user", text),)
    parts: list[Message] = []
    for role, chunk in _blocks(text):
        for label, said in (_labelled(chunk) if role == "user" else [(role, chunk)]):
            parts.extend(_persona(said) if label == "user" else [Message(label, said)])
    return tuple(m for m in parts if m.text.strip()) or (Message("user", ""),)


def _blocks(text: str) -> list[tuple[str, str]]:
    """``text`` cut into (role, text): system/assistant blocks out of the user's text."""
    out: list[tuple[str, str]] = []
    closed = [m.end() for m in _STRAY_CLOSE.finditer(_BLOCK.sub(lambda m: " " * len(m.group(0)), text))]
    if closed:  # "…I live in the cloud.</system>": everything before a stray closing tag was inside the block
        out.append(("system", _STRAY_CLOSE.sub("\n", text[:closed[-1]])))
        text = text[closed[-1]:]
    start = 0
    for m in _BLOCK.finditer(text):
        out.append(("user", text[start:m.start()]))
        tag = (m.group("tag") or "system").lower()
        out.append(("assistant" if tag == "assistant" else "system", m.group("body") or m.group("sys") or ""))
        start = m.end()
    out.append(("user", text[start:]))
    return [(role, _USER_TAG.sub("\n", chunk)) for role, chunk in out]


def _labelled(text: str) -> list[tuple[str, str]]:
    """The user's ``text`` cut at role labels when it is a pasted transcript, else ``[("user", text)]``."""
    labels = list(_ROLE_LINE.finditer(text))
    roles = {_ROLES.get(m.group("role").lower(), "assistant") for m in labels}
    if not labels or (len(roles) < 2 and not any(m.group("role") in _TRANSCRIPT_LABELS for m in labels)):
        return [("user", text)]
    out = [("user", text[:labels[0].start()])]
    for m, nxt in zip(labels, [*labels[1:], None], strict=False):
        out.append((_ROLES.get(m.group("role").lower(), "assistant"), text[m.end():nxt.start() if nxt else None]))
    return out


def _persona(text: str) -> list[Message]:
    """The user's ``text`` with each paragraph that opens as persona text made a ``system`` message."""
    runs: list[tuple[str, list[str]]] = []  # consecutive paragraphs of one role, joined once at the end (linear)
    for paragraph in _PARAGRAPH.split(text):
        role = "system" if _PERSONA.match(paragraph) else "user"
        if runs and runs[-1][0] == role:
            runs[-1][1].append(paragraph)
        else:
            runs.append((role, [paragraph]))
    return [Message(role, "\n\n".join(paragraphs)) for role, paragraphs in runs]


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
        return _messages(loads_json(stripped)[0])  # a lone surrogate escape (half an emoji) becomes U+FFFD
    except RecursionError:
        raise InputInvalid("turn JSON is nested too deeply") from None
    except ValueError as exc:
        if stripped.startswith("[") and isinstance(exc, json.JSONDecodeError) and exc.pos <= 1:
            return Turn((Message("user", text),))  # "[Monday] I moved …": text that merely starts with a bracket
        lines = [line for line in stripped.splitlines() if line.strip()]
        if len(lines) > 1 and all(line.lstrip().startswith("{") for line in lines):
            try:
                return _messages([loads_json(line)[0] for line in lines])
            except (ValueError, RecursionError):
                pass
        pos = f" (line {exc.lineno}, column {exc.colno})" if isinstance(exc, json.JSONDecodeError) else ""
        raise InputInvalid(f"turn input looks like JSON but does not parse{pos}: {getattr(exc, 'msg', exc)}") from None
