"""Running a program through code_run: time limits, process trees, Ctrl-C, background children, big output."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil

from tests.tools.code_runs import alive, dispatch, run
from tools.process.execute import tail_lines
from tools.process.output_log import LOG_HEAD_CHARS, LOG_TAIL_CHARS

ROOT = Path(__file__).resolve().parents[3]

# --- time and process trees --------------------------------------------------------------------

TREE = """
sleep 301 &
echo $! > pids
(setsid sleep 302 & echo $! >> pids)
python3 -c 'import os, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        open("pids", "a").write(f"{os.getpid()}\\n"); time.sleep(303)
    os._exit(0)
'
echo $$ >> pids
echo started
sleep 300
"""


def test_timeout_kills_the_whole_tree_including_background_grandchildren(make_ctx, workspace):
    started = time.monotonic()
    result = run(make_ctx(), TREE, type="bash", timeout=2)
    assert time.monotonic() - started < 10
    pids = [int(p) for p in (workspace / "pids").read_text().split()]
    assert len(pids) == 4
    assert not [p for p in pids if alive(p)]
    assert result.is_error and result.details["killed"] == "timeout" and result.details["survivors"] == []
    assert "killed after" in result.content and "2 s timeout" in result.content and "started" in result.content


def test_ctrl_c_kills_the_tree_and_says_so(make_ctx, workspace):
    main = threading.main_thread().ident
    timer = threading.Timer(1.0, lambda: signal.pthread_kill(main, signal.SIGINT))
    timer.start()
    try:
        result = run(make_ctx(), TREE, type="bash", timeout=30)
    finally:
        timer.cancel()
    pids = [int(p) for p in (workspace / "pids").read_text().split()]
    assert not [p for p in pids if alive(p)]
    assert result.details["killed"] == "interrupted" and "interrupted by the user" in result.content


# Ctrl-C landing inside Popen.poll, between its lock's acquire and its try (where a loaded CI machine once caught it):
# the lock stayed held and the wait() after the kill hung for ever. A profile hook puts the KeyboardInterrupt exactly
# there, once; a SIGINT after 1 s stands in for it if the runner never enters that window.
IN_POLL = """
import signal, subprocess, sys, threading
from pathlib import Path
from tools.process.runner import OutputCapture, run

def hook(frame, event, arg):
    code = frame.f_code
    if (event == "c_return" and getattr(arg, "__name__", "") == "acquire" and code.co_filename == subprocess.__file__
            and code.co_name in ("_internal_poll", "_wait") and "sleep 60" in str(frame.f_locals["self"].args)
            and frame.f_locals["self"]._waitpid_lock.locked()
            and (code.co_name == "_internal_poll" or frame.f_locals.get("timeout") is not None)):
        sys.setprofile(None)
        print("inside", code.co_name, flush=True)
        raise KeyboardInterrupt

threading.Timer(1.0, lambda: signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)).start()
sys.setprofile(hook)
outcome = run(["bash", "-c", "echo $$ > pid; exec sleep 60"], cwd=Path.cwd(), env={"PATH": "/usr/bin:/bin"},
              timeout=30, capture=OutputCapture(Path("out.log"), 1000))
