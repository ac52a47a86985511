"""A text action format for models weak at choosing tools (ModelSettings.action_format = "bash"), as mini-swe-agent's
text mode: no tool schemas are sent; the model writes one fenced shell block per reply, a `code_run` call (`web_scan
URL`: that tool) for the same dispatcher (policy, sandbox, budgets, escalation, --check); a reply without a block is
the final answer. The loop is the same for both formats: only what goes to the server and what comes back differ."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable

from ga.model.text_calls import text_calls
from ga.protocols import Model, Reply, ToolCall
from ga.tooling.deferral import URL

FORMAT = ("Act by replying with exactly one ```bash code block: it runs in the workspace, and its output comes back "
          "to you. Read files with cat, write them with shell (printf, a heredoc: cat > FILE <<'EOF' ... EOF) or "
          "python3 - <<'EOF' ... EOF, edit them with sed -i or python.{web} Check your result before you finish. "
          "When the task is done, reply without a code block: say what you did and the result.")
"""The system section of this format (no tool schemas are sent); WEB joins it once a message holds a URL."""
WEB = " Read a web page with a block of one line: web_scan URL (its text comes back)."
MORE_BLOCKS = "(Your reply had {n} code blocks; only the first ran. Write one block per reply.)"
PAGE_ONLY = "(Only `web_scan {url}` ran: a script cannot pipe, redirect or use a tool's text. The page's text:)"
READ_IT = ("(The page's text is for you to read: a script cannot read it. Take what the task needs from it yourself: "
           "to write a value into a file, echo 'VALUE' > FILE; to answer, reply without a block.)")
_BLOCK = re.compile(r"```([\w+-]*)[ \t]*\n(.*?)```", re.DOTALL)
"""A closed block: a fence left open in a reply not cut holds prose (a small model's answer), never a command."""
_ANSWER = re.compile(r"```([\w+-]*)[ \t]*\n(?:(.*?)```)?", re.DOTALL)  # in an answer: a block, or a fence left open
_ECHO = re.compile(r"\[exit code -?\d+ · |\[killed after |^\s*(?:# )?Output:?\s*$|^note: it printed nothing",
                   re.MULTILINE)
"""ga's own result text: a block that copies it back (a small model imitating the conversation) runs nothing."""
_SENTENCE = re.compile(r"[A-Z][\w'’-]*(?: [\w'’,().:/-]+){2,}[.!]")
"""A line of prose: a capitalised word, two more, a full stop; no shell operator, quote or variable."""
_BUILTINS = frozenset({"alias", "bg", "break", "cd", "continue", "echo", "eval", "exec", "exit", "export", "false",
                       "fg", "hash", "help", "history", "jobs", "kill", "logout", "printf", "pwd", "read", "return",
                       "set", "shift", "source", "test", "times", "trap", "true", "type", "ulimit", "umask", "unset",
                       "wait"})  # bash builtins a one-word script may run
_SHELLS = {"", "bash", "sh", "shell", "console", "zsh"}
_WEB_SCAN = re.compile(r"web_scan\s+['\"]?(https?://[^\s'\"]+)['\"]?(.*)", re.DOTALL)  # a block that is web_scan
_PYTHONS = {"python", "python3", "py"}


def _said(body: str) -> bool:
    """A block that only says something: comments, or sentences whose first word is no program ("I wrote 11 into
    shipped.txt."). After the run acted, a small model writes its final answer as one ("# The file is updated.");
    before, its plan ("# Step 1: open the page"), which runs (and shows that nothing ran)."""
    lines = [line.strip() for line in body.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    if len(lines) == 1 and re.fullmatch(r"[A-Za-z]+[.!]?", lines[0]):  # "done": a word, no program or builtin
        word = lines[0].rstrip(".!")
        return word not in _BUILTINS and not shutil.which(word)
    return all(_SENTENCE.fullmatch(line) and not shutil.which(line.split()[0]) for line in lines)


class TextActions:
    """Wraps the model client: renders the history as text for the server and a reply's block as a code_run call."""

    def __init__(self, model: Model):
        self.model = model
        self.notes: dict[str, str] = {}
        """A call's id → what the model is told beside its result (more blocks than one)."""
        self.pending: tuple[str, str] | None = None
        """The last reply's call (its arguments) and its note, until its id is known (ids are given by the loop)."""

    def __getattr__(self, name: str) -> object:  # the client's other attributes (its settings, the model list)
        return getattr(self.model, name)

    def complete(self, messages: list[dict], tools: list[dict], on_text: Callable[[str], None] | None = None,
                 *, deadline: float | None = None) -> Reply:
        known = {t["function"]["name"] for t in tools if "function" in t}
        self._place_note(messages)
        pages = {c["id"] for m in messages for c in m.get("tool_calls") or [] if c["function"]["name"] == "web_scan"}
        web = WEB * any(URL.search(str(m.get("content"))) for m in messages if m["role"] in ("user", "tool"))
        sent = [self._render(m, first=i == 0, pages=pages, web=web) for i, m in enumerate(messages)]
        reply = self.model.complete(sent, [], on_text, deadline=deadline)
        if tools and not reply.tool_calls and reply.finish_reason not in ("length", "content_filter", "repetition"):
            acted = any(m["role"] == "assistant" and m.get("tool_calls") for m in messages)
            self._act(reply, known, comments=not acted)
            if not reply.tool_calls:
                reply.content = _ANSWER.sub(_uncommented, reply.content).strip()
        return reply

    def _act(self, reply: Reply, known: set[str], *, comments: bool) -> None:
        """The reply's first runnable block as its call; the text before it stays the reply's content. A block of
        comments only runs (showing that nothing ran) until the run acted (a plan); then it is the final answer."""
        blocks = [b for b in _BLOCK.finditer(reply.content) if b.group(1).lower() in _SHELLS | _PYTHONS | {"json"}
                  and not _ECHO.search(b.group(2)) and (comments or not _said(b.group(2)))]
        for block in blocks:
            lang, body, note = block.group(1).lower(), block.group(2).strip(), ""
            if lang == "json":
                if not (calls := text_calls(body, known)):
                    continue
                calls[0].id, reply.tool_calls = "", calls[:1]
            elif body:
                call, note = _call(body, "python" if lang in _PYTHONS else "bash", known)
                reply.tool_calls = [call]
            else:
                continue
            reply.content, reply.finish_reason = reply.content[: block.start()].strip(), "tool_calls"
            if note := " ".join(filter(None, [note, MORE_BLOCKS.format(n=len(blocks)) * (len(blocks) > 1)])):
                self.pending = (reply.tool_calls[0].arguments, note)
            return

    def _place_note(self, messages: list[dict]) -> None:
        if self.pending is None:
            return
        for message in reversed(messages):
            if message["role"] == "assistant" and message.get("tool_calls"):
                call = message["tool_calls"][0]
                if call["function"]["arguments"] == self.pending[0]:
                    self.notes[call["id"]] = self.pending[1]
                break
        self.pending = None

    def _render(self, message: dict, *, first: bool, pages: set[str], web: str) -> dict:
        role = message["role"]
        if role == "system" and first:
            return {"role": "system", "content": f"{message['content']}\n\n{FORMAT.format(web=web)}"}
        if role == "assistant" and message.get("tool_calls"):
            blocks = [_as_block(c["function"]["name"], c["function"]["arguments"]) for c in message["tool_calls"]]
            return {"role": "assistant", "content": "\n\n".join(filter(None, [message.get("content"), *blocks]))}
        if role == "tool":
            note = self.notes.get(message.get("tool_call_id", ""), "")
            after = READ_IT if message.get("tool_call_id") in pages else ""  # else a 1.5B model scanned it again
            return {"role": "user", "content": "\n".join(filter(None, [note, f"Output:\n{message['content']}", after]))}
        return message


def _call(body: str, kind: str, known: set[str]) -> tuple[ToolCall, str]:
    """A block as its call (web_scan for a block that starts with `web_scan URL`), and the note its result gets."""
    code = "\n".join(line for line in body.splitlines() if line.strip() and not line.lstrip().startswith("#"))
    if kind == "bash" and "web_scan" in known and (page := _WEB_SCAN.fullmatch(code.strip())):
        call = ToolCall(id="", name="web_scan", arguments=json.dumps({"url": page.group(1)}))
        return call, PAGE_ONLY.format(url=page.group(1)) if page.group(2).strip() else ""  # a pipe cannot run on it
    return ToolCall(id="", name="code_run", arguments=json.dumps({"script": body, "type": kind})), ""


def _uncommented(block: re.Match) -> str:
    """In a final answer: a comments-only block as the prose it is, a fence left open gone (its prose stays), any
    other block as it was."""
    if (body := block.group(2)) is None or block.group(1).lower() not in _SHELLS | _PYTHONS or not _said(body):
        return "" if body is None else block.group(0)
    return "\n".join(line.strip().lstrip("#").strip() for line in body.splitlines() if line.strip())


def _as_block(name: str, arguments: str) -> str:
    """A call as the model would have written it in this format."""
    try:
        args = json.loads(arguments or "{}")
    except ValueError:
        args = {}
    if name == "code_run" and isinstance(args, dict) and isinstance(args.get("script"), str):
        lang = "python" if args.get("type", "python") == "python" else "bash"
        return f"```{lang}\n{args['script']}\n```"
    if name == "web_scan" and isinstance(args, dict) and set(args) == {"url"}:
        return f"```bash\nweb_scan {args['url']}\n```"
    return f"```json\n{json.dumps({'name': name, 'arguments': args}, ensure_ascii=False)}\n```"
