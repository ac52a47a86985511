"""Secrets out of text: env values by name, passwords in URLs, key-shaped strings."""

from __future__ import annotations

from ga.redact import MARK, redact, secret_values


def test_secret_named_values_and_url_passwords_are_found():
    env = {"OPENAI_API_KEY": "sk-live-0123456789abcdef", "GH_PAT": "abcdefgh12345678", "SMTP_PASS": "hunter2hunter2",
           "MYAPIKEY": "k" * 12, "SENTRY_DSN": "https://pub1234567@o1.ingest.sentry.io/5",
           "DATABASE_URL": "postgres://app:Pa55w0rd!@db:5432/app", "SLACK_WEBHOOK_URL": "https://hooks.slack.com/T/B/XYZ",
           "HOME": "/root", "TOKENIZERS_PARALLELISM": "false", "GA_MODEL": "qwen", "OPENAI_BASE_URL": "none"}
    values = secret_values(env)
    for name in ("OPENAI_API_KEY", "GH_PAT", "SMTP_PASS", "MYAPIKEY", "SENTRY_DSN", "SLACK_WEBHOOK_URL"):
        assert env[name] in values, name
    assert "Pa55w0rd!" in values
    assert "/root" not in values and "false" not in values and "qwen" not in values


def test_redact_replaces_values_shapes_and_url_passwords():
    secrets = ("s3cr3t-value-123",)
    text = ("key=s3cr3t-value-123 openai=sk-proj-ABCDEFGHIJKLMNOPQRSTUV gh=ghp_abcdefghijklmnopqrstuvwx "
            "aws=AKIAABCDEFGHIJKLMNOP url=https://bob:hunter22@example.com/x keep=hello")
    out = redact(text, secrets)
    assert "s3cr3t" not in out and "sk-proj" not in out and "ghp_" not in out and "AKIA" not in out
    assert "hunter22" not in out and "https://bob:" + MARK + "@example.com/x" in out and "keep=hello" in out
    pem = "-----BEGIN RSA PRIVATE KEY-----\nMIIabc\n-----END RSA PRIVATE KEY-----"
    assert redact(f"a {pem} b", ()) == f"a {MARK} b"
    assert redact("", ()) == "" and redact("plain text", ()) == "plain text"