sys.setprofile(None)
print("killed", outcome.killed, outcome.exit_code, flush=True)
"""


def test_ctrl_c_inside_popen_poll_still_kills_and_returns(workspace):
    done = subprocess.run([sys.executable, "-c", IN_POLL], check=False, cwd=workspace, capture_output=True, text=True,
                          timeout=60, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert "killed interrupted -9" in done.stdout, done.stdout + done.stderr
    assert not alive(int((workspace / "pid").read_text()))


def test_background_process_with_redirected_output_returns_at_once(make_ctx, workspace):
    started = time.monotonic()
    result = run(make_ctx(), "sleep 30 > /dev/null 2>&1 &\necho $! > bg.pid\necho ok", type="bash")
    assert time.monotonic() - started < 1.5 and "ok" in result.content
    pid = int((workspace / "bg.pid").read_text())
    assert alive(pid)  # started on purpose: left running
    psutil.Process(pid).kill()


# --- big output: bounded memory, tail, full file ----------------------------------------------------

def test_100_mb_of_output_keeps_memory_and_the_log_on_disk_bounded(make_ctx):
    ctx = make_ctx()
    me = psutil.Process()
    before, peak, done = me.memory_info().rss, [0], threading.Event()

    def sample() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], me.memory_info().rss)
            time.sleep(0.01)

    sampler = threading.Thread(target=sample)
    sampler.start()
    script = ("import sys\nline = 'x' * 99 + '\\n'\nblock = line * 10_000\n"
              "for i in range(100):\n    sys.stdout.write(block)\nprint('THE END')")
    try:
        result = run(ctx, script, timeout=120)
    finally:
        done.set()
        sampler.join()
    growth = (peak[0] - before) / 1e6
    assert growth < 60, f"agent grew by {growth:.1f} MB"
    full = result.details["full_output"]
    assert "full output: " + full in result.content and "1,000,001 lines" in result.content
    dropped = 100_000_000 + len("THE END\n") - LOG_HEAD_CHARS - LOG_TAIL_CHARS
    assert result.details["log_dropped_chars"] == dropped and f"{dropped:,} chars between dropped" in result.content
    log = Path(full).read_text()
    assert len(log) < LOG_HEAD_CHARS + LOG_TAIL_CHARS + 500 and log.startswith("x" * 99 + "\n")
    assert f"[… {dropped:,} characters" in log and log.endswith("x" * 99 + "\nTHE END\n")
    assert result.content.rstrip().endswith("THE END")
    assert len(result.content) <= ctx.output_budget


def test_what_streams_live_is_redacted_even_when_a_key_comes_in_pieces(make_ctx):
    key = "sk-" + "A1b2C3d4" * 4
    pem = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmU=\n-----END OPENSSH PRIVATE KEY-----\n"
    script = ("import sys, time\n"
              f"for piece in ({key[:5]!r}, {key[5:] + chr(10)!r}, *{pem.splitlines(keepends=True)!r}):\n"
              "    sys.stdout.write(piece); sys.stdout.flush(); time.sleep(0.08)\nprint('done')")
    ctx = make_ctx()
    result = dispatch(ctx, script=script)  # the result is redacted by the dispatcher, the live stream as it comes
    live = "".join(ctx.ui.live_output)
    assert "done" in live and "[REDACTED]" in live, live
    assert key[5:] not in live and "b3BlbnNzaC1rZXktdjEAAAAABG5vbmU=" not in live, live
    assert key[5:] not in result.content and "b3BlbnNzaC1rZXktdjEAAAAABG5vbmU=" not in result.content


def test_tail_keeps_whole_lines_within_the_budget(make_ctx):
    ctx = make_ctx()
    ctx.output_budget = 5_000
    result = run(ctx, "for i in range(5000): print(f'line {i:05d} ' + 'y' * (i % 37))")
    assert len(result.content) <= 5_000
    body = [ln for ln in result.content.splitlines() if ln.startswith("line ")]
    assert body[-1].startswith("line 04999")
    assert all(len(ln) == 11 + int(ln[5:10]) % 37 for ln in body)  # no line cut
    assert "[output truncated: showing the last" in result.content


def test_tail_lines_caps_line_count_and_cuts_only_an_overlong_last_line():
    text = "".join(f"{i}\n" for i in range(3000))
    tail, count = tail_lines(text, whole=True, max_chars=100_000, max_lines=2000)
    assert count == 2000 and tail.startswith("1000\n")
    tail, count = tail_lines("a" * 10_000, whole=True, max_chars=100, max_lines=2000)
    assert tail == "a" * 100 and count == 1


def test_short_output_is_not_saved(make_ctx):
    ctx = make_ctx()
    result = run(ctx, "print('small')")
    assert "full_output" not in result.details and not list((ctx.run_dir / "outputs").glob("*"))


