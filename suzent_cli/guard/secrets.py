"""Secrets in what is captured are redacted in place: ``[redacted: <kind>]`` stands where the value was, and the
rest of the text is kept.

The key shapes come from `detect-secrets <https://github.com/Yelp/detect-secrets>`_ (Yelp's maintained detector):
every regex detector its plugin registry lists (AWS, Azure storage, GitHub, GitLab, Slack, Stripe, Twilio,
SendGrid, npm, PyPI, JWT, private keys, ``scheme://user:password@`` URLs, Discord, Telegram, Mailchimp, Square,
IBM, Cloudant, Artifactory, SoftLayer, OpenAI's legacy keys, and whatever a later release adds), run through
``analyze_string`` only: detect-secrets can also *verify* a key by calling its provider, and that path is never
taken (suzent makes no outbound connection). Its high-entropy detectors are used with a floor of our own (a long
token mixing upper case, lower case and digits; hex alone is a commit hash, not a key), its keyword detector not at
all (it reads source code assignments and fires on prose). What it lacks is added here: OpenAI project and
Anthropic keys (``sk-proj-…``, ``sk-ant-…``), Google API keys (``AIza…``), GitHub fine-grained tokens
(``github_pat_…``), whole PEM private-key blocks (detect-secrets finds the BEGIN line; the block is what must go)
and credentials said in prose ("my password is hunter2", "the door code's 4821", "api key: …").

Cost: importing detect-secrets takes about 0.3 s, 0.2 s of it for ``requests``, which only its verifiers use: it
is imported against a stand-in that refuses every call (:func:`_without_requests`, about 0.1 s left), and only when
the text holds a candidate (:func:`_candidate`: a long token with a digit, a ``://…@`` URL, a ``BEGIN``
line). A fact line without one is screened by a few regexes in microseconds (``benchmarks/guard.py`` measures
both). The candidate test is a superset of every shape above: it only decides whether the library is asked.
"""

from __future__ import annotations

import contextlib
import math
import re
import sys
import threading
import types
from collections import Counter
from functools import cache, lru_cache

PLACEHOLDER = "[redacted: {}]"

# Our own shapes: (kind the placeholder says, a literal every match holds, the pattern). Each is compiled the first
# time a text holds its literal (a capture process of ordinary facts compiles none).
_PEM = (r"-----BEGIN ((?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?)-----.*?(?:-----END \1-----|\Z)", re.S)
_OWN: tuple[tuple[str, str, str], ...] = (
    ("private key", "PRIVATE KEY", _PEM[0]),
    ("jwt", "eyJ", r"(?<![\w-])eyJ[A-Za-z0-9_-]{8,}+\.eyJ[A-Za-z0-9_-]{8,}+\.[A-Za-z0-9_-]*+"),
    ("api key", "sk-", r"(?<![\w-])sk-(?:proj|ant|svcacct|admin|live|test)-[A-Za-z0-9_-]{16,}+"),
    ("api key", "sk-", r"(?<![\w-])sk-[A-Za-z0-9]{32,}+(?![\w-])"),
    ("api key", "AIza", r"(?<![\w-])AIza[0-9A-Za-z_-]{35}(?![\w-])"),
    ("github token", "github_pat_", r"(?<![\w-])github_pat_[A-Za-z0-9_]{22,}+"),
    ("github token", "_", r"(?<![\w-])gh[pousr]_[A-Za-z0-9]{30,}+"),
    ("gitlab token", "glpat-", r"(?<![\w-])glpat-[A-Za-z0-9_-]{20,}+"),
    ("npm token", "npm_", r"(?<![\w-])npm_[A-Za-z0-9]{36}(?![\w-])"),
)
# The password of a URL with credentials, any scheme, an empty user too (redis://:pw@host); detect-secrets' own
# rule wants a user and refuses reserved characters in the password ("Tr0ub4dor&3").
_URL_PASSWORD = r"(?P<head>\b[a-z][a-z0-9+.-]{1,20}://[^\s:/@]{0,256}:)[^\s/@]{1,256}+(?=@)"

