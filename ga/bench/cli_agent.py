"""Any CLI agent from a small TOML config: a command template, the environment that points it at the proxy, the
files it needs in its HOME, where its own log is, and how to install it.

    name = "my-agent"
    api = "chat"                     # what it speaks: chat, responses or anthropic (for the report)
    tested = true                    # tested with this harness (false: a starting point, not checked here)
    install = ["python3 -m venv ${prefix}", "${prefix}/bin/pip install my-agent"]
    command = ["${prefix}/bin/my-agent", "--workdir", "${workdir}", "${instruction}"]
    logs = ["${home}/.my-agent/sessions/*.jsonl"]        # copied into the trial's logs/agent/
    [env]
    OPENAI_BASE_URL = "${openai_base_url}"
    OPENAI_API_KEY = "${api_key}"
    [files]                          # written under HOME before the run
    ".my-agent/config.json" = '{"model": "${model}"}'

Placeholders (${name}): instruction, instruction_file, workdir, home, ga_home, log_dir, model, max_turns, timeout
(the seconds left in the trial, e.g. for a request timeout), openai_base_url, anthropic_base_url, api_key (a dummy:
the proxy holds the real key), prefix (the install folder,
$GA_BENCH_AGENTS/NAME, default ~/.cache/ga/bench-agents/NAME), python, root (ga's checkout), and each variable
named in `requires_env` (e.g. the path of a checkout the user gives).
"""

from __future__ import annotations

import glob
import os
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from string import Template

from ga.bench.context import DUMMY_KEY, ROOT, AgentRun, TrialContext
from ga.bench.process import run_program
from ga.bench.tasks import tomllib
from ga.errors import ConfigError


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
        return cls(**config)

    @property
    def prefix(self) -> Path:
        return agents_prefix() / self.name

    def variables(self, ctx: TrialContext | None = None) -> dict[str, str]:
        values = {"prefix": str(self.prefix), "python": sys.executable, "root": str(ROOT), "api_key": DUMMY_KEY}
        for name in self.requires_env:
            if not os.environ.get(name):
                raise ConfigError(f"Agent {self.name} needs {name}: set it (see ga/bench/agents/{self.name}.toml).")
            values[name] = os.environ[name]
        if ctx is not None:
            instruction_file = ctx.logs / "instruction.md"
            instruction_file.write_text(ctx.instruction, encoding="utf-8")
            values.update(instruction=ctx.instruction, instruction_file=str(instruction_file),
                          workdir=str(ctx.workspace), home=str(ctx.home), ga_home=str(ctx.ga_home),
                          log_dir=str(ctx.logs), model=ctx.model, max_turns=str(ctx.max_turns),
                          timeout=f"{max(60.0, ctx.remaining()):.0f}",
                          openai_base_url=ctx.openai_url, anthropic_base_url=ctx.anthropic_url)
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
            hint = f"python run.py bench install {self.name}" if self.install else "install it"
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
        return AgentRun(exit_code=done.exit_code, timed_out=done.timed_out, wall_s=done.wall_s, error=error)

    def _collect_logs(self, values: dict[str, str], into: Path) -> None:
        for pattern in self.logs:
            for found in glob.glob(self.fill(pattern, values), recursive=True):
                into.mkdir(parents=True, exist_ok=True)
                if Path(found).is_file():
                    shutil.copy2(found, into / Path(found).name)

    def install_now(self, force: bool = False) -> int:
        """Run the install commands (python run.py bench install NAME [--force]); returns the exit code."""
        if not self.install:
            print(f"{self.name}: nothing to install (its config has no install commands)", file=sys.stderr)
            return 2
        values = self.variables()
        program = self.fill(self.command[0], values)
        if not force and Path(program).is_file():
            print(f"{self.name}: already installed ({program}); --force installs again", file=sys.stderr)
            return 0
        self.prefix.mkdir(parents=True, exist_ok=True)
        quoted = {k: shlex.quote(v) for k, v in values.items()}  # install lines are shell commands
        for line in self.install:
            command = self.fill(line, quoted)
            print(f"$ {command}", file=sys.stderr, flush=True)
            if (rc := subprocess.run(command, shell=True, check=False).returncode) != 0:
                print(f"{self.name}: install step failed (exit {rc})", file=sys.stderr)
                return rc
        return 0
