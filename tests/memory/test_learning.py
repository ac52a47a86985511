"""Learning through the CLI: scripted server over HTTP, real run.py subprocesses, real files under GA_HOME, real
replays of the learnt scripts in the sandbox."""

from __future__ import annotations

import json
import select
import subprocess

import pytest

from sop.library import SEEDS, skill_files
from sop.skill import read
from tests.ga.cli.test_cli import ga_background, only_run, wait_for
from tests.memory.helpers import (
    NEXT,
    SOP_REPLY,
    SUM,
    TASK,
    listed,
    memory_events,
    payments,
    run_ga,
    skill_folder,
    sop_names,
    sum_run,
)
from tests.scripted import ScriptedServer, tool_call

SEED_NAMES = sorted(p.parent.name for p in skill_files(SEEDS))
def learnt(home) -> list[str]:
    return [n for n in sop_names(home) if n not in SEED_NAMES]


def test_a_verified_run_becomes_a_script_that_does_its_work_with_the_values_as_parameters(home, workspace):
    payments(workspace)
    proc, server = run_ga(sum_run(), home, workspace, TASK)
    assert proc.returncode == 0, proc.stderr
    server.assert_complete()
    assert len(server.requests) == len(sum_run())  # learning asked the model nothing
    (name,) = learnt(home)
    folder = home / "sop" / name
    skill = read(folder / "SKILL.md")
    meta = skill.metadata
    assert (meta["source"], meta["verified"], meta["script"]) == ("learnt", "reproduced", "scripts/main.py")
    assert meta["usage"] == "python3 scripts/main.py INPUT_CSV COLUMN OUTPUT_TXT"  # relative, as Agent Skills write
    script = (folder / "scripts/main.py").read_text()
    assert "ls -la" not in script and "'Amount'" not in script  # exploration and the failed attempt dropped
    assert "sys.argv[1]" in script and "payments.csv" not in script and "r[COLUMN]" in script
    assert "INPUT_CSV" in skill.description and "payments.csv amount total.txt" in skill.body  # usage, example
    run_id = only_run(home).name
    assert meta["runs"] == run_id
    assert f"learnt script {name} (unproven: it reproduced its outputs, no check ran)" in proc.stderr
    (event,) = memory_events(home)
    assert event["learnt"]["name"] == name and event["learnt"]["action"] == "created"
    assert not (only_run(home) / "before").exists()  # the workspace copy served its purpose
    # the script does the same work on other values, outside ga
    other = workspace.parent / "other"
    other.mkdir()
    payments(other, "sales.csv", "price", ("1.25", "2.50"))
    subprocess.run(["python3", str(folder / "scripts/main.py"), "sales.csv", "price", "sum.txt"], cwd=other,
                   check=True, timeout=30)
    assert (other / "sum.txt").read_text() == "3.75\n"


def test_the_next_task_sees_the_script_whole_runs_it_and_records_the_use(home, workspace):
    payments(workspace)
    run_ga(sum_run(), home, workspace, TASK)
    (name,) = learnt(home)
    usage = read(home / "sop" / name / "SKILL.md").metadata["usage"].replace("scripts/", f"{home}/sop/{name}/scripts/")
    payments(workspace, "sales.csv", "price", ("1.25", "2.50"))
    command = usage.replace("INPUT_CSV COLUMN OUTPUT_TXT", "sales.csv price sum.txt")
    proc, server = run_ga([{"tool_calls": [tool_call("code_run", type="bash", script=command)]},
                           {"content": "Done."}], home, workspace, NEXT, GA_MODEL_SETTINGS="small")
    assert proc.returncode == 0, proc.stderr
    shown = listed(server)  # in the first user message, after the task
    assert shown.index(NEXT) < shown.index(f"- {name} (")
    assert shown.rstrip().endswith(f"these values filled in (check them against the task):\n      {command}")
    assert usage not in shown  # the values by their roles, not the usage with names
    assert (workspace / "sum.txt").read_text() == "3.75\n"
    assert f"using learnt script {name}" in proc.stderr  # the user sees that a learnt script runs
    meta = read(home / "sop" / name / "SKILL.md").metadata
    assert (meta["uses"], meta["successes"]) == ("1", "1")
    assert learnt(home) == [name]  # a plain use teaches nothing new


