"""Lifting a task's values into a learnt script's parameters: the literals found, and the code written with them
(each lifted program is run for real on other values)."""

from __future__ import annotations

import subprocess
import sys

from memory.learn.literals import parameters, task_literals
from memory.learn.script import Lifter, build
from memory.learn.steps import Step, work_steps

TASK = "In `server.log`, count the lines with ERROR and write the count into `errors.txt` (level 35)."


def values(task: str) -> list[str]:
    return sorted(lit.value for lit in task_literals(task))


def test_the_values_a_task_names():
    assert values(TASK) == ["35", "ERROR", "errors.txt", "server.log"]
    assert values("Fetch https://example.org/a.json and set \"debug\" to 1 in config/app.ini") == [
        "config/app.ini", "debug", "https://example.org/a.json"]  # 1 is too common to be a value
    assert values("rename `area_sq` to `square_area` in shapes.py; e.g. 10.00") == [
        "10.00", "area_sq", "shapes.py", "square_area"]


def test_parameters_are_named_by_their_role_in_the_task_order():
    used = task_literals(TASK)
    names = [(p.name, p.value) for p in parameters(used, TASK, existed={"server.log"})]
    assert names == [("INPUT_LOG", "server.log"), ("LINES", "ERROR"),
                     ("OUTPUT_TXT", "errors.txt"), ("LEVEL", "35")]
    path = parameters(task_literals("Set the `path` key"), "Set the `path` key", set())
    assert path[0].name == "KEY"  # never a shell variable of the script (PATH)


def _run(script, args, cwd, files):
    for name, text in script.files.items():
        (cwd / "scripts").mkdir(exist_ok=True)
        (cwd / "scripts" / name).write_text(text)
    for name, text in files.items():
        (cwd / name).write_text(text)
    runner = "bash" if script.entry.endswith(".sh") else sys.executable
    return subprocess.run([runner, str(cwd / "scripts" / script.entry), *args], cwd=cwd, capture_output=True,
                          text=True, timeout=30, check=True).stdout


def test_python_constants_become_arguments_and_f_strings_keep_the_rest(tmp_path):
    code = ("import csv\nrows = list(open('server.log'))\nhits = [r for r in rows if 'ERROR' in r]\n"
            "open('errors.txt', 'w').write(f'{len(hits)}\\n')\nprint(f'ERROR lines in server.log: {len(hits)}')\n"
            "print(rows[2:35][0] if len(rows) > 35 else 35)\n")
    steps = [Step(kind="python", code=code)]
    script = build(steps, Lifter(TASK, steps, existed={"server.log"}))
    text = script.files["main.py"]
    assert "'server.log'" not in text and "f'{LINES} lines in {INPUT_LOG}:" in text
    assert "rows[2:35]" in text and "LEVEL" in text  # a slice bound stays, the task's 35 elsewhere is lifted
    out = _run(script, ["app.log", "WARN", "n.txt", "7"], tmp_path, {"app.log": "WARN a\nINFO\nWARN b\n"})
    assert (tmp_path / "n.txt").read_text() == "2\n" and "WARN lines in app.log: 2" in out
    assert out.endswith("7\nwrote n.txt: 2\n")  # what it wrote, said


def test_shell_values_are_quoted_in_words_single_quotes_and_here_documents(tmp_path):
    code = ("grep -c 'ERROR' server.log > errors.txt\necho \"done: server.log\"\n"
            "python3 - <<'EOF'\nprint(open('errors.txt').read().strip(), 'from', 'server.log')\nEOF\n"
            "cat > note.md <<'EOF'\nsee server.log ($HOME stays)\nEOF\n")
    steps = [Step(kind="bash", code=code)]
    script = build(steps, Lifter(TASK, steps, existed={"server.log"}))
    run_sh = script.files["run.sh"]
    assert "'\"${LINES}\"'" not in run_sh and 'grep -c "${LINES}" "${INPUT_LOG}" > "${OUTPUT_TXT}"' in run_sh
    assert "os.environ['INPUT_LOG']" in run_sh and "see ${INPUT_LOG} (\\$HOME stays)" in run_sh
    out = _run(script, ["my log", "WARN", "n.txt"], tmp_path, {"my log": "WARN a\nWARN b\nINFO\n"})
    assert out.splitlines() == ["done: my log", "2 from my log", "wrote n.txt: 2"]  # what it wrote, said
    assert (tmp_path / "note.md").read_text() == "see my log ($HOME stays)\n"


