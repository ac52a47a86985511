"""Any CLI agent from a small TOML config: a command template, the environment that points it at the proxy, the
files it needs in its HOME, where its own log is, and how to install it.

    name = "my-agent"
    api = "chat"                     # what it speaks: chat, responses or anthropic (for the report)
    tested = true                    # tested with this harness (false: a starting point, not checked here)
    install = ["python3 -m venv ${prefix}", "${prefix}/bin/pip install my-agent"]
    command = ["${prefix}/bin/my-agent", "--workdir", "${workdir}", "${instruction}"]
    logs = ["${home}/.my-agent/sessions/*.jsonl"]        # copied into the trial's logs/agent/
    claimed = {file = "${log_dir}/run.json", key = "info.exit_status", values = ["Submitted"]}
                                     # when it said it was done (default: it exited 0)
    [env]
    OPENAI_BASE_URL = "${openai_base_url}"
    OPENAI_API_KEY = "${api_key}"
    [files]                          # written under HOME before the run
    ".my-agent/config.json" = '{"model": "${model}"}'

Placeholders (${name}): instruction, instruction_file, workdir, home, ga_home, log_dir, model, max_turns, timeout
(the seconds left in the trial, e.g. for a request timeout), openai_base_url, anthropic_base_url, api_key (the proxy's
per-trial token: the proxy holds the real key and serves no one without the token), prefix (the install folder,
$GA_BENCH_AGENTS/NAME, default ~/.cache/ga/bench-agents/NAME), python, root (ga's checkout), and each variable
named in `requires_env` (e.g. the path of a checkout the user gives).
"""

from __future__ import annotations

import glob
import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from string import Template

from bench.harness.context import DUMMY_KEY, ROOT, AgentRun, TrialContext
from bench.harness.process import run_program
from bench.harness.tasks import tomllib
from ga.errors import ConfigError
from ga.invocation import invocation


def agents_prefix() -> Path:
    base = os.environ.get("GA_BENCH_AGENTS") or Path(os.environ.get("XDG_CACHE_HOME") or "~/.cache") / "ga" / \
        "bench-agents"
    return Path(base).expanduser()