# Credentials said in prose: "my password is hunter2", "wifi pw: x", "the door code's 4821", "api key = abc".
# The value is the next token; a word that describes rather than gives one ("is strong", "is in 1Password",
# "was reset") is not a value.
_CREDENTIAL = (r"(?:(?:wi-?fi |admin |root |master |account |login |database |db |email |vpn |router |ssh )?"
               r"(?:password|passphrase|passwd|passcode|pass code|pwd|pw|pass)|pin(?: code| number)?|"
               r"(?:login|sign-?in) (?:password|code)|creds|credentials|"
               r"(?:door|gate|garage|alarm|safe|lock|access|entry|security|building) code|"
               r"(?:api|access|secret|auth|bearer|private|license|licence|client) (?:key|token|secret)|api[_-]?key|"
               r"secret key|auth token|access token|token|client secret|2fa (?:backup )?codes?|recovery codes?|"
               r"seed phrase|cvv|cvc)")
_PROSE_SOURCE = (
    r"\b(?P<what>" + _CREDENTIAL + r"|code\s+(?:for|to)\s+(?:the\s+|my\s+|our\s+)?(?:front\s+|back\s+|main\s+)?"
    r"(?:door|gate|safe|alarm|building|garage|lock|locker|lockbox|key\s*box|storage\s+unit|padlock|bike\s+lock))"
    r"(?:\s+(?:for|to|of|on|at)\s+(?:the\s+|my\s+|our\s+)?[\w-]+(?:\s+[\w-]+)?)?"
    r"(?P<sep>'s\s+|\s+(?:is|was|are|=|:)\s+|\s*[:=]\s*|\s+(?:is now|will be|has been set to|was set to|is set to|"
    r"changed to|was changed to|reads)\s+)"
    r"(?:(?P<q>[\"'`\u201c\u2018])(?P<quoted>[^\"'`\u201d\u2019\n]{1,100})[\"'`\u201d\u2019]"
    r"|(?P<value>[^\s\"'`\u201d\u2019,;]+))")
# A secret assigned in code or a config line: API_KEY=…, TWILIO_AUTH_TOKEN: …, client_secret = "…", db_password=….
# The name must read as code (upper case, or with _ or -), or be followed by "="; the value has a digit or symbol
# or is long.
_ASSIGNED_SOURCE = (
    r"(?<![\w-])(?P<name>[A-Za-z][A-Za-z0-9]*(?:[_-][A-Za-z0-9]+)*)\s*(?P<sep>:=|=|:)\s*"
    r"(?P<q>[\"']?)(?P<value>[^\s\"',;]{6,200})(?P=q)")
_SECRET_NAME = (r"(?:^|[_-])(?:api[_-]?key|apikey|secret|secret[_-]?key|token|auth[_-]?token|access[_-]?token|"
                          r"access[_-]?key|password|passwd|pwd|pass|private[_-]?key|client[_-]?secret|credentials?|"
                          r"auth)$")
_NOT_A_VALUE = frozenset("""
a an the my your our their his her its this that it not no now still also too very really quite pretty so just
stored saved kept managed written set reset changed expired expiring expires rotated strong weak long short
secure insecure safe same different new old easy hard simple complex correct wrong incorrect invalid valid
in on at for from with by to of into under somewhere nowhere written there here missing lost forgotten required
needed optional shared private public fine ok okay good bad great terrible unknown empty blank none nothing
something anything everything encrypted hashed hidden visible generated random complicated long-ish
""".split())


# Compiled on first use, and used only when a word they need is there (_PROSE alone takes 4 ms to compile: the
# capture of an ordinary fact line must not pay it).
_PROSE_WORDS = ("pass", "pw", "pin", "code", "key", "token", "secret", "cred", "cvv", "cvc", "seed", "2fa", "login",
                "sign")


