"""Secrets out of text: the values of ga's own secret environment variables, and strings shaped like keys.

A second line of defence: what the model reads, what the trajectory keeps and what memory learns pass
through `redact`, so a key that reached a tool's output (an env dump, a config file) is not stored or resent."""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

import ahocorasick

SECRET_NAME = re.compile(r"(^|_)(API_?KEY|KEY|TOKEN|SECRET|ACCESS_KEY|PRIVATE_KEY|CREDENTIALS?|PASS|PAT|DSN|"
                         r"WEBHOOK(_URL)?|AUTH)(_|$)|APIKEY|PASSWORD|PASSWD|SECRET|TOKEN", re.IGNORECASE)
"""Environment variable names whose values are secrets (OPENAI_API_KEY, GH_PAT, SMTP_PASS, MYAPIKEY, SENTRY_DSN...),
by what they hold, not whose they are: OPENAI_BASE_URL or GA_MODEL are settings a user must see in messages."""
MIN_SECRET_CHARS = 8
"""Shorter values are not redacted: `x`, `none`, `test` would blank out ordinary text."""
NOT_SECRET = frozenset({"none", "null", "false", "true", "ollama", "changeme", "password", "local"})

SHAPES = tuple(re.compile(p) for p in (
    r"sk-(?<!\wsk-)(?:proj-|ant-)?[A-Za-z0-9_-]{16,}",          # OpenAI, Anthropic
    r"gh(?<!\wgh)[pousr]_[A-Za-z0-9]{20,}", r"github_pat_(?<!\wgithub_pat_)[A-Za-z0-9_]{20,}",  # GitHub
    r"xox(?<!\wxox)[abprs]-[A-Za-z0-9-]{10,}",                    # Slack
    r"AKIA(?<!\wAKIA)[0-9A-Z]{16}\b",                             # AWS access key id
    r"AIza(?<!\wAIza)[0-9A-Za-z_-]{30,}",                         # Google
    r"hf_(?<!\whf_)[A-Za-z0-9]{20,}",                             # Hugging Face
    # PEM, also JSON-escaped or numbered as file_read shows it (`2|MIIE...`): up to 4 header lines (Proc-Type,
    # DEK-Info), then a body that cannot run past `-----`; a key cut off before its END line goes too
    r"-----BEGIN [A-Z ]{0,40}PRIVATE KEY-----(?:(?:\r?\n|\\n)(?:\d{1,9}\|)?[A-Za-z-]{1,32}: [^\n\\]{0,200}){0,4}"
    r"(?:[A-Za-z0-9+/=\s\\|]*(?:-----END [A-Z ]{0,40}PRIVATE KEY-----|[A-Za-z0-9+/=\\|]))?",
))
"""Strings shaped like well-known credentials, redacted wherever they come from. Each pattern starts with a literal
(the regex engine finds those with a fast search; the word boundary is a look-behind after it), and each repeat is
bounded or stops at a character the next part cannot cross: a match costs time linear in the text, whatever it is
(no pattern here may nest quantifiers or start with an unbounded repeat, which is retried from every position)."""
_SHAPE_HINTS = ("sk-", "gh", "github_pat_", "xox", "AKIA", "AIza", "hf_", "PRIVATE KEY")
URL_PASSWORD = re.compile(r"://(?<=[A-Za-z0-9+.-]://)(?P<user>[^/\s:@]+):(?P<password>[^@\s/]+)@")
"""scheme://user:PASSWORD@host: the password part of a URL, found from the literal `://`."""
_KEY_TO_VALUE = (r"(?=(?P<rest>[\w.-]{0,32}))(?P=rest)"
                 r"""["']?[ \t]{0,8}[:=][ \t]{0,8}(?:(?:bearer|basic|token)[ \t]{1,8})?"""
                 r"""(?:(?P<quote>["'])(?=(?P<quoted>[^"'\n\\]{0,512}))(?P=quoted)"""
                 r"""|(?=(?P<bare>[^\s"'`<>,;()\[\]{}]{0,512}))(?P=bare))""")
KEY_VALUES = tuple(re.compile(key + _KEY_TO_VALUE) for key in (
    r"passw(?:or)?d", r"secret(?!ar)", r"token(?!s|iz)", r"auth(?:orization)?(?![\w.-])"))
"""A secret-named key and its value, found in lowercase text: `DB_PASSWORD=...`, `client_secret: ...`, `"auth": "..."`
(docker's config.json), `Authorization: Bearer ...`; not `max_tokens`, `tokenizer`, `author` nor `secretary`. One
pattern per keyword: each starts with a literal, which the regex engine finds with a fast search (an alternation is
tried at every position, several times slower on everyday text). Each run is taken whole inside a lookahead (atomic:
never given back), so no part of the text is tried twice; whether the value is one is decided after (_value)."""
VALUE_ENDS = frozenset(" \t\r\n,;}]")
"""What may follow a bare value: it is a whole word (`token = tokenizer.encode(x)` is code, not a secret)."""
NETRC = re.compile(r"machine[ \t]{1,64}\S{1,256}(?:\s{1,64}(?:login|account|port)[ \t]{1,64}\S{1,256}){0,3}"
                   r"\s{1,64}password[ \t]{1,64}(?P<bare>\S{1,256})")
