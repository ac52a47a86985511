"""The command policy's corpus through code_run, as an unattended run meets it, with and without the sandbox.

Dangerous commands: refused, asked (denied unattended) or executed (the policy let them through). Those the
policy lets through are then run as `--no-sandbox` runs them, inside a bwrap mount namespace where only the
throw-away folder is writable (the host is read-only, so what they can harm is the throw-away HOME), and counted
when they did harm there. With the sandbox every command the policy lets through runs,
and so does every dangerous command with the policy bypassed ("the sandbox alone"); after each, canaries
outside the workspace are compared: a throw-away HOME (outside /tmp) with dotfiles, ~/.ssh and GA_HOME, the
workspace's .git, a few host files, the host's mounts and root's crontab; and git metadata left in the workspace
that the host's next git command would run (a hook, core.fsmonitor or an alias in any repository, nested or new).
Everyday commands: wrongly refused (refused or asked) and, run for real in a throw-away workspace both ways, those
that fail only in the sandbox.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

from ga.config import load_settings
from ga.errors import PermissionDenied
from ga.tooling.spec import ToolContext
from tests.scripted import ScriptedTerminal
from tests.tools.guard.corpus import DANGEROUS, EVERYDAY, Case
from tools.code_run import SPEC
from tools.guard import sandbox_probe

HOST_FILES = [Path(p) for p in ("/etc/hosts", "/etc/passwd", "/etc/shadow", "/etc/ssh/sshd_config", "/etc/fstab")]


def _setup(home: Path) -> Path:
    shutil.rmtree(home, ignore_errors=True)
    workspace = home / "project"
    for folder in (workspace, home / "docs", home / ".ssh", home / ".ga" / "schedule"):
        folder.mkdir(parents=True)
    (home / "docs/keep.txt").write_text("keep\n")
    (home / ".bashrc").write_text("# bashrc\n")
    (home / ".profile").write_text("# profile\n")
    (home / ".ssh/authorized_keys").write_text("ssh-ed25519 AAAA owner\n")
    (home / ".ga/policy.json").write_text("{}\n")
    (workspace / "list.txt").write_text("build\n")
    for name in ("hook.sh", "evil.sh", "job.toml"):
        (workspace / name).write_text("#!/bin/sh\necho hi\n")
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    subprocess.run(["git", "-C", str(workspace), "-c", "user.name=b", "-c", "user.email=b@x", "commit", "-q",
                    "--allow-empty", "-m", "start"], check=True)
    subprocess.run(["git", "init", "-q", str(workspace / "vendor/lib")], check=True)  # a nested repository
    return workspace


_RUNS_CODE = re.compile(r"^(core\.(fsmonitor|hookspath|pager|sshcommand|editor|askpass|gitproxy)|alias\..*=!|"
                        r"filter\.|diff\..*\.(textconv|command)|merge\..*\.driver|include|sequence\.editor|"
                        r"credential\.helper|gpg\.)", re.I | re.M)
"""Config keys git turns into a command (the common ones: a measure, not the sandbox's own list)."""


def _armed_git(home: Path, workspace: Path) -> list[str]:
    """Git metadata in the workspace (or HOME's git config) that the host's next git command would run."""
    found = []
    for config in [*workspace.rglob("config"), home / ".gitconfig", home / ".config/git/config"]:
        if not config.is_file():
            continue
        listed = subprocess.run(["git", "config", "--file", str(config), "--list"], capture_output=True, text=True,
                                check=False).stdout
        if _RUNS_CODE.search(listed):
            found.append(str(config))
    found += [str(h) for h in workspace.rglob("hooks/*") if h.is_file() and not h.name.endswith(".sample")
              and ".disabled-by-ga" not in str(h)]
    return found


def _snapshot(home: Path, workspace: Path) -> dict[str, str]:
    digest: dict[str, str] = {}
    for path in sorted(home.rglob("*")):
        inside = path.is_relative_to(workspace) and not path.is_relative_to(workspace / ".git")
        if path.is_file() and not inside and not path.is_relative_to(home / ".ga" / "runs"):
            digest[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
    for path in HOST_FILES:
        if path.exists():
            digest[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
    digest["mounts"] = hashlib.sha256(Path("/proc/self/mounts").read_bytes()).hexdigest()
    if shutil.which("crontab"):
        listed = subprocess.run(["crontab", "-l"], capture_output=True, text=True, check=False)
        digest["crontab"] = hashlib.sha256((listed.stdout + listed.stderr).encode()).hexdigest()
    return digest


def _context(home: Path, workspace: Path, boxed: bool) -> ToolContext:
    settings = load_settings(env={}, home=home / ".ga", workdir=workspace, autonomous=True, sandbox=boxed)
    run_dir = settings.runs_dir / "corpus"
    run_dir.mkdir(parents=True, exist_ok=True)
    return ToolContext(settings=settings, run_dir=run_dir, ui=ScriptedTerminal(), call_id="corpus")


def _verdict(case: Case, ctx: ToolContext) -> str:
    try:
        SPEC.check({"script": case.script, "type": case.kind}, ctx)
    except PermissionDenied as e:
        return "refused" if "catastrophic" in str(e) else "asked"
    return "executed"


def _execute(case: Case, home: Path, boxed: bool) -> tuple[bool, int | None]:
    """Run the command in a fresh throw-away home: (did harm outside the workspace, exit code)."""
    workspace = _setup(home)
    before = _snapshot(home, workspace)
    ctx = _context(home, workspace, boxed)
    script = case.script.replace("/home/alice", str(home))
    result = SPEC.run({"script": script, "type": case.kind, "timeout": 30}, ctx)
    ctx.close()
    return _snapshot(home, workspace) != before or bool(_armed_git(home, workspace)), result.details.get("exit_code")


def corpus_figures() -> None:
    root = Path(tempfile.mkdtemp(prefix="ga-corpus-", dir="/var/tmp"))  # outside /tmp: hidden by the sandbox
    home = root / "home"
    saved = os.environ.get("HOME")
    os.environ["HOME"] = str(home)
    try:
        _figures(home)
    finally:
        os.environ["HOME"] = saved or ""
        shutil.rmtree(root, ignore_errors=True)


def _unsandboxed_harm(cases: list[Case], home: Path) -> list[Case] | str:
    """The cases run without the sandbox, as `--no-sandbox` runs them, each in a fresh throw-away home: the ones
    that did harm. They run in a child process inside a bwrap mount namespace where only the throw-away folder is
    writable, so a command the policy wrongly lets through cannot reach the host's own files."""
    if not cases:
        return []
    if shutil.which("bwrap") is None:
        return "skipped (bwrap is not installed)"
    root = str(home.parent)
    command = ["bwrap", "--ro-bind", "/", "/", "--bind", root, root, "--dev", "/dev", "--proc", "/proc",
               "--tmpfs", "/tmp", "--die-with-parent", "--chdir", str(Path(__file__).resolve().parents[2]),
               sys.executable, "-m", "bench.perf.bench_corpus", "unsandboxed", str(home)]
    payload = json.dumps([[c.script, c.kind] for c in cases])
    done = subprocess.run(command, input=payload, capture_output=True, text=True, timeout=60 * len(cases),
                          check=False)
    if done.returncode != 0:
        return f"skipped (the isolated run failed: {done.stderr.strip()[-300:]})"
    harmed = set(json.loads(done.stdout.strip().splitlines()[-1]))
    return [c for i, c in enumerate(cases) if i in harmed]


def _figures(home: Path) -> None:
    workspace = _setup(home)
    ctx = _context(home, workspace, False)
    verdicts = {case: _verdict(replace(case, script=case.script.replace("/home/alice", str(home))), ctx)
                for case in DANGEROUS}
    counts = {v: sum(1 for x in verdicts.values() if x == v) for v in ("refused", "asked", "executed")}
    wrongly = [c for c in EVERYDAY if _verdict(c, ctx) != "executed"]
    executed = [c.script[:50] for c in DANGEROUS if verdicts[c] == "executed"]
    print(f"corpus, dangerous ({len(DANGEROUS)}), without the sandbox: refused {counts['refused']}, "
          f"asked {counts['asked']} (denied unattended), executed {counts['executed']} (counted, not run)"
          + (f": {'; '.join(executed)}" if executed else ""))
    print(f"corpus, everyday ({len(EVERYDAY)}): wrongly refused or asked {len(wrongly)} "
          + (f"({'; '.join(c.script[:40] for c in wrongly)})" if wrongly else ""))
    harmed_bare = _unsandboxed_harm([c for c in DANGEROUS if verdicts[c] == "executed"], home)
    print(f"corpus, dangerous, --no-sandbox: executed {counts['executed']}, of which harmed the throw-away home: "
          + (harmed_bare if isinstance(harmed_bare, str) else f"{len(harmed_bare)}"
             + (f" ({'; '.join(c.script[:50] for c in harmed_bare)})" if harmed_bare else "")))
    if problem := sandbox_probe.problem():
        print(f"corpus with the sandbox: skipped ({problem})")
        return
    let_through = [c for c in DANGEROUS if verdicts[c] == "executed"]
    harmed = [c for c in let_through if _execute(c, home, True)[0]]
    print(f"corpus, dangerous, with the sandbox: refused {counts['refused']}, asked {counts['asked']}, "
          f"executed {len(let_through)} of which harmed outside the workspace: {len(harmed)}")
    alone = [c for c in DANGEROUS if _execute(c, home, True)[0]]
    print(f"the sandbox alone (policy bypassed, all {len(DANGEROUS)} dangerous commands run inside it): "
          f"harm outside the workspace {len(alone)}" + (f" ({'; '.join(c.script[:50] for c in alone)})"
                                                        if alone else ""))
    failing = [c for c in EVERYDAY if _execute(c, home, False)[1] == 0 and _execute(c, home, True)[1] != 0]
    print(f"everyday commands that succeed without the sandbox but fail in it: {len(failing)} "
          + (f"({'; '.join(c.script[:40] for c in failing)})" if failing else ""))


if __name__ == "__main__" and sys.argv[1:2] == ["unsandboxed"]:  # the isolated child of _unsandboxed_harm
    os.environ["HOME"] = sys.argv[2]
    cases = [Case(script, kind=kind) for script, kind in json.loads(sys.stdin.read())]
    print(json.dumps([i for i, case in enumerate(cases) if _execute(case, Path(sys.argv[2]), False)[0]]))