def test_a_program_the_run_wrote_and_ran_becomes_run_sh_with_the_program_beside_it(home, workspace):
    payments(workspace)
    steps = [{"tool_calls": [tool_call("file_write", path="solve.py", content=SUM)]},
             {"tool_calls": [tool_call("code_run", type="bash", script="python3 solve.py && cat total.txt")]},
             {"content": "Done."}]
    proc, _ = run_ga(steps, home, workspace, TASK)
    assert proc.returncode == 0, proc.stderr
    (name,) = learnt(home)
    scripts = home / "sop" / name / "scripts"
    assert sorted(p.name for p in scripts.iterdir()) == ["run.sh", "solve.py"]
    assert 'python3 "$HERE/solve.py"' in (scripts / "run.sh").read_text()
    assert "os.environ['INPUT_CSV']" in (scripts / "solve.py").read_text()
    other = workspace.parent / "other"
    other.mkdir()
    payments(other, "sales.csv", "price", ("1.25", "2.50"))
    subprocess.run(["bash", str(scripts / "run.sh"), "sales.csv", "price", "sum.txt"], cwd=other, check=True,
                   timeout=30, capture_output=True)
    assert (other / "sum.txt").read_text() == "3.75\n" and not (other / "solve.py").exists()


def test_a_shell_command_gets_its_values_as_quoted_arguments(home, workspace):
    (workspace / "server.log").write_text("a ERROR x\nb INFO\nc ERROR y\n")
    task = "How many lines of `server.log` contain the word ERROR? Write the count into `errors.txt`."
    steps = [{"tool_calls": [tool_call("code_run", type="bash", script="grep -c 'ERROR' server.log > errors.txt")]},
             {"content": "2 lines."}]
    proc, _ = run_ga(steps, home, workspace, task, "-v")
    assert proc.returncode == 0, proc.stderr
    assert len(learnt(home)) == 1, proc.stderr
    (name,) = learnt(home)
    run_sh = (home / "sop" / name / "scripts/run.sh").read_text()
    assert 'grep -c "${WORD}" "${INPUT_LOG}" > "${OUTPUT_TXT}"' in run_sh
    other = workspace.parent / "other"
    other.mkdir()
    (other / "app log.txt").write_text("WARN a\nWARN b\nWARN c\nINFO\n")  # a space in a value stays one argument
    subprocess.run(["bash", str(home / "sop" / name / "scripts/run.sh"), "app log.txt", "WARN", "n.txt"],
                   cwd=other, check=True, timeout=30)
    assert (other / "n.txt").read_text() == "3\n"


def test_an_answer_is_reproduced_by_what_the_script_prints(home, workspace):
    (workspace / "data.txt").write_text("a\nb\nc\n")
    steps = [{"tool_calls": [tool_call("code_run", type="bash", script="wc -l < data.txt")]},
             {"content": "`data.txt` has 3 lines."}]
    proc, _ = run_ga(steps, home, workspace, "How many lines does `data.txt` have?")
    assert proc.returncode == 0, proc.stderr
    (name,) = learnt(home)
    assert read(home / "sop" / name / "SKILL.md").metadata["verified"] == "reproduced"


def test_with_a_check_the_script_must_pass_it_on_the_replay_too(home, workspace):
    payments(workspace)
    proc, _ = run_ga(sum_run(), home, workspace, TASK, "--check", "grep -qx 35.75 total.txt")
    assert proc.returncode == 0, proc.stderr
    (name,) = learnt(home)
    skill = read(home / "sop" / name / "SKILL.md")
    assert skill.metadata["verified"] == "checked" and "Check: `grep -qx 35.75 total.txt`" in skill.body


def test_unverified_runs_and_typed_answers_teach_nothing(home, workspace):
    payments(workspace)
    failing = {"tool_calls": [tool_call("code_run", script="raise SystemExit('no column')")]}
    cases = [  # (steps, extra flags, why)
        ([*sum_run()[:3], failing, {"content": "Done."}], [], "it ended on a failure: code_run"),
        ([{"content": "The total is 35.75."}] * 2, [], "it ended on a failure: the answer, while `total.txt` does not"),
        (sum_run(), ["--check", "grep -q 99 total.txt"], "never passed"),  # paused: a paused run learns nothing
        ([{"tool_calls": [tool_call("file_read", path="payments.csv")]},
          {"tool_calls": [tool_call("file_write", path="total.txt", content="35.75\n")]}, {"content": "Done."}],
         [], "typed, not computed"),
        ([{"tool_calls": [tool_call("code_run", type="bash", script="sed -i 's/,/;/g' payments.csv")]},
          {"content": "payments.csv has many rows, as shown."}],  # a 1.5B model's kind of answer: no value
         [], "asks a question and its answer states no value"),
    ]
    for steps, flags, why in cases:
        script = [*steps[:3], *[{"content": "Done."}] * 3] if flags else steps
        task = "How many rows does payments.csv have?" if "question" in why else TASK
        proc, _ = run_ga(script, home, workspace, task, "-v", "--max-turns", "8", *flags)
        assert why in proc.stderr, proc.stderr
        (workspace / "total.txt").unlink(missing_ok=True)
    assert learnt(home) == []


