"""Per-model behaviour: the crutches a small model needs, on for the models an entry of models.toml names (and for
--local), off for every other model, so a capable model's ordinary reply goes through untouched."""

from __future__ import annotations

import dataclasses
import fnmatch
import functools
from dataclasses import dataclass
from pathlib import Path

from ga.errors import ConfigError

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

ENTRIES = Path(__file__).with_name("models.toml")
FORCE_ENV = "GA_MODEL_SETTINGS"
ACTION_FORMATS = ("tools", "bash")


@dataclass(kw_only=True, frozen=True)
class ModelSettings:
    name: str = "default"
    """The entry that applies ("default": none does)."""
    doubt_answers: bool = False
    """A reply without a tool call that does not read as an answer (a null value, a step announced but not taken,
    a request for the task it was given, ga's own instructions echoed, one word after a failure) is doubted once
    before it ends the run. A small model writes such replies; a capable model's "Let me know if..." is an answer."""
    drop_echoed_arguments: bool = False
    """An optional argument whose value copies six or more words of the schema's own prose is dropped (a small model
    sent file_read's keyword description as the keyword)."""
    loop_chars: int = 16_000
    loop_repeats: int = 32
    """A reply whose text or arguments end in one block repeated this many times over this many characters is
    stopped mid-stream. For everyone, at sizes a data file does not reach; a small model loops far sooner."""
    numbers_loop: bool = False
    """A block repeated with only its numbers changing is a loop too (at twice the sizes above). Off by default: 60
    records that differ by their numbers are a data file."""
    call_repeats: int = 0
    """A reply whose tool calls end in one run of calls made this many times over is stopped (0: never)."""
    text_calls: bool = False
    """A reply without native calls whose whole text is calls to known tools (a fenced JSON block, <tool_call> tags,
    <function=NAME>) runs as those calls, and stray brackets or empty tags beside native calls are dropped. Off, a
    capable model that quotes a call in its answer is answering."""
    tool_repairs: bool = False
    """A tool's repair of a small model's slip runs before validation, and the model is told (code_run: a shell
    command sent as Python runs as bash). Off, the call runs as sent and its error says what to change."""
    failure_hint: bool = False
    """Every failed call's result ends with a reminder to read the error and make one small fix."""
    min_read_lines: int = 0
    """A file_read `count` below this runs as sent with a note to ask for more next time (0: no note). A small model
    paged a 675-line README three lines a turn, taking the 3 of "three bullet points" for a count; refusing such a
    call cost a turn where `count=1 keyword=capital` would have found the answer."""
    max_reply_tokens: int = 0
    reply_share: float = 0.0
    """One reply's tokens at most, below GA_MAX_OUTPUT_TOKENS (0: that alone), and the share of the run's time left
    (--max-time) it may take once begun, past which it is cut as by the length limit (0: all). A 1.5B model's
    looping reply ran for 7 minutes at 8,192 tokens and spent a run's whole time."""
    workspace_preview: bool = False
    """The first message shows a small workspace's files with their first lines (ga/context/workspace.py): a small
    model acts on what it was shown, and seldom reads a file before it writes."""
    doubt_claims: bool = True
    """A final answer that claims a change ("saved", "updated"...) when the workspace shows none is doubted once, then
    ends the run failed; one given while a file the task names is unwritten is doubted once (ga/escalation.py)."""
    defer_tools: bool = True
    """The schemas of the rarely needed tools (web_scan, web_execute_js, update_working_checkpoint,
    start_long_term_update) are sent once the run calls one or a URL appears; one line names them (~460 tokens)."""
    action_format: str = "tools"
    """How the model acts: "tools", native tool calls with the tools' schemas; "bash", one fenced shell block per
    reply run by code_run, no schemas sent (ga/model/text_actions.py), for models weak at choosing tools."""
    whole_sops: bool = False
    """The SOPs listed for a task are shown whole (up to a few hundred tokens each), not only named: a small model
    follows a usage line it can see, and seldom opens a file to find one. Short ones are shown whole to every model."""

    def __post_init__(self) -> None:
        if self.action_format not in ACTION_FORMATS:
            raise ConfigError(f"model settings {self.name!r}: action_format {self.action_format!r} is not one of "
                              f"{', '.join(ACTION_FORMATS)}")


@functools.cache
def _entries() -> dict[str, dict]:
    with ENTRIES.open("rb") as f:
        return tomllib.load(f)


def settings_for(model: str, *, local: bool = False, force: str | None = None) -> ModelSettings:
    """The settings of `model`: the forced entry (GA_MODEL_SETTINGS), else the first entry naming it, else none.
    `force` may end in overrides, `NAME:field=value,...` (`small:failure_hint=false`): an ablation of one field."""
    entries = _entries()
    if force:
        name, _, overrides = force.partition(":")
        if name != "default" and name not in entries:
            raise ConfigError(f"{FORCE_ENV}={force!r}: no such entry in {ENTRIES.name} (entries: default, "
                              f"{', '.join(entries)})")
        found = _settings(name, entries[name]) if name != "default" else ModelSettings()
        return dataclasses.replace(found, **_overrides(force, overrides)) if overrides else found
    lowered = model.lower()
    for name, entry in entries.items():
        if (local and entry.get("local")) or any(fnmatch.fnmatchcase(lowered, g) for g in entry.get("match", ())):
            return _settings(name, entry)
    return ModelSettings()


def _settings(name: str, entry: dict) -> ModelSettings:
    known = {f.name for f in dataclasses.fields(ModelSettings)} - {"name"}
    return ModelSettings(name=name, **{k: v for k, v in entry.items() if k in known})


def _overrides(force: str, text: str) -> dict:
    """`field=value,...` as typed values of ModelSettings' fields; a clear error for an unknown field or value."""
    fields = {f.name: f.type for f in dataclasses.fields(ModelSettings)} | {"name": None}
    found = {}
    for item in text.split(","):
        key, eq, value = (part.strip() for part in item.partition("="))
        if not eq or key not in fields or key == "name":
            raise ConfigError(f"{FORCE_ENV}={force!r}: {item.strip()!r} is not FIELD=VALUE with a field of "
                              f"{ENTRIES.name} (fields: {', '.join(sorted(set(fields) - {'name'}))})")
        try:
            found[key] = tomllib.loads(f"v = {value.lower() if value.lower() in ('true', 'false') else value}")["v"]
        except tomllib.TOMLDecodeError:
            if fields[key] != "str":
                raise ConfigError(f"{FORCE_ENV}={force!r}: {value!r} is not a value for {key} (true, false or a "
                                  "number)") from None
            found[key] = value
    return found
