"""One settings object, built from the environment and the command line."""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path

from ga import config_file
from ga.errors import ConfigError
from ga.invocation import invocation


@dataclass(kw_only=True)
class Settings:
    base_url: str = ""
    """OpenAI-compatible endpoint (OPENAI_BASE_URL or GA_HOME/config.toml), e.g. http://localhost:11434/v1."""
    api_key: str = ""
    """OPENAI_API_KEY, or config.toml's api_key / api_key_env; "" for a server on this machine (it needs none)."""
    model: str = ""
    """Model name (--model, GA_MODEL or config.toml); "local" (--local) is the embedded model, served by ga itself."""
    profile: str = ""
    """--profile NAME: the [profiles.NAME] table of config.toml in effect ("" for none)."""
    missing_key: str = ""
    """Why the endpoint has no key (none kept for it, or an api_key_env not set in this shell), whose it is and how
    to give it; "" when it has one or needs none."""
    home: Path = field(default_factory=lambda: Path("~/.ga").expanduser())
    """GA_HOME: sop/, memory/ and runs/<run_id>/ live here."""
    workdir: Path = field(default_factory=Path.cwd)
    """The workspace: file tools are confined to it (plus allow_paths)."""
    allow_paths: list[Path] = field(default_factory=list)
    """Extra folders the file tools may read and write (--allow-path, repeatable)."""
    max_turns: int = 100
    """Model requests per run; 0 means no limit."""
    max_tokens: int = 0
    """Prompt + completion tokens per run; 0 means no limit."""
    max_time: float = 0
    """Wall-clock seconds per run; 0 means no limit."""
    autonomous: bool = False
    """Never block on a human: ask_user pauses the run (exit 3). Implied when stdin is not a terminal."""
    autonomous_why: str = ""
    """Why the run is autonomous, for its header: "--autonomous", "stdin is a pipe", "a background run"..."""
    mode: str = "default"
    """Permission mode: default, plan (read-only tools only) or confirm (ask before every change)."""
    stream: bool = True
    """Stream replies so text appears as it arrives."""
    request_timeout: float = 600
    """GA_REQUEST_TIMEOUT: seconds one model request may take in all, from sending it to the reply's last byte
    (a total deadline, not an idle timeout); the time left under max_time caps it too."""
    max_output_tokens: int = 8192
    """GA_MAX_OUTPUT_TOKENS: the most tokens one completion may have (sent as max_tokens); 0 sends no cap."""
    retries: int = 6
    """GA_RETRIES: retries of one model request (the openai SDK's, with its backoff and the server's Retry-After, on
    408/409/429/5xx, dropped connections and timeouts; and of a reply broken after it began)."""
    context_tokens: int = 32_000
    """GA_CONTEXT_TOKENS: the working budget each request is kept within (system prompt, tools and history). Past
    it the tool results of all but the newest turns become one-line stubs; only when stubs and recent turns fill it
    are old turns folded into a summary. The model's window caps it."""
    model_window: int = 0
    """GA_MODEL_WINDOW: the model's context length in tokens; 0 means what the server reports, if it does."""
    context_steps: str = ""
    """GA_CONTEXT_STEPS: how the history is masked when it passes the budget. "small": often, a little at a time,
    for providers that bill every prompt token; "large": rarely, deeply, for a local server, which re-reads all
    after a change at seconds per thousand tokens. Empty: "large" for --local, "small" otherwise."""
    stage2_after: int = 3
    """GA_STAGE2_AFTER: consecutive failed tool calls before the model is told to stop retrying, probe the
    environment and switch approach (a repeat of a call that already failed gets there at once); 0: only repeats."""
    stage3_after: int = 6
    """GA_STAGE3_AFTER: consecutive failed tool calls before the human is asked (autonomous: the run pauses, exit 3),
    or when stage 2 changes nothing (stage3_after - stage2_after more failures, a failed call repeated); 0: never."""
    strikes: int = 3
    """GA_STRIKES: unusable turns in a row (empty reply, reply cut by the length limit, only malformed tool calls)
    that end the run (exit 1); 0 means no limit."""
    repeat_nudge: int = 3
    """GA_REPEAT_NUDGE: the same call giving the same result this many times in a row gets a no-progress nudge."""
    repeat_stop: int = 5
    """GA_REPEAT_STOP: the same call giving the same result this many times in a row ends the run (exit 1);
    0 means no limit."""
    checkpoint_tokens: int = 200
    """Size limit of the working checkpoint."""
    sandbox: bool = False
    """Run code_run inside bubblewrap (--sandbox). Every new run gets it by default when bubblewrap works
    (--no-sandbox opts out); its network is off unless GA_SANDBOX_NET=1."""
    sandbox_why: str = ""
    """Why the sandbox is on or off, for the run's header: "--sandbox", "an autonomous run", bubblewrap's problem..."""
    headed: bool = False
    """Show the browser window."""
    browser_profile: bool = True
    """Keep a persistent browser profile under GA_HOME (cookies survive between runs)."""
    json: bool = False
    """Print one JSON object on stdout instead of the answer."""
    learn: bool = True
    """GA_LEARN (0 turns it off) / --no-learn: after a run, distil it into an SOP and keep the SOP ledger and run
    archive; off, memory is only read (SOPs are still listed) and start_long_term_update refuses."""
    skills_path: list[Path] = field(default_factory=list)
    """GA_SKILLS_PATH: extra Agent Skills folders (os.pathsep-separated, e.g. ~/.claude/skills) read in place."""
    check: str = ""
    """--check CMD / GA_CHECK: run when the model gives its final answer (as code_run would, in the workspace); the
    run is done only when it exits 0, otherwise its output goes back to the model as a failed step."""
    model_settings: str = ""
    """GA_MODEL_SETTINGS: force an entry of ga/model/models.toml (e.g. "small"), or "default" for none; empty: the
    entry that names the model, if any (--local takes the small-model one)."""
    price_in: float = 0
    """GA_PRICE_IN: dollars per million prompt tokens; with it (or price_out) a run's last line gives its cost."""
    price_out: float = 0
    """GA_PRICE_OUT: dollars per million completion tokens."""
    price_cached: float = 0
    """GA_PRICE_CACHED: dollars per million prompt tokens served from the server's cache; 0: as price_in."""

    @property
    def runs_dir(self) -> Path:
        return self.home / "runs"

    def check_endpoint(self) -> None:
        """Raise a short, actionable error when the model endpoint is not configured."""
        if self.model == "local":
            return  # the embedded model: ga starts its own server (ga/local)
        if self.base_url and self.missing_key:
            raise ConfigError(self.missing_key)  # whose key is missing, and how to give it
        if self.base_url and not self.model:
            raise ConfigError(f"No model named for {self.base_url}: give --model NAME (or GA_MODEL), or keep it with: "
                              f"{invocation()} config set model NAME")
        if not self.base_url:
            missing = ["OPENAI_BASE_URL (or OPENAI_API_KEY alone, for OpenAI)"] + ([] if self.model else ["GA_MODEL"])
            raise ConfigError(
                f"No model endpoint configured (missing: {', '.join(missing)}). Either:\n"
                "  point ga at an OpenAI-compatible server:\n"
                "    OpenAI:     OPENAI_API_KEY=sk-... (OpenAI's endpoint; GA_MODEL=gpt-4.1 to choose the model)\n"
                "    Ollama:     OPENAI_BASE_URL=http://localhost:11434/v1 GA_MODEL=qwen3 (no key on this machine)\n"
                "    llama.cpp:  OPENAI_BASE_URL=http://localhost:8080/v1 GA_MODEL=qwen\n"
                f"  or keep it in GA_HOME/config.toml: {invocation()} config set base_url URL (and model, api_key)\n"
                "  or run the embedded model with --local (or GA_MODEL=local): Qwen2.5-Coder-1.5B on llama.cpp, small "
                "and slow on a CPU but real. Its first use downloads ~1.1 GB and builds llama.cpp's server (about 10 "
                "minutes on 2 cores) into ~/.cache/ga; later runs start in seconds."
            )