def test_the_same_procedure_learnt_again_updates_its_one_sop(home, workspace):
    payments(workspace)
    run_ga(sum_run(), home, workspace, TASK)
    payments(workspace, "sales.csv", "price", ("1.25", "2.50"))
    again = SUM.replace("payments.csv", "sales.csv").replace("'amount'", "'price'").replace("total.txt", "sum.txt")
    proc, _ = run_ga([{"tool_calls": [tool_call("code_run", script=again)]}, {"content": "Done."}],
                     home, workspace, NEXT, "-v")
    assert proc.returncode == 0, proc.stderr
    (name,) = learnt(home)
    assert "the same script again" in proc.stderr
    assert len(read(home / "sop" / name / "SKILL.md").metadata["runs"].split(",")) == 2


def test_a_script_holding_a_secret_is_not_kept(home, workspace):
    payments(workspace)
    key = "sk-proj-" + "Ab3" * 16
    leaky = SUM + f"\nAPI_KEY = '{key}'\n"
    proc, _ = run_ga([{"tool_calls": [tool_call("code_run", script=leaky)]}, {"content": "Done."}],
                     home, workspace, TASK, "-v")
    assert proc.returncode == 0 and "would hold a secret" in proc.stderr, proc.stderr
    assert learnt(home) == [] and key not in "".join(p.read_text() for p in home.rglob("*.md"))


def test_a_replay_has_no_network_and_never_changes_the_workspace(home, workspace):
    """The run fetched from a server on the host; its replay cannot, so nothing is learnt, and the workspace is as
    the run left it."""
    import functools
    import http.server
    import threading

    serves = workspace.parent / "site"
    serves.mkdir()
    (serves / "page.txt").write_text("42\n")
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(serves))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    (workspace / "notes.txt").write_text("keep\n")
    fetch = (f"import urllib.request\nopen('copy.txt', 'w').write(urllib.request.urlopen("
             f"'http://127.0.0.1:{server.server_port}/page.txt').read().decode())")
    try:
        proc, _ = run_ga([{"tool_calls": [tool_call("code_run", script=fetch)]}, {"content": "Done."}], home,
                         workspace, "Copy `page.txt` from the local server into `copy.txt`.", "-v", "--no-sandbox")
    finally:
        server.shutdown()
    assert proc.returncode == 0 and (workspace / "copy.txt").read_text() == "42\n", proc.stderr
    assert "did not reproduce its outputs (it failed: urllib.error.URLError: <urlopen error [Errno 111] Connection " \
           "refused>)" in proc.stderr and learnt(home) == []  # why it did not, said
    assert sorted(p.name for p in workspace.iterdir()) == ["copy.txt", "notes.txt"]


def test_a_kill_9_while_ga_learns_keeps_the_json_object_and_the_outbox(home, workspace):
    payments(workspace)
    slow = "import time\ntime.sleep(4)\n" + SUM  # every replay takes seconds
    with ScriptedServer([{"tool_calls": [tool_call("code_run", script=slow)]}, {"content": "Done."}]) as server:
        proc = ga_background([TASK, "--json"], server, home, workspace, GA_LEARN="")
        try:
            ready, _, _ = select.select([proc.stdout], [], [], 60)
            line = proc.stdout.readline() if ready else ""
            wait_for((home / "sop/.staging").exists, timeout=60)  # a replay is under way
        finally:
            proc.kill()  # kill -9 while the replays run
            proc.wait(timeout=10)
    told = json.loads(line)
    assert told["status"] == "done" and told["answer"] == "Done."
    run = only_run(home)
    assert json.loads((run / "outbox/result.json").read_text())["status"] == "done"
    assert json.loads((run / "state.json").read_text())["status"] == "done"


def test_no_learn_writes_no_memory(home, workspace):
    payments(workspace)
    proc, server = run_ga(sum_run(), home, workspace, TASK, "--no-learn")
    server.assert_complete()
    assert proc.returncode == 0 and learnt(home) == [] and not (home / "memory/archive").exists()
    assert not any(home.glob("runs/*/before"))  # no copy of the workspace was made