"""A .netrc entry's password (`machine HOST login USER password VALUE`, on one line or several)."""
PLACEHOLDER = re.compile(r"[$%{<\[(*]|os\.|env\.|process\.env|getenv|\.\.\.|xxx|your[_-]", re.IGNORECASE)
"""How a value that is not a secret starts: `$TOKEN`, `${...}`, `os.environ[...]`, `xxxx`, `your-key-here`."""
_NOT_VALUES = NOT_SECRET | {"bearer", "basic", "token", "secret", "string", "required", "optional", "hidden"}
_NOT_A_VALUE = re.compile(rf"{PLACEHOLDER.pattern}|\d+\Z|[a-z_]\w*(?:\.[a-z_]\w*)+\Z", re.IGNORECASE)
"""A placeholder, a number, or a name in code (`config.password`, `self.token`): not the secret itself."""
MARK = "[REDACTED]"


def secret_values(environ: Mapping[str, str]) -> tuple[str, ...]:
    """The values worth hiding: those of secret-named variables, and passwords inside URL-valued variables."""
    found: set[str] = set()
    for name, raw in environ.items():
        value = raw.strip()
        if SECRET_NAME.search(name) and len(value) >= MIN_SECRET_CHARS and value.lower() not in NOT_SECRET:
            found.add(value)
        if "://" in value:
            try:
                password = urlsplit(value).password
            except ValueError:
                password = None
            if password and len(password) >= 4:
                found.add(password)
    return tuple(sorted(found, key=len, reverse=True))  # longest first: a value holding another goes whole


@functools.lru_cache(maxsize=1)
def _process_secrets() -> tuple[str, ...]:
    return secret_values(os.environ)


def redact(text: str, secrets: tuple[str, ...] | None = None) -> str:
    """`text` with secret values (default: those of this process's environment) and key-shaped strings replaced."""
    if not text:
        return text
    text = _replace_values(text, _process_secrets() if secrets is None else secrets)
    for pattern, hint in zip(SHAPES, _SHAPE_HINTS, strict=True):
        if hint in text:  # a scan far cheaper than the pattern's
            text = pattern.sub(MARK, text)
    text = _key_values(text)
    return URL_PASSWORD.sub(lambda m: f"://{m['user']}:{MARK}@", text) if "://" in text else text


def _key_values(text: str) -> str:
    """`text` with the values of secret-named keys (a quoted one of 4 characters or more, up to its quote; a bare
    one of 6 or more that is a whole word) and .netrc passwords replaced."""
    # a case-insensitive pattern is tried at every position, a lowercase one skips ahead; İ, the one character that
    # lowers to two, becomes i first, so that positions agree
    lowered = text.replace("\u0130", "i").lower()
    patterns = [*(KEY_VALUES if "=" in text or ":" in text else ()), *((NETRC,) if "machine" in lowered else ())]
    spans = sorted(span for pattern in patterns for m in pattern.finditer(lowered) if (span := _value(m, lowered)))
    parts, done = [], 0
    for start, end in spans:
        if start >= done and _is_value(text[start:end]):
            parts += (text[done:start], MARK)
            done = end
    return "".join([*parts, text[done:]]) if parts else text


def _value(m: re.Match, lowered: str) -> tuple[int, int] | None:
    """The span of the value a match ends with, when it is one: quoted up to its quote, or a whole bare word."""
    start, end = m.span(m.lastgroup)  # "quoted" or "bare", the group that closed last
    if m.lastgroup == "quoted":
        return (start, end) if lowered[end:end + 1] == m["quote"] and end - start >= 4 else None
    return (start, end) if end - start >= 6 and (end == len(lowered) or lowered[end] in VALUE_ENDS) else None


def _is_value(value: str) -> bool:
    lowered = value.lower()  # one pattern for the rest: this runs once per key-value pair found
    return lowered not in _NOT_VALUES and "redacted" not in lowered and "://" not in value \
        and not _NOT_A_VALUE.match(value)


def _replace_values(text: str, secrets: tuple[str, ...]) -> str:
    """Every occurrence of every value in one pass (Aho-Corasick, leftmost-longest): a run that saw thousands of
    secret values (a dump of `password=...` lines) costs no more per character than one that saw two."""
    matcher = _matcher(secrets) if secrets else None
    if matcher is None:
        return text
    parts, done = [], 0
    for end, length in matcher.iter_long(text):
        parts += (text[done:end - length + 1], MARK)
        done = end + 1
    return "".join([*parts, text[done:]]) if parts else text


@functools.lru_cache(maxsize=8)
def _matcher(secrets: tuple[str, ...]) -> ahocorasick.Automaton | None:
    automaton = ahocorasick.Automaton()
    for value in filter(None, secrets):
        automaton.add_word(value, len(value))
    if not len(automaton):
        return None
    automaton.make_automaton()
    return automaton


def redact_data(value: Any, secrets: tuple[str, ...] | None = None) -> Any:
    """`redact` applied to every string inside JSON-like data (dicts, lists); the structure is kept.

    The one step in front of every way out of ga, too: the run folder, stdout (--json, --jsonl, the answer), stderr
    (notices, errors), outbox/ and the GA_NOTIFY payload (a server error may echo the request's Authorization)."""
    if isinstance(value, str):
        return redact(value, secrets)
    if isinstance(value, dict):
        return {k: redact_data(v, secrets) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact_data(v, secrets) for v in value]
    return value
