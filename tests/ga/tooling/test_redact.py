"""Secrets out of text: env values by name, passwords in URLs, key-shaped strings."""

from __future__ import annotations

import re

import pytest

from ga.tooling.redact import KEY_VALUES, MARK, NETRC, SHAPES, URL_PASSWORD, redact, secret_values
from memory.guard import ASSIGNED, KEYWORD, PLACEHOLDER, RUN_TAG

try:  # the parser's home since 3.11, sre_parse before
    from re import _constants as sre
    from re import _parser as sre_parse
except ImportError:
    import sre_constants as sre
    import sre_parse


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


def test_settings_of_a_provider_are_not_secrets_but_its_keys_are():
    env = {"OPENAI_BASE_URL": "http://127.0.0.1:8080/v1", "OPENAI_MODEL": "gpt-4o-mini-2024",
           "AZURE_OPENAI_ENDPOINT": "https://team.openai.azure.com", "AZURE_OPENAI_KEY": "0123456789abcdef",
           "HF_TOKEN": "abcdefgh12345678", "GEMINI_API_KEY": "gemini-0123456789"}
    values = secret_values(env)
    assert set(values) == {"0123456789abcdef", "abcdefgh12345678", "gemini-0123456789"}
    assert redact("Cannot reach http://127.0.0.1:8080/v1", values) == "Cannot reach http://127.0.0.1:8080/v1"


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


def test_a_private_key_as_file_read_numbers_it_is_redacted_whole_or_cut():
    key = ("-----BEGIN OPENSSH PRIVATE KEY-----", "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAA",
           "QyNTUxOQAAACCv7yoTq3SVsC0p3S8R1Gf0xkTYRUL7GcVy5v2qUvY0dQAAAJgAAAAA", "-----END OPENSSH PRIVATE KEY-----")
    numbered = "\n".join(f"{n}|{line}" for n, line in enumerate(key, 1)) + "\n[lines 1-4 of 4; end of file]"
    assert redact(numbered, ()) == f"1|{MARK}\n[lines 1-4 of 4; end of file]"
    cut = "\n".join(f"{n}|{line}" for n, line in enumerate(key[:2], 1)) + "\n[lines 1-2 of 4; continue with start=3]"
    assert redact(cut, ()) == f"1|{MARK}\n[lines 1-2 of 4; continue with start=3]"


def test_secret_named_key_value_lines_are_redacted():
    text = ("[default]\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\nDB_PASSWORD=hunter2hunter2\n"
            "password: 'abc12345'\n  client_secret: s3cr3t-v4lue\n"
            "{\"token\": \"tok-1234567\", \"passwd\": \"pa55word\"}\n"
            '{"auths": {"https://index.docker.io/v1/": {"auth": "ZG9ja2VyOmh1bnRlcjI="}}}\n'
            "Authorization: Bearer abcdef123456\nnpm: //registry.npmjs.org/:_authToken=npm-0123456789\n"
            "machine api.example.com\n  login bob\n  password netrc-pw-1\nmachine h login u password pw-two-22\n")
    out = redact(text, ())
    for value in ("wJalrXUtnFEMI", "hunter2hunter2", "abc12345", "s3cr3t-v4lue", "tok-1234567", "pa55word",
                  "ZG9ja2Vy", "abcdef123456", "npm-0123456789", "netrc-pw-1", "pw-two-22"):
        assert value not in out, value
    assert out.count(MARK) == 11 and "aws_secret_access_key = [REDACTED]\n" in out and "login bob" in out


def test_what_only_looks_like_a_secret_assignment_is_left_alone():
    text = ("max_tokens = 128000\n\"prompt_tokens\": 123456, tokenizer = AutoTokenizer\ntoken = tokenizer.encode(x)\n"
            "password = config.password\nsecret = os.environ['SECRET']\nsecret: ${SECRET}\nauthor = \"Jane Doe\"\n"
            "secretary = 'Jane Smith'\npassword = None\ntoken_url = https://auth.example.com/token\n"
            '"password": {"type": "string"}\nthe password is in the vault\n')
    assert redact(text, ()) == text


# Adversarial text: each made the earlier patterns scan the same run once per starting point (minutes or hours).
# These check the results; bench/perf/redact_bench.py measures the time at 1 and 20 MB.
PEM = "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,0A1B\n\nMIIEpA+/=\n" \
      "-----END RSA PRIVATE KEY-----"