def test_an_sop_read_without_trouble_bumps_its_ledger_and_two_failures_flag_it(home, workspace, tmp_path):
    # one of ga's own prose SOPs (as the model writes them after start_long_term_update): reading it is its use
    skill_folder(home / "sop", "csv-summary-script", SOP_REPLY.format(name="csv-summary-script", extra=""))
    path = home / "sop/csv-summary-script/SKILL.md"
    steps = [{"tool_calls": [tool_call("file_read", path=str(path))]}, {"content": "Done."}]
    proc, _ = run_ga(steps, home, workspace, "summarise data.csv", "-v")
    meta = read(path).metadata
    assert (meta["uses"], meta["successes"]) == ("1", "1") and "summarise" in meta["keywords"]
    failing = [steps[0], {"tool_calls": [tool_call("code_run", script="raise SystemExit(3)")]}]
    for _ in range(2):
        proc, _ = run_ga(failing, home, workspace, "summarise data.csv", "--max-turns", "2")
        assert proc.returncode == 4, proc.stderr
    assert read(path).metadata["status"] == "flagged" and "failed twice in a row" in proc.stderr


def test_a_script_that_failed_and_was_worked_around_is_not_replaced_by_the_other_work(home, workspace):
    """The new steps no longer run the SOP's script: they become an SOP of their own, with a fresh ledger; the old
    one keeps its script (a hostile run could otherwise replace a trusted script under its old ledger)."""
    payments(workspace)
    run_ga(sum_run(), home, workspace, TASK)
    (name,) = learnt(home)
    folder = home / "sop" / name
    usage = read(folder / "SKILL.md").metadata["usage"].replace("scripts/", f"{folder}/scripts/")
    payments(workspace, "sales.csv", "price", ("1.25", "2.50"))
    wrong = usage.replace("INPUT_CSV COLUMN OUTPUT_TXT", "sales.csv cost sum.txt")  # no such column: it fails
    again = SUM.replace("payments.csv", "sales.csv").replace("'amount'", "'price'").replace("total.txt", "sum.txt")
    steps = [{"tool_calls": [tool_call("code_run", type="bash", script=wrong)]},
             {"tool_calls": [tool_call("code_run", script="print('checking')\n" + again)]}, {"content": "Done."}]
    proc, _ = run_ga(steps, home, workspace, NEXT, "-v")
    assert proc.returncode == 0 and (workspace / "sum.txt").read_text() == "3.75\n", proc.stderr
    assert name in learnt(home) and len(learnt(home)) == 2 and f"updated the script of {name}" not in proc.stderr
    assert "print('checking')" not in (folder / "scripts/main.py").read_text()
    (other,) = [n for n in learnt(home) if n != name]
    assert "print('checking')" in (home / "sop" / other / "scripts/main.py").read_text()
    assert read(home / "sop" / other / "SKILL.md").metadata["successes"] == "0"


def test_naming_an_sop_s_script_in_a_command_is_no_use_of_it(tmp_path):
    from memory.learning import ran_scripts

    sop = tmp_path / "sop"
    assert ran_scripts(f"bash {sop}/sum-col/scripts/run.sh a b", sop) == ["sum-col"]
    assert ran_scripts(f"cd x && python3 '{sop}/sum-col/scripts/main.py' a", sop) == ["sum-col"]
    assert ran_scripts(f"{sop}/sum-col/scripts/run.sh", sop) == ["sum-col"]
    assert ran_scripts(f"echo ok x{sop}/sum-col/scripts/run.sh", sop) == []
    assert ran_scripts(f"cat {sop}/sum-col/scripts/run.sh; ls {sop}/sum-col/scripts/", sop) == []



def test_an_unchecked_script_is_never_offered_as_verified_until_a_run_using_it_passes_a_check(home, workspace):
    payments(workspace)
    run_ga(sum_run(), home, workspace, TASK)  # done, deterministic, no --check: right or wrong, nobody checked
    (name,) = learnt(home)
    folder = home / "sop" / name
    usage = read(folder / "SKILL.md").metadata["usage"].replace("scripts/", f"{folder}/scripts/")
    payments(workspace, "sales.csv", "price", ("1.25", "2.50"))
    command = usage.replace("INPUT_CSV COLUMN OUTPUT_TXT", "sales.csv price sum.txt")
    use = [{"tool_calls": [tool_call("code_run", type="bash", script=command)]}, {"content": "Done."}]
    proc, server = run_ga(use, home, workspace, NEXT)  # a use without a check: still unproven
    shown = listed(server)
    assert f"- {name} (" in shown and "[unproven]" in shown and "never checked" in shown and "verified" not in shown
    assert read(folder / "SKILL.md").metadata["verified"] == "reproduced"
    proc, server = run_ga(use, home, workspace, NEXT, "--check", "grep -qx 3.75 sum.txt")
    assert proc.returncode == 0, proc.stderr
    assert "[unproven]" in listed(server)  # listed as it stood when the run began
    assert f"SOP {name}:" in proc.stderr and "check passed: now checked" in proc.stderr
    assert read(folder / "SKILL.md").metadata["verified"] == "checked"
    (workspace / "sum.txt").unlink()  # an output that exists is no value to fill in
    _, server = run_ga(use, home, workspace, NEXT)
    assert "[unproven]" not in listed(server) and "whose run passed a check" in listed(server)


