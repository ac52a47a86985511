"""The text action format (ModelSettings.action_format = "bash") through the real CLI and the scripted server: no
schemas go up, one fenced block per reply runs as code_run through the same dispatcher, and the history goes back
to the server as text."""

from __future__ import annotations

import json

from tests.ga.cli.test_cli import ga, only_run
from tests.scripted.script import ScriptedServer

BASH = {"GA_MODEL_SETTINGS": "small:action_format=bash"}


def test_one_block_a_reply_runs_as_code_run_and_a_reply_without_one_is_the_answer(tmp_path, workspace):
    home = tmp_path / "home"
    (workspace / "config.ini").write_text("[server]\nport = 8437\n")
    steps = [{"content": "I will look at the file.\n```bash\ncat config.ini\n```"},
             {"content": "```bash\ngrep -o '[0-9]*' config.ini > port.txt\n```\nThen check:\n"
                         "```bash\ncat port.txt\n```"},
             {"content": "The port 8437 is now in port.txt."}]
    with ScriptedServer(steps) as server:
        proc = ga(["Write the port of config.ini into port.txt", "--json"], server, home, workspace, **BASH)
        server.assert_complete()
    assert proc.returncode == 0, proc.stderr
    assert (workspace / "port.txt").read_text().strip() == "8437"
    assert json.loads(proc.stdout)["status"] == "done"
    first, second, third = server.requests
    assert "tools" not in first or not first["tools"]
    assert "```bash" in first["messages"][0]["content"]  # the format is said in the system prompt
    # only the shell is named (no line of tools this format cannot call); a page's way in (a web_scan line) only
    # once a URL is seen (tests/ga/cli/test_cli_web.py): without one a lost small model scanned example.com
    assert "web_execute_js" not in first["messages"][0]["content"]
    assert "web_scan" not in first["messages"][0]["content"]
    assert second["messages"][-2] == {"role": "assistant", "content": "I will look at the file.\n\n```bash\ncat "
                                                                      "config.ini\n```"}
    said = second["messages"][-1]
    assert said["role"] == "user" and said["content"].startswith("Output:\n") and "port = 8437" in said["content"]
    assert "only the first ran" in third["messages"][-1]["content"]
    assert not any(m["role"] == "tool" for r in server.requests for m in r["messages"])
    trajectory = (only_run(home) / "trajectory.jsonl").read_text()
    assert '"name": "code_run"' in trajectory


def test_a_dangerous_block_meets_the_same_policy_as_a_tool_call(tmp_path, workspace):
    home = tmp_path / "home"
    steps = [{"content": "```bash\nrm -rf ~\n```"}, {"content": "I did not remove anything."}]
    with ScriptedServer(steps) as server:
        proc = ga(["clean up", "--json"], server, home, workspace, **BASH)
        server.assert_complete()
    said = server.requests[1]["messages"][-1]["content"]
    assert said.startswith("Output:\n") and "refused" in said.lower(), said
    assert proc.returncode == 0, proc.stderr


def test_a_fence_left_open_is_prose_not_a_command(tmp_path, workspace):
    home = tmp_path / "home"
    steps = [{"content": "```bash\nThe script ran: the answer is 42."}]
    with ScriptedServer(steps) as server:
        proc = ga(["run it", "--json"], server, home, workspace, **BASH)
        server.assert_complete()
    # the answer the user reads is the prose alone: the fence a 1.5B model opened before it is not shown
    assert json.loads(proc.stdout)["answer"] == "The script ran: the answer is 42.", proc.stderr
    assert '"name": "code_run"' not in (only_run(home) / "trajectory.jsonl").read_text()


def test_a_block_that_copies_gas_own_result_back_runs_nothing_and_is_the_answer(tmp_path, workspace):
    home = tmp_path / "home"
    steps = [{"content": "```bash\nsed -i 's/1.2.0/1.3.0/' setup.cfg\n```"},
             {"content": "```bash\n# Output\n[exit code 0 · 0.07 s]\n(no output)\n```\nThe version is 1.3.0 now."}]
    (workspace / "setup.cfg").write_text("version = 1.2.0\n")
    with ScriptedServer(steps) as server:
        proc = ga(["bump the version", "--json"], server, home, workspace, **BASH)
        server.assert_complete()
    assert json.loads(proc.stdout)["status"] == "done", proc.stderr
    assert (workspace / "setup.cfg").read_text() == "version = 1.3.0\n"
    assert (only_run(home) / "trajectory.jsonl").read_text().count('"type": "call_start"') == 1


def test_a_block_of_comments_only_is_the_final_answer_in_prose_once_the_run_acted(tmp_path, workspace):
    home = tmp_path / "home"
    (workspace / "setup.cfg").write_text("version = 1.2.0\n")
    steps = [{"content": "```bash\n# Step 1: change the version\n# Step 2: save the file\n```"},  # a plan: runs
             {"content": "```bash\nsed -i 's/1.2.0/1.3.0/' setup.cfg\n```"},
             {"content": "```bash\n# The setup.cfg file has been updated with the new version.\n```"}]
    with ScriptedServer(steps) as server:
        proc = ga(["bump the version to 1.3.0", "--json"], server, home, workspace, **BASH)
        server.assert_complete()
    out = json.loads(proc.stdout)
    assert out["status"] == "done" and out["answer"] == "The setup.cfg file has been updated with the new version."
    assert (workspace / "setup.cfg").read_text() == "version = 1.3.0\n"
    assert (only_run(home) / "trajectory.jsonl").read_text().count('"type": "call_start"') == 2


