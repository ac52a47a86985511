"""Which key goes where, through the real run.py: a key kept in config.toml goes only to the base URL it was kept
for (never to the shell's OPENAI_BASE_URL, nor to a resumed run's endpoint), a server on this machine needs no key,
a key alone means OpenAI's endpoint, a missing key says whose it is, and the file is trusted only when it is the
user's own, reached directly. The server that sees the Authorization header is a small real HTTP server here."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.ga.cli.test_cli import RUN_PY, ga, ga_env, only_run, wait_for

FILE_KEY = "file-key-0123456789abcdef"  # not key-shaped: what reaches the server is shown as it was sent


@pytest.fixture
def home(tmp_path):
    return tmp_path / "home"


class Capture(ThreadingHTTPServer):
    """An OpenAI-compatible server (no streaming) that keeps each request's Authorization header; its replies are
    scripted, the last one repeated."""

    def __init__(self, replies: list[dict]):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.replies, self.seen = list(replies), []
        threading.Thread(target=self.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def __enter__(self) -> Capture:
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()
        self.server_close()


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        self._send({"object": "list", "data": [{"id": "m", "object": "model"}]})

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.server.seen.append(self.headers.get("Authorization"))
        replies = self.server.replies  # the last one again for every request after (a retry)
        message = replies.pop(0) if len(replies) > 1 else replies[0]
        self._send({"id": "c", "object": "chat.completion", "created": 0, "model": "m",
                    "choices": [{"index": 0, "finish_reason": "tool_calls" if message.get("tool_calls") else "stop",
                                 "message": {"role": "assistant", "content": None, **message}}],
                    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})

    def _send(self, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


ASK = {"tool_calls": [{"id": "call_1", "type": "function",
                       "function": {"name": "ask_user", "arguments": json.dumps({"question": "Go on?"})}}]}


def config(args: list[str], home, cwd, stdin: str = "", **extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, RUN_PY, "config", *args], cwd=cwd, env=ga_env(None, home, **extra),
                          input=stdin, capture_output=True, text=True, timeout=60, check=False)


def test_a_key_set_on_a_fresh_home_goes_neither_to_the_shells_base_url_nor_to_a_resumed_runs(home, workspace):
    kept = config(["set", "api_key"], home, workspace, stdin=FILE_KEY + "\n")
    assert kept.returncode == 0, kept.stderr
    assert "https://api.openai.com/v1" in kept.stdout  # the endpoint it is kept for, said and written
    with Capture([ASK, {"content": "done"}]) as server:
        paused = ga(["do it", "--no-stream", "--no-sandbox"], None, home, workspace, OPENAI_BASE_URL=server.url,
                    GA_MODEL="m")
        assert paused.returncode == 3, paused.stderr
        resumed = ga(["--resume", only_run(home).name, "--answer", "yes", "--no-stream"], None, home, workspace)
        seen = list(server.seen)
    assert resumed.returncode == 0, resumed.stderr
    assert len(seen) == 2 and not any(FILE_KEY in (h or "") for h in seen), seen


def test_a_server_on_this_machine_needs_no_key_and_its_run_is_answered_from_a_new_shell(home, workspace):
    with Capture([ASK, {"content": "answered"}]) as server:
        paused = ga(["do it", "--no-stream", "--no-sandbox"], None, home, workspace, OPENAI_BASE_URL=server.url,
                    GA_MODEL="m")  # no OPENAI_API_KEY
        assert paused.returncode == 3, paused.stderr
        answered = ga(["answer", only_run(home).name, "yes"], None, home, workspace)  # nothing set in this shell
        assert answered.returncode == 0, answered.stderr
        wait_for(lambda: json.loads((only_run(home) / "state.json").read_text())["status"] == "done")
    assert json.loads((only_run(home) / "state.json").read_text())["answer"] == "answered"


def test_a_missing_key_says_whose_it_is(home, workspace):
    alone = ga(["Hello"], None, home, workspace, OPENAI_BASE_URL="https://llm.example.test/v1", GA_MODEL="m")
    assert alone.returncode == 2 and "Traceback" not in alone.stderr
    assert "No API key for https://llm.example.test/v1 (from OPENAI_BASE_URL in this shell)" in alone.stderr
    assert "Ollama" not in alone.stderr  # not the first-use recital of every variable
    assert "config set api_key (it asks for the key, and keeps it for this URL)" in alone.stderr
    home.mkdir()
    (home / "config.toml").write_text('[profiles.work]\nbase_url = "https://work.example.test/v1"\nmodel = "m"\n')
    (home / "config.toml").chmod(0o600)
    profiled = ga(["Hello", "--profile", "work"], None, home, workspace)
    assert profiled.returncode == 2
    assert "No API key for https://work.example.test/v1 (the endpoint of profile work)" in profiled.stderr
    assert "config set api_key --profile work" in profiled.stderr
    (home / "config.toml").write_text('base_url = "https://a.example.test/v1"\nmodel = "m"\napi_key = "k-for-a"\n')
    elsewhere = ga(["Hello"], None, home, workspace, OPENAI_BASE_URL="https://b.example.test/v1")
    assert elsewhere.returncode == 2  # `config set api_key` would replace A's key: a profile keeps B's
    assert "config.toml's key is kept for https://a.example.test/v1" in elsewhere.stderr
    assert "config set base_url https://b.example.test/v1 --profile NAME" in elsewhere.stderr


def test_a_key_alone_means_openais_endpoint_with_a_default_model(home, workspace):
    shown = config(["--json"], home, workspace, OPENAI_API_KEY="sk-proj-abcdefghijklmnop0123")
    settings = json.loads(shown.stdout)["settings"]
    assert settings["base_url"]["value"] == "https://api.openai.com/v1"
    assert settings["model"]["value"] == "gpt-4.1-mini"
    assert settings["api_key"]["source"] == "OPENAI_API_KEY"


def test_a_key_on_the_command_line_is_refused_and_how_to_give_it_is_said(home, workspace):
    proc = config(["set", "api_key", "sk-typed-on-the-line-0123456789"], home, workspace)
    assert proc.returncode == 2 and "history" in proc.stderr and "printf %s" in proc.stderr, proc.stderr
    assert not (home / "config.toml").exists()


def test_a_config_file_through_a_link_or_of_another_user_is_refused(home, workspace, tmp_path):
    home.mkdir()
    real = tmp_path / "elsewhere.toml"
    real.write_text('base_url = "https://attacker.example.test/v1"\nmodel = "m"\napi_key = "k"\n')
    real.chmod(0o600)
    (home / "config.toml").symlink_to(real)
    linked = ga(["Hello"], None, home, workspace)
    assert linked.returncode == 2 and "is a symbolic link" in linked.stderr, linked.stderr
    (home / "config.toml").unlink()
    real.rename(home / "config.toml")
    if os.getuid() != 0:
        pytest.skip("giving a file to another user needs root")
    os.chown(home / "config.toml", 65534, 65534)
    theirs = ga(["Hello"], None, home, workspace)
    assert theirs.returncode == 2 and "belongs to another user (uid 65534)" in theirs.stderr, theirs.stderr
    assert config(["set", "model", "x"], home, workspace).returncode == 2  # nor edited in place
