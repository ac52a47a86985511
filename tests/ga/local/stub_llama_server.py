"""A stand-in for llama-server, run as a program: the scripted fake (GA_STUB_SCRIPT, JSON steps) behind llama.cpp's
ways — it binds the port itself (--port 0) and says which in its log, checks the key of --api-key-file, keeps one
slot whose prompt cache it reports in timings, and saves and restores that slot in --slot-save-path. Its "tokens"
are characters. GA_STUB_FAIL makes it fail to load; GA_STUB_LOAD is the seconds it takes to load; GA_STUB_BUSY the
seconds /slots takes (as llama.cpp's does while it finishes a request)."""

from __future__ import annotations

import io
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.scripted import Script
from tests.scripted.server import ChatHandler, ChatServer

PUBLIC = ("/health", "/v1/models", "/models")


def option(args: list[str], name: str, default: str = "") -> str:
    return args[args.index(name) + 1] if name in args else default


def render(messages: list[dict], tools: list[dict] | None = None) -> str:
    """A chatml-like template: the tools follow the system prompt, as Qwen's does."""
    out = ""
    for i, m in enumerate(messages):
        content = m.get("content") or ""
        if i == 0 and m["role"] == "system" and tools:
            content += "\n\n# Tools\n" + json.dumps(tools)
        out += f"<|im_start|>{m['role']}\n{content}<|im_end|>\n"
    return out + "<|im_start|>assistant\n"


def common(a: str, b: str) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


class Slot:
    def __init__(self, save_path: str):
        self.cache, self.prompt, self.save_path = "", "", save_path

    def evaluate(self, prompt: str) -> dict:
        """Take a prompt: what it reuses of the cache, what it evaluates (the timings llama.cpp reports)."""
        reused = common(self.cache, prompt)
        self.cache, self.prompt = prompt, prompt
        return {"prompt_n": len(prompt) - reused, "cache_n": reused}


class StubHandler(ChatHandler):
    def authorised(self) -> bool:
        key = self.server.key
        if not key or self.path.split("?")[0] in PUBLIC or self.headers.get("Authorization") == f"Bearer {key}":
            return True
        self.send_json(401, {"error": {"code": 401, "message": "Invalid API Key", "type": "authentication_error"}})
        return False

    def do_GET(self) -> None:
        if not self.authorised():
            return
        if self.path == "/slots":
            time.sleep(float(os.environ.get("GA_STUB_BUSY", "0")))  # still busy with an abandoned request
            self.send_json(200, [{"id": 0, "prompt": self.server.slot.prompt}])  # a list, as llama.cpp sends
        else:
            super().do_GET()

    def do_POST(self) -> None:
        if not self.authorised():
            return
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        body, path, slot = json.loads(raw or b"{}"), self.path.split("?")[0], self.server.slot
        if path == "/apply-template":
            self.send_json(200, {"prompt": render(body["messages"], body.get("tools"))})
        elif path == "/completion":
            self.send_json(200, {"content": "", "timings": slot.evaluate(body["prompt"])})
        elif path == "/slots/0":
            self.slot_action(self.path.split("action=")[-1], body["filename"])
        else:
            if "messages" in body:
                self.server.timings = slot.evaluate(render(body["messages"], body.get("tools")))
            self.rfile = io.BytesIO(raw)
            super().do_POST()

    def slot_action(self, action: str, filename: str) -> None:
        slot, file = self.server.slot, Path(self.server.slot.save_path) / filename
        if action == "save":
            file.write_text(slot.cache)
            self.send_json(200, {"id_slot": 0, "filename": filename, "n_saved": len(slot.cache)})
        elif file.is_file():
            slot.cache = file.read_text()
            self.send_json(200, {"id_slot": 0, "filename": filename, "n_restored": len(slot.cache)})
        else:
            self.send_json(400, {"error": {"code": 400, "message": "failed to restore slot"}})


class TimedScript:
    """The script, each step answered with the slot's timings of that request."""

    def __init__(self, script: Script, server: ChatServer):
        self.script, self.server = script, server

    def take(self, request: dict) -> dict | None:
        step = self.script.take(request)
        return None if step is None else {**step, "timings": getattr(self.server, "timings", None)}

    def __getattr__(self, name: str) -> object:
        return getattr(self.script, name)


def main(args: list[str]) -> None:
    print("stub llama-server pid", os.getpid(), " ".join(args), flush=True)
    if os.environ.get("GA_STUB_FAIL"):
        print("error: failed to load model", flush=True)
        sys.exit(1)
    key_file = option(args, "--api-key-file")
    key = Path(key_file).read_text().strip() if key_file else ""
    time.sleep(float(os.environ.get("GA_STUB_LOAD", "0.3")))  # the model "loads" before the port opens
    server = ChatServer(("127.0.0.1", int(option(args, "--port", "8080"))))
    server.RequestHandlerClass = StubHandler
    server.key, server.slot = key, Slot(option(args, "--slot-save-path"))
    server.script = TimedScript(Script(json.loads(os.environ.get("GA_STUB_SCRIPT", "[]"))), server)
    port = server.server_address[1]
    print(f"main: HTTP server is listening, hostname: 127.0.0.1, port: {port}, http threads: 3", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main(sys.argv[1:])