def test_a_block_of_prose_after_the_run_acted_is_the_answer_not_a_command(tmp_path, workspace):
    home = tmp_path / "home"
    (workspace / "orders.csv").write_text("id,status\n1,shipped\n2,open\n")
    steps = [{"content": "```bash\ngrep -c shipped orders.csv > shipped.txt\n```"},
             {"content": "```bash\ndone\n```"},  # one word, no program: said, not run
             ]
    with ScriptedServer(steps) as server:
        proc = ga(["count the shipped orders into shipped.txt", "--json"], server, home, workspace, **BASH)
        server.assert_complete()
    out = json.loads(proc.stdout)
    assert out["status"] == "done" and out["answer"] == "done", proc.stderr
    assert (only_run(home) / "trajectory.jsonl").read_text().count('"type": "call_start"') == 1


def test_what_a_block_only_says():
    from ga.model.text_actions import _said

    assert _said("I wrote the number 11 into shipped.txt.") and _said("# The file is updated.\n") and _said("done")
    assert not _said("ls") and not _said("cd") and not _said("echo hi.") and not _said("grep -c x a.txt > n.txt")


def test_an_answer_claiming_an_unmade_change_is_doubted_in_this_formats_words(tmp_path, workspace):
    home = tmp_path / "home"
    (workspace / "server.log").write_text("ERROR a\nINFO b\nERROR c\n")
    steps = [{"content": "```bash\ngrep -c ERROR server.log\n```"},
             {"content": "The count is 2, which I wrote into errors.txt."},
             {"content": "```bash\necho 2 > errors.txt\n```"}, {"content": "errors.txt holds 2."}]
    with ScriptedServer(steps) as server:
        proc = ga(["Write the number of ERROR lines into errors.txt", "--json"], server, home, workspace, **BASH)
        server.assert_complete()
    assert json.loads(proc.stdout)["status"] == "done", proc.stderr
    doubt = server.requests[2]["messages"][-1]["content"]
    assert "changed no file" in doubt and "Reply with a ```bash block that makes the change" in doubt, doubt
    assert "tool" not in doubt  # this format has no tools to call (a 1.5B model answered the same claim again)


def test_a_loop_over_an_unwritten_named_file_is_told_the_file_and_the_way_to_write_it(tmp_path, workspace):
    home = tmp_path / "home"
    (workspace / "count.py").write_text("print(1860)\n")
    look = {"content": "```bash\ncat result.txt\n```"}
    steps = [{"content": "```bash\npython3 count.py\n```"}, {"content": "```bash\ntouch result.txt\n```"},
             look, look, look, {"content": "```bash\necho 1860 > result.txt\n```"}, {"content": "result.txt: 1860."}]
    with ScriptedServer(steps) as server:
        proc = ga(["Run count.py and write the number it prints into result.txt", "--json"], server, home, workspace,
                  **BASH)
        server.assert_complete()
    assert json.loads(proc.stdout)["status"] == "done", proc.stderr
    nudged = server.requests[5]["messages"][-1]["content"]
    assert "Same call, same result 3 times" in nudged, nudged
    assert "[The task names a file to write, but `result.txt` is empty. Reply with a ```bash block that writes it.]" \
        in nudged
    assert "task names a file" not in server.requests[4]["messages"][-1]["content"]  # only beside the loop's nudge
    assert "If this result answers the task" not in nudged  # the run wrote a file: its loop is no question's


def test_a_question_whose_run_only_reads_is_told_at_its_loop_how_to_answer_with_what_came_back(tmp_path, workspace):
    (workspace / "app.py").write_text("print(1)\n" * 11)
    count = {"content": "```bash\ncat app.py | wc -l\n```"}  # a 1.5B model repeated this until the human was asked
    with ScriptedServer([count, count, count, {"content": "app.py has 11 lines."}]) as server:
        proc = ga(["How many lines does app.py have?", "--json"], server, tmp_path / "home", workspace, **BASH)
        server.assert_complete()
    assert json.loads(proc.stdout)["answer"] == "app.py has 11 lines.", proc.stderr
    nudged = server.requests[3]["messages"][-1]["content"]
    assert nudged.endswith("11\n[Same call, same result 3 times in a row: no progress. Use what you already have, or "
                           "do something different; to wait for something, wait longer between checks.]\n[If this "
                           "result answers the task, reply without a code block: state the answer.]"), nudged


def test_a_shell_block_failing_again_is_told_to_do_the_step_as_a_python_heredoc(tmp_path, workspace):
    (workspace / "r.txt").write_text("1\n2\n")
    awk = {"content": "```bash\nawk 'BEGIN {r = function(x) {return x}}' r.txt > avg.txt\n```"}
    with ScriptedServer([awk, awk, *[{"content": "I could not do it."}] * 2]) as server:  # doubted once: avg.txt
        proc = ga(["Write the average of r.txt into avg.txt", "--json"], server, tmp_path / "home", workspace, **BASH)
        server.assert_complete()
    stage_2 = server.requests[2]["messages"][-1]["content"]
    assert "e.g. as a Python script (python3 - <<'EOF' ... EOF). Tried so far:" in stage_2, (stage_2, proc.stderr)