@cache
def _compiled(source: str, flags: int = 0) -> re.Pattern[str]:
    return re.compile(source, flags)


def _entropy(token: str) -> float:
    """Shannon entropy of ``token`` in bits per character."""
    counts = Counter(token)
    return -sum(n / len(token) * math.log2(n / len(token)) for n in counts.values())


# A generic high-entropy token: 32+ characters of the base64/url alphabet with upper case, lower case and digits.
_TOKEN = r"(?<![\w+/=-])[A-Za-z0-9+/_=-]{32,}+(?![\w+/=-])"
_ENTROPY_FLOOR = 4.2


_LONG = re.compile(r"\S{16,}+")


def _candidate(text: str) -> bool:
    """Worth asking detect-secrets: a token of 16+ characters holding a digit, or of 20+ mixing upper and lower
    case, a ``://…:…@`` URL or a BEGIN line (a superset of every shape it knows; linear in ``text``)."""
    if ("://" in text and "@" in text) or "BEGIN" in text:
        return True
    for m in _LONG.finditer(text):
        token = m.group(0)
        if any(c.isdigit() for c in token) or (len(token) >= 20 and not token.islower() and not token.isupper()):
            return True
    return False

# detect-secrets detectors left out: entropy (our own floor above), keywords (source-code assignments: noise in
# prose), public IPs (not secrets).
_SKIPPED_TYPES = frozenset({"Base64 High Entropy String", "Hex High Entropy String", "Secret Keyword",
                            "Public IP (ipv4)"})
_KINDS = {"AWS Access Key": "aws key", "Azure Storage Account access key": "azure key",
          "Basic Auth Credentials": "password", "GitHub Token": "github token", "GitLab Token": "gitlab token",
          "JSON Web Token": "jwt", "OpenAI Token": "api key", "Private Key": "private key",
          "Slack Token": "slack token", "Stripe Access Key": "stripe key", "Twilio API Key": "twilio key",
          "SendGrid API Key": "sendgrid key", "NPM tokens": "npm token", "PyPI Token": "pypi token"}


@lru_cache(maxsize=1)
def _detectors() -> tuple[tuple[str, object], ...]:
    """``(kind, detector)`` for every regex detector of detect-secrets' registry but :data:`_SKIPPED_TYPES`
    (imported on first use, through :func:`_without_requests`; a detector that cannot be built without arguments is
    skipped)."""
    with _without_requests():
        from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class

        mapping = get_mapping_from_secret_type_to_class()
    out = []
    for secret_type, cls in sorted(mapping.items()):
        if secret_type in _SKIPPED_TYPES:
            continue
        try:
            detector = cls()
        except TypeError:  # a plugin that needs settings of its own: not one of the shape detectors
            continue
        out.append((_KINDS.get(secret_type, secret_type.lower().replace(" credentials", "").strip()), detector))
    return tuple(out)


@contextlib.contextmanager
def _without_requests():
    """detect-secrets imports ``requests`` for its verifiers, which call the providers' APIs; suzent never verifies
    (no outbound connection, ever), and ``requests`` is two thirds of its import time (about 0.2 s). In a process
    with one thread (``suzent capture``) that has not imported ``requests``, the library is imported against a
    stand-in whose every call raises ``RequestException`` (so a verifier reached by mistake fails closed, offline);
    the stand-in is taken out of ``sys.modules`` afterwards, so anything importing ``requests`` later gets the real
    one. With other threads running (the server, a hook's worker) the real one is imported: another thread's
    import must never see the stand-in."""
    if "requests" in sys.modules or threading.active_count() > 1:
        yield
        return
    stub, exceptions = types.ModuleType("requests"), types.ModuleType("requests.exceptions")

    class RequestException(Exception):
        """What every call of the stand-in raises."""

    def refuse(*_args, **_kwargs):
        raise RequestException("suzent makes no outbound connection: secrets are never verified")

    exceptions.RequestException = RequestException
    stub.exceptions, stub.RequestException = exceptions, RequestException
    stub.get = stub.post = stub.put = stub.head = stub.request = refuse
    stub.Session = stub.Response = type("Refused", (), {"__init__": refuse})
    sys.modules["requests"], sys.modules["requests.exceptions"] = stub, exceptions
    try:
        yield
    finally:
        for name, module in (("requests", stub), ("requests.exceptions", exceptions)):
            if sys.modules.get(name) is module:
                del sys.modules[name]