def test_pem_keys_cut_before_their_end_line_go_too_one_by_one():
    openers = "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\n" * 20_000  # as a file_read window cut short shows
    assert redact(openers, ()) == f"{MARK}\n" * 20_000
    assert redact(openers + PEM + " tail", ()) == f"{MARK}\n" * 20_000 + MARK + " tail"
    escaped = PEM.replace("\n", "\\n")  # as a JSON file shows it
    assert redact(f'"key": "{escaped}"', ()) == f'"key": "{MARK}"'


def test_url_passwords_and_key_shapes_in_long_runs():
    assert redact("https://user:" + "p:" * 200_000, ()) == "https://user:" + "p:" * 200_000  # no @: no password
    assert redact("x" * 300_000 + " https://bob:hunter22@h/", ()) == "x" * 300_000 + f" https://bob:{MARK}@h/"
    assert redact("sk-" * 100_000, ()) == MARK


def test_thousands_of_secret_values_are_all_replaced_in_one_pass():
    values = tuple(sorted((f"v{i:09d}" for i in range(50_000)), key=len, reverse=True))
    text = "".join(f"seen {v} here\n" for v in values)
    assert redact(text, values) == f"seen {MARK} here\n" * 50_000
    assert redact("xabcdefghx abcd", ("abcd", "abcdefgh")) == f"x{MARK}x {MARK}"  # the longest at each place


PATTERNS = [*SHAPES, URL_PASSWORD, *KEY_VALUES, NETRC, KEYWORD, ASSIGNED, PLACEHOLDER, RUN_TAG]


def _repeats(items) -> list[tuple[int, object]]:
    """(most repeats, its body) for every repeat in a parsed pattern, nested ones included."""
    found = []
    for op, arg in items:
        if op in (sre.MAX_REPEAT, sre.MIN_REPEAT):
            found += [(arg[1], arg[2]), *_repeats(arg[2])]
        elif op is sre.BRANCH:
            found += [r for branch in arg[1] for r in _repeats(branch)]
        elif op is sre.SUBPATTERN:
            found += _repeats(arg[-1])
        elif op in (sre.ASSERT, sre.ASSERT_NOT):
            found += _repeats(arg[1])
    return found


@pytest.mark.parametrize("pattern", PATTERNS, ids=lambda p: p.pattern[:24])
def test_no_pattern_nests_an_unbounded_repeat(pattern):
    assert not _nests_unbounded(pattern), pattern.pattern


def _nests_unbounded(pattern: re.Pattern) -> bool:
    for most, body in _repeats(sre_parse.parse(pattern.pattern, pattern.flags)):  # at most once is no loop
        inner = [m for m, _ in _repeats(body)]
        if most > 1 and inner and (most == sre.MAXREPEAT or sre.MAXREPEAT in inner):
            return True
    return False


def _starts_unbounded(items) -> bool:
    """Whether a match may begin with an unbounded repeat: tried at every position of a long run, it scans the rest
    of the run each time (quadratic), unless something bounded or an anchor comes first."""
    if not items:
        return False
    op, arg = items[0]
    if op is sre.SUBPATTERN:
        return _starts_unbounded(arg[-1])
    if op is sre.BRANCH:
        return any(_starts_unbounded(branch) for branch in arg[1])
    return op in (sre.MAX_REPEAT, sre.MIN_REPEAT) and arg[1] == sre.MAXREPEAT


@pytest.mark.parametrize("pattern", PATTERNS, ids=lambda p: p.pattern[:24])
def test_no_pattern_starts_with_an_unbounded_repeat(pattern):
    assert not _starts_unbounded(sre_parse.parse(pattern.pattern, pattern.flags))


def test_the_checks_above_catch_the_patterns_they_are_meant_to():
    assert _nests_unbounded(re.compile(r"(?:a+b?)+c")) and _nests_unbounded(re.compile(r"(?:x{1,3}\w*){2}"))
    assert not _nests_unbounded(re.compile(r"(?:\w{1,3}: ){0,4}(?:bearer\s+)?\w+"))
    earlier = re.compile(r"(?P<key>[\w.-]*(?:token|auth\w*)[\w.-]*)(?P<sep>\s*[:=]\s*)(?P<value>\S{4,})")
    assert _starts_unbounded(sre_parse.parse(earlier.pattern)) and not _nests_unbounded(earlier)