@pytest.mark.parametrize("shape", ["file_write", "echo", "awk"])
def test_a_value_computed_then_typed_is_learnt_as_the_program_writing_it(home, workspace, shape):
    payments(workspace)
    compute = tool_call("code_run", script="import csv\nprint(sum(float(r['amount']) for r in "
                                           "csv.DictReader(open('payments.csv'))))\n")
    if shape == "awk":  # the text format's shape: a shell line prints, the next types the value
        compute = tool_call("code_run", type="bash", script="echo summing; awk -F, 'NR > 1 {s += $2} END {print s}' "
                                                           "payments.csv")
    typed = (tool_call("file_write", path="total.txt", content="35.75\n") if shape == "file_write" else
             tool_call("code_run", type="bash", script="# write it\necho '35.75' > total.txt"))
    steps = [{"tool_calls": [compute]}, {"tool_calls": [typed]},
             {"content": "Done: total.txt holds 35.75."}]
    proc, _ = run_ga(steps, home, workspace, TASK)
    assert proc.returncode == 0 and (workspace / "total.txt").read_text() == "35.75\n", proc.stderr
    assert "learnt script" in proc.stderr, proc.stderr
    (name,) = learnt(home)
    folder = home / "sop" / name
    usage = read(folder / "SKILL.md").metadata["usage"]
    names, values = ("INPUT_CSV OUTPUT_TXT", "sales.csv sum.txt") if shape == "awk" else (  # awk: the column is $2
        "INPUT_CSV COLUMN OUTPUT_TXT", "sales.csv price sum.txt")
    assert usage.endswith(names), usage
    # as its SKILL.md says, in a fresh workspace whose input holds other numbers: the new value
    other = workspace.parent / "fresh"
    other.mkdir()
    payments(other, "sales.csv", "price", ("1.25", "2.50"))
    command = usage.replace("scripts/", f"{folder}/scripts/").replace(names, values)
    subprocess.run(command, shell=True, cwd=other, check=True, timeout=30)
    assert (other / "sum.txt").read_text() == "3.75\n"


def test_a_script_whose_outputs_do_not_depend_on_its_input_is_not_learnt_without_a_check(home, workspace):
    # the wrong round the learning run kept: the output holds the input file's name, whatever the file holds
    (workspace / "names.txt").write_text("bob\nann\n")
    task = "Write the lines of `names.txt` in alphabetical order into `sorted.txt`."
    steps = [{"tool_calls": [tool_call("code_run", type="bash", script="echo names.txt > sorted.txt")]},
             {"content": "Done: sorted.txt is written."}]
    proc, _ = run_ga(steps, home, workspace, task, "-v")
    assert proc.returncode == 0, proc.stderr
    assert "a constant, not a procedure" in proc.stderr and learnt(home) == []
    # the same procedure done right is learnt
    steps = [{"tool_calls": [tool_call("code_run", type="bash", script="sort names.txt > sorted.txt")]},
             {"content": "Done: sorted.txt is written."}]
    proc, _ = run_ga(steps, home, workspace, task)
    assert proc.returncode == 0 and len(learnt(home)) == 1, proc.stderr


def test_a_count_of_matching_rows_is_learnt_though_shifting_its_digits_changes_nothing(home, workspace):
    """The learning run's count-csv-rows: `grep -c`, then the count typed. Shifting the input's digits leaves the count
    as it was; repeating its rows does not, so the script depends on its input and is learnt."""
    (workspace / "orders.csv").write_text("id,status\n1,shipped\n2,cancelled\n3,shipped\n")
    task = "How many rows of `orders.csv` have `shipped` in the `status` column? Write the number into `shipped.txt`."
    steps = [{"tool_calls": [tool_call("code_run", type="bash", script='grep -c "shipped" orders.csv')]},
             {"tool_calls": [tool_call("code_run", type="bash", script="echo 2 > shipped.txt")]},
             {"content": "Done: shipped.txt holds 2."}]
    proc, _ = run_ga(steps, home, workspace, task)
    assert proc.returncode == 0 and (workspace / "shipped.txt").read_text() == "2\n", proc.stderr
    assert "a constant" not in proc.stderr and len(learnt(home)) == 1, proc.stderr