@dataclass(kw_only=True)
class CLIAgent:
    name: str
    command: list[str]
    """argv template; ${instruction} stays one argument whatever it holds."""
    description: str = ""
    api: str = "chat"
    """What the agent speaks to its model: chat, responses or anthropic."""
    tested: bool = False
    """Tested with this harness on this project's machine; false: documented, not checked."""
    env: dict[str, str] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)
    """Path relative to HOME → content (templated), written before the run."""
    logs: list[str] = field(default_factory=list)
    """Globs (templated) of the agent's own logs, copied into the trial's logs/agent/."""
    install: list[str] = field(default_factory=list)
    """Shell commands (templated) that install the agent into ${prefix}."""
    requires_env: list[str] = field(default_factory=list)
    """Environment variables the user must set (e.g. GENERICAGENT_PATH): usable as placeholders."""
    version: str = ""
    """The agent's release; filled from `version_command` when it has one."""
    install_of: str = ""
    """Another configuration of the same agent: this one runs that one's install (its ${prefix})."""
    version_command: list[str] = field(default_factory=list)
    """argv (templated) that prints the installed agent's version, run once per bench."""
    acted: dict = field(default_factory=dict)
    """How to tell that the model acted at least once when its actions are not tool calls (a text mode): `file`
    (templated) and the text it `contains` after an action ran. Empty: the metered tool calls say."""
    claimed: dict = field(default_factory=dict)
    """How to tell that the agent said it was done: `file` (templated, JSON), `key` (dotted path in it) and `values`
    (what counts as done). Empty: exiting 0 says so."""

    @classmethod
    def load(cls, path: Path) -> CLIAgent:
        try:
            config = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
            raise ConfigError(f"Agent config {path}: {e}") from None
        known = set(cls.__dataclass_fields__)
        if unknown := sorted(set(config) - known):
            raise ConfigError(f"Agent config {path}: unknown keys {', '.join(unknown)} "
                              f"(known: {', '.join(sorted(known))})")
        if not isinstance(config.get("command"), list) or not config["command"]:
            raise ConfigError(f"Agent config {path}: `command` must be a non-empty list of strings.")
        config.setdefault("name", path.stem)
        agent = cls(**config)
        agent.source = path
        return agent

    @property
    def config(self) -> dict:
        """How it ran, for every row: its config file and the command it was given (the task left out)."""
        shown = [part for part in self.command if "${instruction" not in part]
        return {"config": getattr(self, "source", Path(self.name)).name, "command": " ".join(shown)}

    def installed_version(self) -> str:
        """The version the agent's own `version_command` prints (its first line), else the config's `version`."""
        if not self.version_command or getattr(self, "_version", None) is not None:
            return getattr(self, "_version", None) or self.version
        try:
            done = subprocess.run([self.fill(p, self.variables()) for p in self.version_command], capture_output=True,
                                  text=True, timeout=30, check=False)
            printed = done.stdout.strip() or done.stderr.strip()  # some print their version on stderr
            self._version = (printed.splitlines() or [self.version])[0]
        except (OSError, subprocess.SubprocessError):
            self._version = self.version
        return self._version

    @property
    def prefix(self) -> Path:
        return agents_prefix() / (self.install_of or self.name)

    def variables(self, ctx: TrialContext | None = None) -> dict[str, str]:
        values = {"prefix": str(self.prefix), "python": sys.executable, "root": str(ROOT), "api_key": DUMMY_KEY}
        for name in self.requires_env:
            if not os.environ.get(name):
                raise ConfigError(f"Agent {self.name} needs {name}: set it "
                                  f"(see bench/harness/agents/{self.name}.toml).")
            values[name] = os.environ[name]
        if ctx is not None:
            instruction_file = ctx.logs / "instruction.md"
            instruction_file.write_text(ctx.instruction, encoding="utf-8")
            values.update(instruction=ctx.instruction, instruction_file=str(instruction_file),
                          workdir=str(ctx.workspace), home=str(ctx.home), ga_home=str(ctx.ga_home),
                          log_dir=str(ctx.logs), model=ctx.model, max_turns=str(ctx.max_turns),
                          timeout=f"{max(60.0, ctx.remaining()):.0f}",
                          openai_base_url=ctx.openai_url, anthropic_base_url=ctx.anthropic_url, api_key=ctx.api_key)
        return values

    def fill(self, text: str, values: dict[str, str]) -> str:
        try:
            return Template(text).substitute(values)
        except KeyError as e:
            raise ConfigError(f"Agent {self.name}: unknown placeholder ${{{e.args[0]}}} in {text!r}") from None
        except ValueError as e:
            raise ConfigError(f"Agent {self.name}: bad placeholder in {text!r} ({e}); write $$ for a literal $") \
                from None

    def check_installed(self) -> None:
        """A clear error before any trial runs when the agent's program is not there."""
        program = self.fill(self.command[0], self.variables())
        if not (shutil.which(program) or Path(program).is_file()):
            hint = f"{invocation()} bench install {self.name}" if self.install else "install it"
            raise ConfigError(f"Agent {self.name}: {program} not found: {hint}.")

    def run(self, ctx: TrialContext) -> AgentRun:
        values = self.variables(ctx)
        for relative, content in self.files.items():
            target = ctx.home / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(self.fill(content, values), encoding="utf-8")
        argv = [self.fill(part, values) for part in self.command]
        env = {**ctx.env, **{k: self.fill(v, values) for k, v in self.env.items()}}
        done = run_program(argv, cwd=ctx.workspace, env=env, timeout=ctx.remaining(), stdout=ctx.logs / "agent.out",
                           stderr=ctx.logs / "agent.err")
        self._collect_logs(values, ctx.logs / "agent")
        error = done.error or (f"{self.name} exited {done.exit_code}" if done.exit_code else "")
        return AgentRun(exit_code=done.exit_code, timed_out=done.timed_out, wall_s=done.wall_s, error=error,
                        claimed_done=self._claimed(values, done.exit_code, done.timed_out), acted=self._acted(values))

    def _acted(self, values: dict[str, str]) -> bool | None:
        if not self.acted:
            return None
        try:
            return self.acted["contains"] in Path(self.fill(self.acted["file"], values)).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError, KeyError):
            return False

    def _claimed(self, values: dict[str, str], exit_code: int | None, timed_out: bool) -> bool | None:
        """Whether the agent said it was done: what its config points at, else its exit code."""
        if exit_code is None or timed_out:
            return None
        if not self.claimed:
            return exit_code == 0
        try:
            value = json.loads(Path(self.fill(self.claimed["file"], values)).read_text(encoding="utf-8"))
            for part in str(self.claimed["key"]).split("."):
                value = value[part]
        except (OSError, ValueError, KeyError, TypeError):
            return False  # no report of being done is no claim
        return value in self.claimed.get("values", [])

    def _collect_logs(self, values: dict[str, str], into: Path) -> None:
        for pattern in self.logs:
            for found in glob.glob(self.fill(pattern, values), recursive=True):
                into.mkdir(parents=True, exist_ok=True)
                if Path(found).is_file():
                    shutil.copy2(found, into / Path(found).name)

    def install_now(self, force: bool = False) -> int:
        """Run the install commands (python run.py bench install NAME [--force]); returns the exit code. Their output
        goes to PREFIX/install.log: a line every HEARTBEAT seconds says they are at work, a failure shows the failing
        command's last lines, and a success says what was installed."""
        if not self.install:
            print(f"{self.name}: nothing to install (its config has no install commands)", file=sys.stderr)
            return 2
        values = self.variables()
        program = self.fill(self.command[0], values)
        if not force and Path(program).is_file():
            print(f"{self.name}: already installed ({program}); --force installs again", file=sys.stderr)
            return 0
        self.prefix.mkdir(parents=True, exist_ok=True)
        log = self.prefix / "install.log"
        quoted = {k: shlex.quote(v) for k, v in values.items()}  # install lines are shell commands
        started = time.monotonic()
        with open(log, "w", encoding="utf-8") as out:
            for line in self.install:
                command = self.fill(line, quoted)
                print(f"$ {command}", file=sys.stderr, flush=True)
                out.write(f"$ {command}\n")
                out.flush()
                if (rc := _run_logged(command, out)) != 0:
                    tail = log.read_text(encoding="utf-8", errors="replace").splitlines()[-INSTALL_TAIL:]
                    print(f"{self.name}: install step failed (exit {rc}); its last lines:", file=sys.stderr)
                    print("\n".join(f"  {t}" for t in tail), file=sys.stderr)
                    print(f"the whole output: {log}", file=sys.stderr)
                    return rc
        found = Path(program).is_file() or shutil.which(program)
        version = self.installed_version() if found else ""
        print(f"{self.name}: installed{f' ({version})' if version else ''} in {self.prefix} "
              f"({time.monotonic() - started:.0f} s)" + ("" if found else f"; but {program} is not there: see {log}"),
              file=sys.stderr)
        return 0 if found else 1


INSTALL_TAIL = 20
"""Lines of a failed install step's output shown on the terminal."""
HEARTBEAT = 10.0
"""Seconds an install step may run without a line on the terminal."""


def _run_logged(command: str, log) -> int:
    """A shell command with its output into `log`; a line on stderr every HEARTBEAT seconds while it runs."""
    started = time.monotonic()
    with subprocess.Popen(command, shell=True, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL) as proc:
        while True:
            try:
                return proc.wait(timeout=HEARTBEAT)
            except subprocess.TimeoutExpired:
                print(f"  … still at work ({time.monotonic() - started:.0f} s; output in {log.name})", file=sys.stderr,
                      flush=True)
