"""A tiny CLI agent for the harness tests: plain HTTP to any Chat Completions endpoint, two tools.

    OPENAI_BASE_URL=... OPENAI_API_KEY=... TINY_MODEL=... python tiny_agent.py "task"
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.request

TOOLS = [
    {"type": "function", "function": {"name": "write_file", "description": "Write a file.", "parameters": {
        "type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
        "required": ["path", "content"]}}},
    {"type": "function", "function": {"name": "run", "description": "Run a shell command.", "parameters": {
        "type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}}},
]


def complete(messages: list[dict]) -> dict:
    body = json.dumps({"model": os.environ["TINY_MODEL"], "messages": messages, "tools": TOOLS}).encode()
    request = urllib.request.Request(os.environ["OPENAI_BASE_URL"].rstrip("/") + "/chat/completions", body,
                                     {"Content-Type": "application/json",
                                      "Authorization": f"Bearer {os.environ['OPENAI_API_KEY']}"})
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.load(response)["choices"][0]["message"]


def act(call: dict) -> str:
    args = json.loads(call["function"]["arguments"] or "{}")
    if call["function"]["name"] == "write_file":
        with open(args["path"], "w", encoding="utf-8") as f:
            f.write(args["content"])
        return f"wrote {args['path']}"
    done = subprocess.run(args["command"], shell=True, capture_output=True, text=True, timeout=60, check=False)
    return f"exit {done.returncode}\n{done.stdout}{done.stderr}"


def main() -> int:
    messages = [{"role": "system", "content": "You are tiny. Use the tools, then answer."},
                {"role": "user", "content": sys.argv[1]}]
    for _ in range(10):
        message = complete(messages)
        messages.append({k: v for k, v in message.items() if v is not None})
        if not message.get("tool_calls"):
            print(message.get("content") or "")
            return 0
        for call in message["tool_calls"]:
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": act(call)})
    return 1


if __name__ == "__main__":
    sys.exit(main())
