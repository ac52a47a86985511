"""The scripted fake's injected faults that answer with more than a status code: bodies a client must not take for
a reply (cut JSON, HTML, no choices, 100 MB), connections held open and never answered, and the context-length
refusals real servers send. The bodies are methods of a mixin of the fake's request handler (server.py)."""

from __future__ import annotations

import json
import os
import select

MESSAGES = {
    "401": "Incorrect API key provided",
    "404": "The model does not exist or you do not have access to it",
    "429": "Rate limit reached; please try again later",
}
"""The messages of injected status codes, as the real APIs word them."""


def context_length_error(flavour: str, window: int, sent: int) -> dict:
    """The 400 body real servers send for a request longer than the model's context."""
    if flavour == "llama.cpp":
        return {"error": {"code": 400, "message": "the request exceeds the available context size, try increasing it",
                          "type": "exceed_context_size_error", "n_prompt_tokens": sent, "n_ctx": window}}
    if flavour == "vllm":
        return {"object": "error", "type": "BadRequestError", "param": None, "code": 400,
                "message": f"This model's maximum context length is {window} tokens. However, you requested {sent} "
                           f"tokens ({sent} in the messages, 0 in the completion). Please reduce the length of the "
                           "messages or completion."}
    return {"error": {"message": f"This model's maximum context length is {window} tokens. However, your messages "
                                 f"resulted in {sent} tokens. Please reduce the length of the messages.",
                      "type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded"}}


class BrokenReplies:
    """What the fake sends for a fault of BROKEN: mixed into its request handler, whose methods these use."""

    def broken_body(self, step: dict, request: dict, stream: bool) -> None:
        """truncated_json: the completion (or one stream chunk) cut in half; bad_sse: a body that is not JSON."""
        if step["fault"] == "bad_sse":
            junk = "<html><body>502 Bad Gateway</body></html>"
            self.send_events([junk] if stream else None, raw=None if stream else junk.encode())
            return
        body = json.dumps(self.completion(step, request))
        if not stream:
            self.send_events(None, raw=body[: len(body) // 2].encode())
            return
        chunk = json.dumps({**self.envelope(request, "chat.completion.chunk"),
                            "choices": [{"index": 0, "delta": {"content": "Hello"}, "finish_reason": None}]})
        self.send_events([chunk[: len(chunk) // 2], "[DONE]"])

    def no_choices(self, step: dict, request: dict, stream: bool) -> None:
        body = {**self.envelope(request, "chat.completion"), "choices": [],
                "usage": {"prompt_tokens": 10, "completion_tokens": 0, "total_tokens": 10}}
        if stream:
            self.send_events([json.dumps({**body, "object": "chat.completion.chunk"}), "[DONE]"])
        else:
            self.send_json(200, body)

    def huge(self, step: dict, request: dict, stream: bool) -> None:
        """A reply of step["size"] bytes of text (default 100 MB), sent in pieces so the fake never holds it; streamed
        pieces differ (random hex), so it is a reply too big, not one that repeats itself."""
        size, piece = int(step.get("size") or 100_000_000), "x" * 65_536
        if stream:
            envelope = self.envelope(request, "chat.completion.chunk")
            self.send_events(json.dumps({**envelope, "choices": [{"index": 0, "delta": {"content": os.urandom(
                len(piece) // 2).hex()}, "finish_reason": None}]}) for _ in range(-(-size // len(piece))))
            return
        head, tail = json.dumps(self.completion({**step, "content": "@@huge@@"}, request)).encode().split(b"@@huge@@")
        self.start(200, "application/json", length=len(head) + size + len(tail))
        self.wfile.write(head)
        for sent in range(0, size, len(piece)):
            self.wfile.write(piece[: min(len(piece), size - sent)].encode())
        self.wfile.write(tail)

    def hold(self, step: dict, request: dict, stream: bool) -> None:
        """silent: accept and send nothing; keepalive: an SSE comment (or, without streaming, a space) every
        step["interval"] s (default 2) and never a reply. Both last until the client or the server goes away."""
        interval = float(step.get("interval") or 2)
        if step["fault"] == "keepalive":
            self.start(200, "text/event-stream" if stream else "application/json")
        while not self.server.stopping.wait(0 if step["fault"] == "keepalive" else 0.05):
            if step["fault"] == "silent":
                if select.select([self.connection], [], [], 0.2)[0] and not self.connection.recv(1):
                    return  # the client closed its side
                continue
            self.write_chunk(b": keep-alive\n\n" if stream else b" ")
            if self.server.stopping.wait(interval):
                return


BROKEN = {
    "truncated_json": BrokenReplies.broken_body,
    "bad_sse": BrokenReplies.broken_body,
    "no_choices": BrokenReplies.no_choices,
    "huge": BrokenReplies.huge,
    "silent": BrokenReplies.hold,
    "keepalive": BrokenReplies.hold,
}
"""Faults that answer 200 with something a client must not take for a reply."""
