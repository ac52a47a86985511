"""Shell text made ready for bashlex, which lacks parts of bash's grammar.

A small tokenizer (quotes, `$(...)`, `${...}`, backticks, comments, operators, here-documents) rewrites what
bashlex cannot parse into what it can, keeping every command that would run:

- here-documents are cut out and replaced by `<<< __GA_HEREDOC_N__`; their bodies are kept apart with whether
  the delimiter was quoted (then bash expands nothing in them: they are data);
- `[[ ... ]]` becomes `test` followed by the command substitutions it held; `$(( ))` becomes `0`;
- `case ... esac` becomes a `{ ...; }` group of its branches; arrays `a=(x y)` the string of their words;
- `time`, `coproc` are dropped and `select` read as `for`; `$'\\x72\\x6d'` is decoded to `'rm'`.

`statements` splits the text at newlines outside quotes and brackets, for parsing piece by piece when the
whole still does not parse.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass, field

PLACEHOLDER = "__GA_HEREDOC_{}__"
_OPERATORS = sorted([";;&", ";;", ";&", "&&", "||", "|&", "<<<", "<<-", "<<", ">>", "&>>", "&>", ">&", "<&", "<>",
                     ">|", ";", "&", "|", "<", ">", "(", ")"], key=len, reverse=True)
_BREAKS = set(" \t\n;&|()<>")
_STARTERS = {";", "&", "|", "&&", "||", "|&", "(", ")", ";;", ";&", ";;&", "\n"}
_KEYWORDS = {"then", "do", "else", "elif", "if", "while", "until", "!", "{", "}"}
_ARRAY_START = re.compile(r"^[A-Za-z_]\w*(\[[^\]]*\])?\+?=$")


@dataclass(kw_only=True)
class HereDoc:
    body: str
    quoted: bool
    """The delimiter was quoted (`<<'EOF'`): bash expands nothing in the body, so it is pure data."""


@dataclass(kw_only=True)
class Prepared:
    text: str
    heredocs: dict[str, HereDoc] = field(default_factory=dict)
    statements: list[str] = field(default_factory=list)


@dataclass
class _Token:
    kind: str  # word, op, newline
    text: str
    command_start: bool = False
    gap: bool = True
    """Blanks came before it: `2>/dev/null` must not become `2 > /dev/null`."""


def prepare(script: str) -> Prepared:
    tokens, heredocs = _Tokenizer(script).run()
    text = _rewrite(tokens)
    return Prepared(text=text, heredocs=heredocs, statements=_statements(tokens, text))


class _Tokenizer:
    def __init__(self, src: str):
        self.src, self.i = src, 0
        self.heredocs: dict[str, HereDoc] = {}
        self.pending: list[tuple[str, str, bool, bool]] = []  # placeholder, delimiter, strip tabs, quoted

    def run(self) -> tuple[list[_Token], dict[str, HereDoc]]:
        tokens: list[_Token] = []
        at_start, gap = True, True
        while self.i < len(self.src):
            c = self.src[self.i]
            if c in " \t" or self.src.startswith("\\\n", self.i):
                self.i += 1 if c != "\\" else 2
                gap = True
                continue
            if c == "\n":
                self.i += 1
                self._bodies()
                tokens.append(_Token("newline", "\n"))
                at_start = True
            elif c == "#":
                end = self.src.find("\n", self.i)
                self.i = len(self.src) if end < 0 else end
            elif (op := next((o for o in _OPERATORS if self.src.startswith(o, self.i)), None)) and not \
                    (op in ("<", ">") and self.src.startswith("(", self.i + 1)):
                self.i += len(op)
                if op in ("<<", "<<-"):
                    tokens.append(self._heredoc(op == "<<-"))
                else:
                    tokens.append(_Token("op", op, gap=gap))
                at_start = op in _STARTERS
            else:
                word = self._word()
                tokens.append(_Token("word", word, at_start, gap))
                at_start = at_start and (word in _KEYWORDS or ("=" in word.split("[")[0] and word[0] != "="))
            gap = False
        self._bodies()
        return tokens, self.heredocs

    def _heredoc(self, strip: bool) -> _Token:
        while self.i < len(self.src) and self.src[self.i] in " \t":
            self.i += 1
        raw = self._word()
        quoted = any(q in raw for q in "'\"\\")
        delimiter = raw.replace("'", "").replace('"', "").replace("\\", "")
        name = PLACEHOLDER.format(len(self.heredocs) + len(self.pending))
        self.pending.append((name, delimiter, strip, quoted))
        return _Token("op", f"<<< {name}")  # a here-string bashlex parses; its word names the body

    def _bodies(self) -> None:
        for name, delimiter, strip, quoted in self.pending:
            lines = []
            while self.i < len(self.src):
                end = self.src.find("\n", self.i)
                end = len(self.src) if end < 0 else end
                line, self.i = self.src[self.i:end], end + 1
                if (line.lstrip("\t") if strip else line) == delimiter:
                    break
                lines.append(line.lstrip("\t") if strip else line)
            self.heredocs[name] = HereDoc(body="\n".join(lines) + ("\n" if lines else ""), quoted=quoted)
        self.pending = []

    def _word(self) -> str:
        out, src = [], self.src
        if src.startswith(("<(", ">("), self.i):  # process substitution: one word
            start = self.i
            self.i = self._skip_group(self.i + 1, "(", ")")
            return src[start:self.i]
        while self.i < len(src) and src[self.i] not in _BREAKS:
            c = src[self.i]
            if c == "\\":
                out.append(src[self.i:self.i + 2])
                self.i += 2
            elif c == "'":
                end = src.find("'", self.i + 1)
                end = len(src) - 1 if end < 0 else end
                out.append(src[self.i:end + 1])
                self.i = end + 1
            elif src.startswith("$'", self.i):
                out.append(self._ansi_c())
            elif c == '"' or src.startswith('$"', self.i):
                self.i += c == "$"
                out.append(self._double())
            elif src.startswith("$((", self.i):
                self.i = self._skip_group(self.i + 1, "(", ")")
                out.append("0")
            elif src.startswith(("$(", "${"), self.i):
                opening, closing = src[self.i + 1], ")" if src[self.i + 1] == "(" else "}"
                start = self.i
                self.i = self._skip_group(self.i + 1, opening, closing)
                out.append(src[start:self.i])
            elif c == "`":
                end = src.find("`", self.i + 1)
                end = len(src) - 1 if end < 0 else end
                out.append(src[self.i:end + 1])
                self.i = end + 1
            else:
                out.append(c)
                self.i += 1
        word = "".join(out)
        if _ARRAY_START.match(word) and src.startswith("(", self.i):  # a=(x y): the words as one string
            start, self.i = self.i, self._skip_group(self.i, "(", ")")
            word += "'" + " ".join(src[start + 1:self.i - 1].split()).replace("'", "'\\''") + "'"
        return word

    def _double(self) -> str:
        start, src = self.i, self.src
        self.i += 1
        while self.i < len(src) and src[self.i] != '"':
            if src[self.i] == "\\":
                self.i += 2
            elif src.startswith(("$(", "${"), self.i):
                opening = src[self.i + 1]
                self.i = self._skip_group(self.i + 1, opening, ")" if opening == "(" else "}")
            else:
                self.i += 1
        self.i += 1
        return src[start:self.i]

    def _ansi_c(self) -> str:
        """$'\\x72\\x6d' as bash decodes it, requoted as a plain single-quoted word."""
        j = self.i + 2
        while j < len(self.src) and self.src[j] != "'":
            j += 2 if self.src[j] == "\\" else 1
        raw, self.i = self.src[self.i + 2:j], j + 1
        try:
            text = codecs.decode(raw.replace("\\'", "'"), "unicode_escape")
        except (UnicodeDecodeError, ValueError):
            text = raw
        return "'" + text.replace("'", "'\\''") + "'"

    def _skip_group(self, i: int, opening: str, closing: str) -> int:
        """Index just past the bracket closing the one at i, minding quotes."""
        depth, src = 0, self.src
        while i < len(src):
            c = src[i]
            if c == "\\":
                i += 2
                continue
            if c == "'" and closing == ")":
                i = src.find("'", i + 1)
                if i < 0:
                    return len(src)
            elif c == '"':
                j = i + 1
                while j < len(src) and src[j] != '"':
                    j += 2 if src[j] == "\\" else 1
                i = j
            elif c == opening:
                depth += 1
            elif c == closing:
                depth -= 1
                if depth == 0:
                    return i + 1
            i += 1
        return len(src)


def _rewrite(tokens: list[_Token]) -> str:
    out: list[_Token] = []
    cases: list[str] = []  # per open case: "pattern" (reading a pattern) or "body"
    i = 0
    while i < len(tokens):
        t = tokens[i]
        i += 1
        if cases and cases[-1] == "pattern":
            if t.kind == "word" and t.text == "esac":
                cases.pop()
                out.append(_Token("word", "}"))
            elif t.kind == "op" and t.text == ")":
                cases[-1] = "body"
            continue
        if t.kind == "op" and cases and t.text in (";;", ";&", ";;&"):
            cases[-1] = "pattern"
            if out and out[-1].kind != "newline":
                out.append(_Token("op", ";\n"))
        elif t.kind == "word" and t.command_start and cases and t.text == "esac":
            cases.pop()
            ended = not out or out[-1].kind == "newline" or out[-1].text.endswith("\n")
            out.append(_Token("op", "}" if ended else ";\n}"))
        elif t.kind == "word" and t.command_start and t.text == "case":
            subject = tokens[i].text if i < len(tokens) else ""
            i += 2  # the subject and `in`
            out.append(_Token("word", f"{{ : {subject};\n"))
            cases.append("pattern")
        elif t.kind == "word" and t.command_start and t.text == "[[":
            end = next((j for j in range(i, len(tokens)) if tokens[j].text == "]]"), len(tokens))
            inner = " ".join(tokens[j].text for j in range(i, end))
            subs = re.findall(r"\$\([^()]*(?:\([^()]*\)[^()]*)*\)|`[^`]*`", inner)
            out.append(_Token("word", " ".join(["test", *subs])))
            i = end + 1
        elif t.kind == "word" and t.command_start and t.text in ("time", "coproc"):
            if i < len(tokens) and tokens[i].text == "-p":
                i += 1
            if i < len(tokens):
                tokens[i].command_start = True
        elif t.kind == "word" and t.command_start and t.text == "select":
            out.append(_Token("word", "for"))
        else:
            out.append(t)
    return _join(out)


def _join(tokens: list[_Token]) -> str:
    text = ""
    for t in tokens:
        text += " " + t.text if t.gap and text and not text.endswith("\n") and t.kind != "newline" else t.text
    return text


def _statements(tokens: list[_Token], text: str) -> list[str]:
    """Top-level lines of the rewritten text (newlines inside quotes and brackets stay inside)."""
    pieces, depth, current = [], 0, []
    for t in tokens:
        if t.kind == "op" and t.text == "(":
            depth += 1
        elif t.kind == "op" and t.text == ")":
            depth = max(0, depth - 1)
        if t.kind == "newline" and depth == 0:
            pieces.append(current)
            current = []
        else:
            current.append(t)
    pieces.append(current)
    return [_rewrite(p) for p in pieces if p]