def test_file_tool_steps_become_python_with_the_values_lifted(tmp_path):
    task = "In `settings.json`, set the key `debug` to true."
    events = [
        {"type": "message", "message": {"role": "assistant", "tool_calls": [
            {"id": "a", "function": {"name": "file_patch", "arguments": '{"path": "settings.json", '
                                     '"old_content": "\\"debug\\": false", "new_content": "\\"debug\\": true"}'}},
            {"id": "b", "function": {"name": "file_write", "arguments": '{"path": "/ws/log.txt", '
                                     '"content": "set debug\\n", "mode": "append"}'}}]}},
        {"type": "result", "id": "a", "name": "file_patch", "is_error": False},
        {"type": "result", "id": "b", "name": "file_write", "is_error": False}]
    steps = work_steps(events, "/ws")
    assert [(s.kind, s.path) for s in steps] == [("patch", "settings.json"), ("write", "log.txt")]
    script = build(steps, Lifter(task, steps, existed={"settings.json"}))
    _run(script, ["conf.json", "verbose", "true"], tmp_path, {"conf.json": '{"verbose": false}', "log.txt": "a\n"})
    assert (tmp_path / "conf.json").read_text() == '{"verbose": true}'
    assert (tmp_path / "log.txt").read_text() == "a\nset verbose\n"


def test_steps_outside_the_workspace_are_not_learnt():
    events = [{"type": "message", "message": {"role": "assistant", "tool_calls": [
        {"id": "a", "function": {"name": "file_write", "arguments": '{"path": "../etc/x", "content": "x"}'}}]}},
        {"type": "result", "id": "a", "name": "file_write", "is_error": False}]
    assert "outside the workspace" in work_steps(events, "/ws/project")


def test_a_task_value_inside_code_is_marked_so_that_no_script_is_learnt_from_it():
    """A value inside a sed program, `sh -c` text or an eval would let the next task's value run as code
    (`y/;1e touch PWNED;#` in a sed program): the lifter marks it and extraction learns nothing (test_learning.py)."""
    task = "In app.py rename the function `calc` to `compute`"
    sed = [Step(kind="bash", code="sed -i 's/\\bcalc(/compute(/g' app.py")]
    lifter = Lifter(task, sed, existed={"app.py"})
    build(sed, lifter)
    assert lifter.in_code
    python = [Step(kind="python", code="open('out.txt', 'w').write(str(eval('2+3')))\n")]
    lifter = Lifter("Evaluate '2+3' into out.txt", python, existed=set())
    build(python, lifter)
    assert lifter.in_code
    plain = [Step(kind="bash", code="grep -c ERROR server.log > errors.txt")]
    lifter = Lifter(TASK, plain, existed={"server.log"})
    build(plain, lifter)
    assert not lifter.in_code  # a value given to grep as its pattern is data, not a program


def test_a_script_fits_a_task_that_asks_the_same_on_other_values_not_one_sharing_words():
    from memory.learn.literals import fits

    taught = "Fix the `ADD` function in `INPUT_PY`: it must return the sum of its two arguments."
    assert fits(taught, "Fix the `sub` function in `calc.py`: it must return the sum of its two arguments.")
    assert not fits(taught, "Add a function `mul` to `app.py` that returns the product of its two arguments.")
    sums = "`INPUT_CSV` has a column named `COLUMN`. Write the sum of that column into `OUTPUT_TXT`."
    assert fits(sums, "`sales.csv` has a column named `price`. Write the sum of that column into `sum.txt`.")
    assert not fits(sums, "Write a short poem about the sum of all fears into `poem.txt`.")
    assert not fits("", "")