_ENV = {name: f"GA_{name.upper()}" for name in (
    "home", "retries", "context_tokens", "model_window", "context_steps", "request_timeout", "max_output_tokens",
    "stage2_after", "stage3_after", "strikes", "repeat_nudge", "repeat_stop", "check", "model_settings", "price_in",
    "price_out", "price_cached")}


def _convert(name: str, raw: str, kind: type) -> object:
    try:
        if kind is Path:
            return Path(raw).expanduser()
        value = kind(raw)
        if kind is float and not math.isfinite(value):  # float("nan") and float("inf") parse
            raise ValueError(raw)
        return value
    except ValueError:
        raise ConfigError(f"{_ENV.get(name, name)}={raw!r} is not a valid {kind.__name__}") from None


def load_settings(env: Mapping[str, str] | None = None, *, remembered_url: str = "", **overrides: object) -> Settings:
    """Settings from GA_HOME/config.toml and environment variables, then explicit overrides (command-line flags) on
    top; `remembered_url`: the endpoint a resumed run started with (see ga/config_file.py for the order)."""
    env = os.environ if env is None else env
    types = {f.name: f.type for f in fields(Settings)}
    kinds = {"str": str, "Path": Path, "int": int, "float": float}
    values: dict[str, object] = {}
    for name, var in _ENV.items():
        if env.get(var):
            values[name] = _convert(name, env[var], kinds[str(types[name])])
    values.update(_memory_env(env))
    values.update({k: v for k, v in overrides.items() if v is not None})
    home = Path(values.get("home", "~/.ga")).expanduser()  # type: ignore[arg-type]
    found = config_file.resolve(home, env, profile=str(values.get("profile") or ""), remembered_url=remembered_url)
    values.setdefault("model", found.model.value)
    # a base URL given by the caller (not the file or the environment) comes with its own key
    missing = found.missing_key if not values.get("base_url") else ""
    values.update(base_url=values.get("base_url") or found.base_url.value,
                  api_key=values.get("api_key") or found.api_key.value, missing_key=missing)
    settings = Settings(**values)
    settings.home = Path(settings.home).expanduser().resolve()
    settings.workdir = Path(settings.workdir).expanduser().resolve()
    if not settings.workdir.is_dir():
        raise ConfigError(f"--workdir {settings.workdir} is not a folder")
    if not os.access(settings.workdir, os.R_OK | os.X_OK):
        raise ConfigError(f"the workspace {settings.workdir} cannot be read (permission denied): run ga where you may "
                          "read, or give --workdir DIR")
    _check_ports(env.get("GA_SANDBOX_PORTS", ""))
    if settings.mode not in ("default", "plan", "confirm"):
        raise ConfigError(f"unknown permission mode {settings.mode!r}: use default, plan or confirm")
    if settings.context_steps not in ("", "small", "large"):
        raise ConfigError(f"GA_CONTEXT_STEPS={settings.context_steps!r}: use small or large")
    _check_thresholds(settings)
    if settings.headed and not any(env.get(n) for n in ("DISPLAY", "WAYLAND_DISPLAY", "GA_BROWSER_CDP")):
        raise ConfigError("--headed shows the browser in a window, and there is no display here (DISPLAY and "
                          "WAYLAND_DISPLAY are not set): run without --headed, or with a display (ssh -X, xvfb-run).")
    return settings


