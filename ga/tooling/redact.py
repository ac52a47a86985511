"""Secrets out of text: the values of ga's own secret environment variables, and strings shaped like keys.

A second line of defence: what the model reads, what the trajectory keeps and what memory learns pass
through `redact`, so a key that reached a tool's output (an env dump, a config file) is not stored or resent.
"""

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
    # PEM, also JSON-escaped: up to 4 header lines (Proc-Type, DEK-Info), then a body that cannot run past `-----`
    r"-----BEGIN [A-Z ]{0,40}PRIVATE KEY-----(?:(?:\r?\n|\\n)[A-Za-z-]{1,32}: [^\n\\]{0,200}){0,4}"
    r"[A-Za-z0-9+/=\s\\]*-----END [A-Z ]{0,40}PRIVATE KEY-----",
))
"""Strings shaped like well-known credentials, redacted wherever they come from. Each pattern starts with a literal
(the regex engine finds those with a fast search; the word boundary is a look-behind after it), and each repeat is
bounded or stops at a character the next part cannot cross: a match costs time linear in the text, whatever it is
(no pattern here may nest quantifiers or start with an unbounded repeat, which is retried from every position)."""
_SHAPE_HINTS = ("sk-", "gh", "github_pat_", "xox", "AKIA", "AIza", "hf_", "PRIVATE KEY")
URL_PASSWORD = re.compile(r"://(?<=[A-Za-z0-9+.-]://)(?P<user>[^/\s:@]+):(?P<password>[^@\s/]+)@")
"""scheme://user:PASSWORD@host: the password part of a URL, found from the literal `://`."""
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
    return URL_PASSWORD.sub(lambda m: f"://{m['user']}:{MARK}@", text) if "://" in text else text


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
    (notices, errors), outbox/ and the GA_NOTIFY payload. A server error that echoes the request's Authorization
    header reaches all of them as the run's answer."""
    if isinstance(value, str):
        return redact(value, secrets)
    if isinstance(value, dict):
        return {k: redact_data(v, secrets) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact_data(v, secrets) for v in value]
    return value