def _library_finds(text: str) -> list[tuple[str, str]]:
    """``(kind, value)`` for each secret value detect-secrets' detectors find in ``text`` (never verified)."""
    found: list[tuple[str, str]] = []
    for kind, detector in _detectors():
        try:
            values = list(detector.analyze_string(text))
        except Exception:  # noqa: BLE001 - one detector's bug must not cost the capture; the others still run
            continue
        found.extend((kind, v) for v in values if isinstance(v, str) and len(v) >= 4)
    return found


def redact_blocks(text: str) -> tuple[str, list[str]]:
    """``text`` with each private-key block (it spans lines) replaced by ``[redacted: private key]`` followed by as
    many line breaks as the block had, so every other line keeps its number; and the kinds found. For a text that
    is split into lines before each line is redacted (``capture --facts-from``): a block's lines alone are not all
    recognisable (its short last line, its END line)."""
    kinds: list[str] = []

    def block(m: re.Match[str]) -> str:
        kinds.append("private key")
        return PLACEHOLDER.format("private key") + "\n" * m.group(0).count("\n")

    if "PRIVATE KEY" not in text:
        return text, kinds
    return _compiled(*_PEM).sub(block, text), kinds


def redact(text: str) -> tuple[str, list[str]]:
    """``text`` with every secret found replaced by ``[redacted: <kind>]`` and the kinds found, in order of the
    passes (one per value replaced; ``(text, [])`` when none). Kinds: ``api key``, ``aws key``, ``github token``,
    ``password``, ``code``, ``secret``, ``private key``, ``jwt``, ``token``, ``slack token``, … Idempotent: a
    placeholder is never redacted again. Multi-line text is fine (a private-key block spans lines). Linear in the
    text's length. Never raises.

    Passes, in order: our shapes (PEM blocks, sk-proj/sk-ant, AIza, github_pat, glpat, npm), a URL's password,
    ``NAME=value`` assignments whose name says secret, detect-secrets' detectors and the high-entropy floor (only
    when :func:`_candidate`), then credentials said in prose."""
    kinds: list[str] = []
    for kind, literal, source in _OWN:
        if literal in text:
            flags = _PEM[1] if source is _PEM[0] else 0
            text, n = _compiled(source, flags).subn(lambda _m, k=kind: PLACEHOLDER.format(k), text)
            kinds.extend([kind] * n)
    if "://" in text:
        text, n = _compiled(_URL_PASSWORD, re.I).subn(lambda m: m.group("head") + PLACEHOLDER.format("password"),
                                                      text)
        kinds.extend(["password"] * n)

    def assigned(m: re.Match[str]) -> str:
        name, value = m.group("name"), m.group("value")
        said = _compiled(_SECRET_NAME, re.I).search(name)
        code_like = name.isupper() or "_" in name or "-" in name or m.group("sep") != ":"
        if not (said and code_like) or value.startswith("[redacted") or value.lower() in _NOT_A_VALUE:
            return m.group(0)
        if not (any(not c.isalpha() for c in value) or len(value) >= 16):
            return m.group(0)
        kind = _kind_of(said.group(0).strip("_-").replace("_", " ").replace("-", " "))
        kinds.append(kind)
        return m.group(0)[: m.start("value") - m.start()] + PLACEHOLDER.format(kind) + m.group("q")

    if "=" in text or ":" in text:
        text = _compiled(_ASSIGNED_SOURCE).sub(assigned, text)
    if _candidate(text):
        for kind, value in sorted(set(_library_finds(text)), key=lambda kv: -len(kv[1])):
            if "[redacted: " in value:
                continue
            # the whole token the value starts: a shape that matches a fixed length (Stripe's 24 characters)
            # must not leave the key's tail behind
            text, n = re.subn(re.escape(value) + r"[A-Za-z0-9_+/=-]*+", lambda _m, k=kind: PLACEHOLDER.format(k),
                              text)
            kinds.extend([kind] * n)

        def token(m: re.Match[str]) -> str:
            if not _high_entropy(m.group(0)):
                return m.group(0)
            kinds.append("token")
            return PLACEHOLDER.format("token")

        text = _compiled(_TOKEN).sub(token, text)

    def prose(m: re.Match[str]) -> str:
        kind = _kind_of(m.group("what"))
        if m.group("quoted") is not None:  # a quoted value may hold spaces: "blue whale on a bicycle"
            quoted = m.group("quoted")
            if quoted.startswith("[redacted") or quoted.strip().lower() in _NOT_A_VALUE:
                return m.group(0)
            kinds.append(kind)
            return m.group(0)[: m.start("quoted") - m.start()] + PLACEHOLDER.format(kind) + m.group(0)[-1]
        value = m.group("value")
        bare = value.rstrip(".!?)")
        if not bare or bare.lower() in _NOT_A_VALUE or value.startswith("[redacted") or not _plausible(kind, bare):
            return m.group(0)
        kinds.append(kind)
        return m.group(0)[: m.start("value") - m.start()] + PLACEHOLDER.format(kind) + value[len(bare):]

    lowered = text.lower()
    if not any(word in lowered for word in _PROSE_WORDS):
        return text, kinds
    return _compiled(_PROSE_SOURCE, re.I).sub(prose, text), kinds


