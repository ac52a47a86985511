"""Argument repair for known model quirks, then JSON-schema validation with errors the model can act on."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING

from ga.errors import ToolError
from ga.tooling.encoding import scrub

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator

ECHO_CHARS = 300
_INT = re.compile(r"-?\d+")
_NUM = re.compile(r"-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?")
MAX_DEPTH = 32
"""Nesting levels of arguments accepted: no tool takes more than a few, and deeper JSON would exhaust the stack."""
DOUBLE_ENCODED = "[Your arguments came as a JSON string holding the JSON object; they were decoded once more.]"
ECHO_MIN_WORDS = 6
"""A string value of this many words that is a piece of the tool's or the parameter's description was copied
from it (shorter pieces, "case-insensitive match", can be what the model looks for)."""


def echo(raw: object, limit: int = ECHO_CHARS) -> str:
    text = raw if isinstance(raw, str) else json.dumps(raw, ensure_ascii=False, default=str)
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text)} chars)"


def summarize(arguments: str | dict | None, limit: int = 70) -> str:
    """A tool call's arguments in one short line: the first few values, cut."""
    try:
        args = arguments if isinstance(arguments, dict) else json.loads(arguments or "{}")
    except (json.JSONDecodeError, RecursionError):
        args = {"?": arguments}
    if not isinstance(args, dict):
        args = {"?": args}
    parts = [f"{k}={' '.join(str(v).split())}" for k, v in args.items()]
    text = " ".join(parts)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def parse(raw: str | dict | None, tool: str) -> dict:
    return decode(raw, tool)[0]


def decode(raw: str | dict | None, tool: str) -> tuple[dict, str]:
    """The arguments the model sent as a dict (a JSON object, maybe encoded twice as a JSON string), and the note
    for the model when they had to be decoded twice ("" when not)."""
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return {}, ""
    value: object = raw
    decoded, deep = 0, False
    for _ in range(2):  # a JSON object given as a JSON string: decode once more
        if not isinstance(value, str):
            break
        try:
            value = json.loads(value)
        except RecursionError:  # nested thousands deep
            deep = True
            break
        except json.JSONDecodeError as e:
            raise ToolError(f"The arguments for {tool} are not valid JSON ({e.msg} at char {e.pos}): {echo(raw)}. "
                            "Send one JSON object with the parameters, strings quoted and escaped.") from None
        decoded += 1
    if deep or not _shallow(value, MAX_DEPTH):
        raise ToolError(f"The arguments for {tool} are nested more than {MAX_DEPTH} levels deep: {echo(raw, 120)}. "
                        "Send one flat JSON object with the parameters.")
    if not isinstance(value, dict):
        raise ToolError(f"The arguments for {tool} must be a JSON object, got {type(value).__name__}: {echo(raw)}.")
    # a lone surrogate ("\ud83d") cannot reach a file or a program
    return scrub(value), DOUBLE_ENCODED if isinstance(raw, str) and decoded == 2 else ""


def _shallow(value: object, limit: int) -> bool:
    """A decoded value is no deeper than `limit` (walked with a stack, never recursion)."""
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth >= limit:
                return False
            stack += [(v, depth + 1) for v in (item.values() if isinstance(item, dict) else item)]
    return True


def _repair_value(value: object, kind: object) -> object:
    if kind == "integer" and isinstance(value, float) and value.is_integer():
        return int(value)
    if not isinstance(value, str) or not value.strip():
        return value  # "" and null are never turned into a value
    text = value.strip()
    if kind == "integer" and _INT.fullmatch(text):
        return int(text)
    if kind == "number" and _NUM.fullmatch(text):
        number = float(text)
        return int(number) if number.is_integer() and "." not in text and "e" not in text.lower() else number
    if kind == "boolean" and text.lower() in ("true", "false"):
        return text.lower() == "true"
    if kind in ("array", "object") and text[:1] in "[{":
        try:
            decoded = json.loads(text)
        except json.JSONDecodeError:
            return value
        return decoded if isinstance(decoded, list if kind == "array" else dict) else value
    return value


def repair(args: dict, schema: dict) -> dict:
    """Fix the quirks models are known for: "30" for 30, "true" for true, a list sent as a JSON string."""
    props = schema.get("properties", {})
    return {name: _repair_value(value, props.get(name, {}).get("type")) for name, value in args.items()}


def _flat(text: str) -> str:
    return " ".join(text.replace("`", "").casefold().split()).strip(" .")


def unechoed(args: dict, schema: dict, description: str) -> tuple[dict, list[str]]:
    """Drop the optional parameters whose value is a copy of the schema's prose: small models fill every
    parameter, file_read's keyword with "jump to the first case-insensitive match from start, with 3 lines
    before..." (its part of the tool's description). Returns the arguments kept and the names dropped."""
    props, required = schema.get("properties", {}), set(schema.get("required", ()))
    echoed = [name for name, value in args.items()
              if name not in required and isinstance(value, str) and len(_flat(value).split()) >= ECHO_MIN_WORDS
              and _flat(value) in _flat(f"{description} {props.get(name, {}).get('description', '')}")]
    return {k: v for k, v in args.items() if k not in echoed}, echoed


def _describe(error, schema: dict) -> str:
    where = ".".join(str(p) for p in error.absolute_path)
    if error.validator == "required":
        missing = re.findall(r"'([^']+)' is a required property", error.message)
        return f"missing required parameter '{missing[0] if missing else error.message}'"
    if error.validator == "additionalProperties":
        extra = re.findall(r"'([^']+)'", error.message.split("(")[-1])
        allowed = ", ".join(schema.get("properties", {})) or "none"
        return f"unexpected parameter {', '.join(repr(x) for x in extra)} (allowed: {allowed})"
    if error.validator == "type" and error.instance is None:
        return f"{where}: null is not allowed; omit an optional parameter instead of sending null"
    bounds = {"maxItems": "items", "minItems": "items", "maxLength": "characters", "minLength": "characters"}
    if error.validator in bounds:
        size = len(error.instance)
        most = "at most" if error.validator.startswith("max") else "at least"
        return f"{where or 'arguments'}: {size} {bounds[error.validator]}, {most} {error.validator_value} allowed"
    return f"{where or 'arguments'}: {echo(error.message, 160)}"


def validate(tool: str, args: dict, schema: dict, validator: Draft202012Validator) -> None:
    if errors := sorted(validator.iter_errors(args), key=lambda e: list(e.absolute_path)):
        problems = "; ".join(_describe(e, schema) for e in errors[:8])
        raise ToolError(f"Invalid arguments for {tool}: {problems}. You sent: {echo(args)}. Fix these and call again.")