def home_dir(env: Mapping[str, str] | None = None) -> Path:
    """GA_HOME, without reading anything in it (`config set` must work on a config.toml that does not parse)."""
    env = os.environ if env is None else env
    return Path(env.get("GA_HOME") or "~/.ga").expanduser().resolve()


def _memory_env(env: Mapping[str, str]) -> dict[str, object]:
    values: dict[str, object] = {}
    if raw := env.get("GA_LEARN", "").strip().lower():
        if raw not in ("0", "1", "false", "true", "no", "yes", "off", "on"):
            raise ConfigError(f"GA_LEARN={raw!r}: use 1 (learn from runs, the default) or 0 (never write memory)")
        values["learn"] = raw in ("1", "true", "yes", "on")
    if raw := env.get("GA_SKILLS_PATH", ""):
        values["skills_path"] = [Path(p).expanduser().resolve() for p in raw.split(os.pathsep) if p.strip()]
    return values


def _check_ports(given: str) -> None:
    """GA_SANDBOX_PORTS: host ports by number, comma-separated (tools/guard/sandbox_ports.py reads them)."""
    for part in filter(None, (p.strip() for p in given.split(","))):
        if not part.isdigit() or not 0 < int(part) < 65536:
            raise ConfigError(f"GA_SANDBOX_PORTS={given.strip()!r}: {part!r} is not a port; give the host's ports by "
                              "number, comma-separated (e.g. GA_SANDBOX_PORTS=8799,5432)")


def _check_thresholds(s: Settings) -> None:
    for name in ("stage2_after", "stage3_after", "strikes", "repeat_nudge", "repeat_stop", "max_output_tokens",
                 "price_in", "price_out", "price_cached"):
        if getattr(s, name) < 0:
            raise ConfigError(f"{_ENV[name]} must be 0 (off) or more")
    if s.context_tokens < 2_000:  # the system prompt and the tools alone take about 1,300
        raise ConfigError(f"GA_CONTEXT_TOKENS={s.context_tokens} is too small: give at least 2000 tokens")
    if s.model_window and s.model_window < 2_000:
        raise ConfigError(f"GA_MODEL_WINDOW={s.model_window} is too small: give at least 2000 tokens, or 0 "
                          "for what the server reports")
    if s.stage2_after and s.stage3_after and s.stage3_after <= s.stage2_after:
        raise ConfigError(f"GA_STAGE3_AFTER ({s.stage3_after}) must be larger than GA_STAGE2_AFTER ({s.stage2_after})")