def _high_entropy(token: str) -> bool:
    """A random-looking key: upper case, lower case and digits all present, and entropy above the floor."""
    return (any(c.isupper() for c in token) and any(c.islower() for c in token) and any(c.isdigit() for c in token)
            and _entropy(token) >= _ENTROPY_FLOOR)


def _plausible(kind: str, value: str) -> bool:
    """Could ``value`` be the credential of ``kind`` named before it? A code holds a digit ("the pin on your bag is
    cute" gives none); a key or token is 8+ characters with a digit or a symbol, or holds a digit; a password is any
    word but the ones that describe rather than give one (:data:`_NOT_A_VALUE`)."""
    if kind in ("code", "recovery code"):
        return any(c.isdigit() for c in value)
    if kind in ("api key", "token"):
        return (len(value) >= 6 and any(not c.isalpha() for c in value)) or len(value) >= 16
    return True


def _kind_of(what: str) -> str:
    """The placeholder's kind for a credential named in prose (``password``, ``code``, ``api key``, …)."""
    w = what.lower()
    if "seed" in w or "recovery" in w or "2fa" in w:
        return "recovery code"
    if "code" in w or w.startswith("pin") or w in ("cvv", "cvc"):
        return "code"
    if "pass" in w or w.split()[-1] in ("pw", "pwd") or "cred" in w:
        return "password"
    if "key" in w:
        return "api key"
    return "secret" if "secret" in w else "token"


def has_secret(text: str) -> bool:
    """True when :func:`redact` would change ``text``."""
    return bool(redact(text)[1])


def describe(kinds: list[str]) -> str:
    """``"2 secrets (api key, password)"``: the kinds :func:`redact` found, for a warning."""
    counted = Counter(kinds)
    names = ", ".join(k if n == 1 else f"{n} × {k}" for k, n in counted.items())
    return f"{len(kinds)} secret{'s' if len(kinds) != 1 else ''} ({names})"
