"""The policy on its corpus (corpus.py): every accident refused or asked, every everyday command allowed. Nothing runs
here; bench/perf/code_run_bench.py runs the corpus through code_run, with and without the sandbox. Each corpus is one
test that names every command it misjudges."""

from __future__ import annotations

from pathlib import Path

from tests.tools.guard.corpus import ACCIDENTS, ASK, BLOCK, EVERYDAY, REFUSE, assert_judged
from tools.guard.policy import ALLOW, check_script

HOME = Path("/home/alice")
WORKSPACE = HOME / "project"


def decide(script: str, kind: str = "bash", home: Path = HOME, workspace: Path = WORKSPACE):
    return check_script(script, kind, workspace=workspace, home=home, ga_home=home / ".ga")


def test_accidents_are_refused_or_asked():
    assert len(ACCIDENTS) >= 150
    wanted = {REFUSE: "refuse", ASK: "ask", BLOCK: "refuse|ask"}
    for kind in ("bash", "python"):
        cases = [(c.script, wanted[c.expect], c.rule) for c in ACCIDENTS if c.kind == kind]
        assert_judged(cases, lambda s, kind=kind: decide(s, kind))


def test_everyday_commands_are_allowed():
    assert len(EVERYDAY) >= 130
    for kind in ("bash", "python"):
        cases = [(c.script, ALLOW, "") for c in EVERYDAY if c.kind == kind]
        assert_judged(cases, lambda s, kind=kind: decide(s, kind))


TEMP_HOME = Path("/tmp/ci/home")
"""HOME and the workspace under /tmp, as in CI and containers: ~ is still the home folder, not scratch space."""


def test_home_under_tmp_is_judged_as_home():
    cases = [("echo 'alias ls=rm' >> ~/.bashrc", "ask", ""), ("rm -rf ~/docs", "ask", ""), ("rm -rf ~", "refuse", ""),
             ("sed -i s/a/b/ ~/.profile", "ask", ""), ("cp x ~/.ssh/authorized_keys", "ask", ""),
             ("rm -rf /tmp/ci/scratch", ALLOW, ""), ("rm -rf build", ALLOW, ""),
             ("echo x > /tmp/ci/out.txt", ALLOW, "")]
    assert_judged(cases, lambda s: decide(s, home=TEMP_HOME, workspace=TEMP_HOME / "project"))


def test_ga_home_under_tmp_is_still_ga_s_own_data():
    """A GA_HOME in a temporary folder (CI, bench trials) is no scratch space: SOPs and memory change only through
    ga's tools while the run goes on."""
    cases = [("echo step >> /tmp/ci/ga/sop/deploy/SKILL.md", "bash"), ("cp x /tmp/ci/ga/memory/a.md", "bash"),
             ("import shutil\nshutil.rmtree('/tmp/ci/ga/sop/old')", "python")]
    for script, kind in cases:
        decision = check_script(script, kind, workspace=TEMP_HOME / "project", home=TEMP_HOME,
                                ga_home=Path("/tmp/ci/ga"))
        assert decision.verdict == "ask" and decision.rule == "protected-path", decision


def test_quoted_heredoc_written_to_a_file_is_data_but_an_unquoted_one_runs_substitutions():
    assert decide("cat > doc.md <<'EOF'\n$(rm -rf ~)\nEOF").verdict == ALLOW
    assert decide("cat > doc.md <<EOF\n$(rm -rf ~)\nEOF").rule == "rm-home"


def test_each_finding_names_the_command_that_raised_it():
    decision = decide("echo start\ngit reset --hard HEAD~1\necho done")
    assert decision.command == "git reset --hard HEAD~1"
    assert decide("sudo apt-get install -y jq").command == "sudo apt-get install -y jq"
    decision = decide("rm -rf ~")
    assert decision.reason and "rule: rm-home" in decision.message


def test_a_cd_in_a_subshell_or_a_substitution_stays_there():
    """`HERE="$(cd "$(dirname "$0")" && pwd)"` and `(cd sub; ...)` change no folder for what follows them."""
    ga_home = HOME / ".ga"
    after = "echo x > total.txt"
    for prefix in (f'HERE="$(cd {ga_home}/sop && pwd)"', f"(cd {ga_home}/sop)", f"x=`cd {ga_home}; ls`"):
        assert decide(f"{prefix}\n{after}").verdict == ALLOW, prefix
    assert decide(f"cd {ga_home}/sop\n{after}").verdict == "ask"  # a cd in the script itself does move it
    assert decide(f"(cd {ga_home}/sop; {after})").verdict == "ask"  # and inside the subshell, there
    assert decide('cd "$DIR" && rm -rf *').verdict == ALLOW  # a folder only run time knows: the sandbox's job
