"""GA_HOME/config.toml through the real run.py: `config set` and `config`, profiles, what overrides what, and runs
that remember their endpoint (never the key) so a resume works from a shell with nothing set."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys

import pytest

from tests.ga.cli.test_cli import RUN_PY, ga, ga_env, only_run, wait_for
from tests.ga.jobs.test_schedule import as_cron_runs
from tests.scripted import ScriptedServer, tool_call

DEAD = "http://127.0.0.1:9/v1"  # the discard port: nothing answers there


@pytest.fixture
def home(tmp_path):
    return tmp_path / "home"


def config(args: list[str], home, cwd, stdin: str = "", **extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, RUN_PY, "config", *args], cwd=cwd, env=ga_env(None, home, **extra),
                          input=stdin, capture_output=True, text=True, timeout=60, check=False)


def write_config(home, text: str) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(text)
    os.chmod(home / "config.toml", 0o600)


def test_config_set_writes_a_private_file_and_config_shows_where_each_setting_comes_from(home, workspace):
    assert config(["set", "base_url", "http://127.0.0.1:8080/v1"], home, workspace).returncode == 0
    assert config(["set", "model", "qwen"], home, workspace).returncode == 0
    typed = config(["set", "api_key"], home, workspace, stdin="sk-secret-key-1234567890\n")  # not on the line
    assert typed.returncode == 0, typed.stderr
    assert "sk-secret-key" not in typed.stdout
    assert stat.S_IMODE((home / "config.toml").stat().st_mode) == 0o600
    shown = config([], home, workspace, GA_MODEL="from-env")
    assert shown.returncode == 0, shown.stderr
    lines = {line.split()[0]: line.split()[1:] for line in shown.stdout.splitlines()[1:]}
    assert lines["base_url"] == ["http://127.0.0.1:8080/v1", "config.toml"]
    assert lines["model"] == ["from-env", "GA_MODEL"]  # the environment overrides the file
    assert lines["api_key"][0] == "sk-…7890" and "sk-secret-key-1234567890" not in shown.stdout
    as_json = json.loads(config(["--json"], home, workspace).stdout)
    assert as_json["settings"]["api_key"] == {"value": "sk-…7890", "source": "api_key (config.toml)"}


def test_a_run_takes_its_endpoint_from_the_file(home, workspace):
    with ScriptedServer([{"content": "from the file"}]) as server:
        write_config(home, f'base_url = "{server.url}"\nmodel = "file-model"\napi_key = "k"\n')
        proc = ga(["Hello"], None, home, workspace)
        sent = server.requests[0]["model"]
    assert proc.returncode == 0, proc.stderr
    assert "from the file" in proc.stdout and sent == "file-model"


def test_a_profile_is_chosen_with_the_flag_and_the_environment_overrides_the_top_level(home, workspace):
    with ScriptedServer([{"content": "profile"}, {"content": "env"}]) as server:
        write_config(home, f'base_url = "{DEAD}"\nmodel = "top"\napi_key = "k"\n\n[profiles.fake]\n'
                           f'base_url = "{server.url}"\nmodel = "fake-model"\napi_key = "p"\n')
        by_profile = ga(["Hello", "--profile", "fake"], None, home, workspace)
        by_env = ga(["Hello"], None, home, workspace, OPENAI_BASE_URL=server.url, OPENAI_API_KEY="e",
                    GA_MODEL="env-model")
        models = [r["model"] for r in server.requests]
    assert by_profile.returncode == 0 and by_env.returncode == 0, by_profile.stderr + by_env.stderr
    assert models == ["fake-model", "env-model"]


def test_the_files_key_is_never_sent_to_another_endpoint(home, workspace):
    write_config(home, f'base_url = "{DEAD}"\nmodel = "m"\napi_key = "sk-for-dead"\n')
    proc = ga(["Hello"], None, home, workspace, OPENAI_BASE_URL="https://elsewhere.example.test/v1")
    assert proc.returncode == 2 and "No API key for https://elsewhere.example.test/v1" in proc.stderr, proc.stderr
    assert f"config.toml's key is kept for {DEAD}" in proc.stderr


def test_a_paused_run_resumes_from_a_shell_with_nothing_set(home, workspace):
    ask = {"tool_calls": [tool_call("ask_user", question="Which file?", candidates=["a.txt", "b.txt"])]}
    with ScriptedServer([ask, {"content": "b it is"}]) as server:
        write_config(home, f'base_url = "{DEAD}"\n\n[profiles.fake]\nbase_url = "{server.url}"\nmodel = "fake-model"\n'
                           'api_key = "sk-never-in-a-run-folder"\n')
        paused = ga(["pick", "--profile", "fake"], None, home, workspace)
        run_id = only_run(home).name
        resumed = ga(["answer", run_id, "b"], None, home, workspace)  # no --profile, no OPENAI_* in this shell
        wait_for(lambda: json.loads((only_run(home) / "state.json").read_text())["status"] == "done")
        models = [r["model"] for r in server.requests]
    assert paused.returncode == 3 and resumed.returncode == 0, paused.stderr + resumed.stderr
    assert models == ["fake-model", "fake-model"]
    state = json.loads((only_run(home) / "state.json").read_text())
    assert state["endpoint"] == {"base_url": server.url, "profile": "fake"}
    assert not any("sk-never" in p.read_text(errors="replace") for p in only_run(home).rglob("*") if p.is_file())


def test_a_scheduled_job_runs_with_its_profile(home, workspace, crontab, tmp_path):
    with ScriptedServer([{"content": "nightly done"}]) as server:
        write_config(home, f'[profiles.fake]\nbase_url = "{server.url}"\nmodel = "fake-model"\napi_key = "k"\n')
        added = ga(["schedule", "add", "nightly", "say hi", "--every", "1h", "--profile", "fake", "--workdir",
                    str(workspace)], None, home, workspace)
        assert added.returncode == 0, added.stderr
        (line,) = [line for line in crontab().splitlines() if line.endswith("# ga-schedule:nightly")]
        assert "--profile fake" in line
        fired = as_cron_runs(line, tmp_path)
        assert fired.returncode == 0, fired.stdout + fired.stderr
        wait_for(lambda: any(json.loads(p.read_text()).get("status") == "done"
                             for p in (home / "runs").glob("*/state.json")), timeout=60)
        models = [r["model"] for r in server.requests]
    assert models == ["fake-model"]


@pytest.mark.parametrize(("text", "env", "said"), [
    ('base_url = "http://x/v1"\n', {"GA_MODEL": "m"}, "ga: No profile 'nope' in"),
    ('model = 3\n', {}, "model in the top level must be a string"),
    ('base_url = "http://x/v1"\nmodel = "m"\napi_key_env = "MY_KEY"\n', {},
     "is read from $MY_KEY (api_key_env in config.toml), which is not set in this shell."),
])
def test_a_bad_or_incomplete_config_is_one_clear_line(home, workspace, text, env, said):
    write_config(home, text)
    proc = ga(["Hello", *(["--profile", "nope"] if "nope" in said else [])], None, home, workspace, **env)
    assert proc.returncode == 2 and said in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    assert not (home / "runs").exists() or not list((home / "runs").iterdir())


def test_a_key_in_a_file_others_can_read_is_refused(home, workspace):
    write_config(home, 'base_url = "http://x/v1"\nmodel = "m"\napi_key = "sk-1"\n')
    os.chmod(home / "config.toml", 0o644)
    proc = ga(["Hello"], None, home, workspace)
    assert proc.returncode == 2 and "other users can read it (mode 0644): chmod 600" in proc.stderr, proc.stderr
