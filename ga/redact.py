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

SECRET_NAME = re.compile(r"^(OPENAI|ANTHROPIC|AZURE_OPENAI|AZURE|GEMINI|GROQ|MISTRAL|COHERE|HF|HUGGING_?FACE)_|"
                         r"(^|_)(API_?KEY|KEY|TOKEN|SECRET|ACCESS_KEY|PRIVATE_KEY|CREDENTIALS?|PASS|PAT|DSN|"
                         r"WEBHOOK(_URL)?|AUTH)(_|$)|APIKEY|PASSWORD|PASSWD|SECRET|TOKEN", re.IGNORECASE)
"""Environment variable names whose values are secrets (GH_PAT, SMTP_PASS, MYAPIKEY, SENTRY_DSN...)."""
MIN_SECRET_CHARS = 8
"""Shorter values are not redacted: `x`, `none`, `test` would blank out ordinary text."""
NOT_SECRET = frozenset({"none", "null", "false", "true", "ollama", "changeme", "password", "local"})

SHAPES = re.compile(
    r"\bsk-(?:proj-|ant-)?[A-Za-z0-9_-]{16,}"        # OpenAI, Anthropic
    r"|\bgh[pousr]_[A-Za-z0-9]{20,}|\bgithub_pat_[A-Za-z0-9_]{20,}"  # GitHub
    r"|\bxox[abprs]-[A-Za-z0-9-]{10,}"                # Slack
    r"|\bAKIA[0-9A-Z]{16}\b"                          # AWS access key id
    r"|\bAIza[0-9A-Za-z_-]{30,}"                      # Google
    r"|\bhf_[A-Za-z0-9]{20,}"                         # Hugging Face
    r"|-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----"
)
"""Strings shaped like well-known credentials, redacted wherever they come from."""
_SHAPE_HINTS = ("sk-", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "xox", "AKIA", "AIza", "hf_",
                "PRIVATE KEY")
URL_PASSWORD = re.compile(r"(?P<head>\b[a-z][a-z0-9+.-]{0,30}://[^/\s:@]+:)(?P<password>[^@\s/]+)(?=@)", re.IGNORECASE)
"""scheme://user:PASSWORD@host: the password part of a URL."""
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
    for value in _process_secrets() if secrets is None else secrets:
        if value in text:
            text = text.replace(value, MARK)
    if any(hint in text for hint in _SHAPE_HINTS):  # the regexes cost far more than these scans
        text = SHAPES.sub(MARK, text)
    return URL_PASSWORD.sub(lambda m: m["head"] + MARK, text) if "://" in text else text


def redact_data(value: Any, secrets: tuple[str, ...] | None = None) -> Any:
    """`redact` applied to every string inside JSON-like data (dicts, lists); the structure is kept."""
    if isinstance(value, str):
        return redact(value, secrets)
    if isinstance(value, dict):
        return {k: redact_data(v, secrets) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact_data(v, secrets) for v in value]
    return value
