"""Record the session that bench/perf/context_bench.py replays: 60 turns of a scripted agent fixing a bug in a small
project with the real tools (file reads, code runs, patches, web scans of saved pages in a real Chromium).

    python bench/perf/context_record.py [--out bench/perf/fixtures/context_session.json.gz] [--corpus DIR]

The workspace is generated (fixed seed), the pages come from ../shared/web-corpus plus two small pages of its
own, and every tool result is what the real tool returned, with the whole budget it had (nothing masked). The
fixture keeps the calls and their results; the benchmark replays them, so its figures need neither the tools,
the browser nor the corpus. Re-record only when the tools' output format changes.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import json
import random
import shutil
import statistics
import sys
import tempfile
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from bench.perf.web_scan_bench import DEFAULT_CORPUS, block_the_internet, serve  # noqa: E402
from ga.agent import Agent  # noqa: E402
from ga.cli.terminal import Terminal  # noqa: E402
from ga.config import load_settings  # noqa: E402
from ga.runs.folder import Run  # noqa: E402
from ga.tooling.dispatch import Dispatcher  # noqa: E402
from tests.scripted import ScriptedModel, tool_call  # noqa: E402
from tools import load_tools  # noqa: E402
from tools.web.session import get_session  # noqa: E402

TASK = ("The nightly sales report prints wrong totals. Find and fix the bug so the tests pass, without changing "
        "the CSV format. Then write REPORT.md with: the p95 request latency in logs/service.log, the current "
        "upstream release from the docs site at {site}/docs/release.html, and what you changed.")
FACTS = {"p95": "184.6", "release": "4.12.3", "failing": "1243.5"}
"""Values the later turns need: where they come from is in the session below."""
PAGES = {"guide.html": "google-sre-book-1", "changelog.html": "wikipedia-4", "news.html": "ars-1",
         "history.html": "wikipedia-2", "blog.html": "mozilla-2", "api.html": "nytimes-2", "faq.html": "medium-3",
         "notes.html": "wapo-1", "tips.html": "lifehacker-working", "city.html": "citylab-1"}


def helper(i: int, topic: str) -> str:
    return (f"def {topic}_{i}(rows, *, key=\"amount\", default=0.0):\n"
            f"    \"\"\"Aggregate step {i} of the {topic} pipeline: skips rows without `key`, returns the sum.\"\"\"\n"
            f"    total = default\n    for row in rows:\n        value = row.get(key)\n"
            f"        if value is None:\n            continue\n        total += float(value) * {1 + i % 3}\n"
            f"    return round(total, {2 + i % 2})\n\n\n")


def project(ws: Path) -> None:
    rng = random.Random(12)
    (ws / "report").mkdir()
    (ws / "tests").mkdir()
    (ws / "data").mkdir()
    (ws / "logs").mkdir()
    (ws / "README.md").write_text("# Nightly sales report\n\n" + "".join(
        f"- Step {i}: the job loads data/sales.csv, groups sales by region and prints totals per region and "
        f"per month ({i}).\n" for i in range(40)) + "\nRun `python -m report data/sales.csv`.\n")
    (ws / "report" / "__init__.py").write_text('"""Nightly sales report."""\n')
    (ws / "report" / "loader.py").write_text(
        '"""Loading the sales CSV."""\n\nimport csv\n\n\n'
        "def parse_amount(text):\n    \"\"\"An amount like '1,234.50' as a float.\"\"\"\n"
        "    return float(text.replace(',', '.'))\n\n\n"
        "def load(path):\n    with open(path, newline='') as f:\n"
        "        return [{**row, 'amount': parse_amount(row['amount'])} for row in csv.DictReader(f)]\n\n\n"
        + "".join(helper(i, "load") for i in range(14)))
    (ws / "report" / "totals.py").write_text(
        '"""Totals per region."""\n\n\n'
        "def region_totals(rows):\n    totals = {}\n    for row in rows:\n"
        "        totals[row['region']] = totals.get(row['region'], 0) + int(row['amount'])\n"
        "    return totals\n\n\n" + "".join(helper(i, "total") for i in range(18)))
    (ws / "report" / "util.py").write_text('"""Small helpers."""\n\n\n' + "".join(helper(i, "util") for i in range(40)))
    (ws / "tests" / "test_totals.py").write_text(
        "from report.loader import parse_amount\nfrom report.totals import region_totals\n\n\n"
        "def test_totals():\n    rows = [{'region': 'north', 'amount': 1000.25},\n"
        "            {'region': 'north', 'amount': 243.25}]\n"
        "    assert region_totals(rows) == {'north': 1243.5}\n\n\n"
        "def test_amount_with_thousands():\n    assert parse_amount('1,234.50') == 1234.5\n")
    regions = ["north", "south", "east", "west"]
    (ws / "data" / "sales.csv").write_text("date,region,amount\n" + "".join(
        f"2026-{1 + i % 12:02d}-{1 + i % 28:02d},{regions[i % 4]},\"{rng.randint(1, 9)},{rng.randint(100, 999)}.50\"\n"
        for i in range(3000)))
    latencies = sorted(rng.gauss(120, 40) for _ in range(7999))
    lines = [f"2026-11-30T02:{i // 60 % 60:02d}:{i % 60:02d} INFO GET /api/sales {max(3.0, ms):.1f} ms"
             for i, ms in enumerate(latencies)]
    rng.shuffle(lines)
    (ws / "logs" / "service.log").write_text("\n".join(lines) + "\n")
    (ws / "vendor").mkdir()  # real code to read: the modules the report leans on, as the interpreter ships them
    for module in (statistics, csv, textwrap, argparse):
        shutil.copy(module.__file__, ws / "vendor" / Path(module.__file__).name)


def site(folder: Path, corpus: Path) -> None:
    docs = folder / "docs"
    docs.mkdir(parents=True)
    for name, page in PAGES.items():
        shutil.copy(corpus / page / "source.html", docs / name)
    links = "".join(f'<li><a href="{n}">{n}</a></li>' for n in [*PAGES, "release.html"])
    (docs / "index.html").write_text(f"<html><head><title>Report docs</title></head><body><h1>Docs</h1>"
                                     f"<ul>{links}</ul></body></html>")
    (docs / "release.html").write_text("<html><head><title>Releases</title></head><body><main><h1>Releases</h1>"
                                       "<p>Current release: <b>4.12.3</b> (2026-11-02).</p><ul>" + "".join(
                                           f"<li>4.{12 - i // 5}.{(3 - i) % 5}: fixes and small changes</li>"
                                           for i in range(30)) + "</ul></main></body></html>")


def session(base: str) -> list[dict]:
    """The scripted model's side: 60 replies, the last one the answer."""
    code, read, scan = "code_run", "file_read", "web_scan"
    p95 = ("import re, statistics\nlog = open('logs/service.log').read()\n"
           "rows = re.findall(r'T02:(\\d\\d):\\d\\d .* ([0-9.]+) ms$', log, re.M)\n"
           "for minute in sorted({m for m, _ in rows}):\n    part = [float(v) for m, v in rows if m == minute]\n"
           "    print(f'02:{minute} requests={len(part)} mean_ms={statistics.mean(part):.1f}')\n"
           "ms = [float(v) for _, v in rows]\nq = statistics.quantiles(ms, n=100)\n"
           "print(f'requests={len(ms)} p50_ms={q[49]:.1f} p95_ms={q[94]:.1f} p99_ms={q[98]:.1f}')")
    pytest = tool_call(code, script="python -m pytest tests 2>&1 | tail -80", type="bash")
    turns = [
        [tool_call(read, path=".")],
        [tool_call(read, path="README.md")],
        [tool_call(read, path="report")],
        [tool_call(read, path="report/totals.py")],
        [tool_call(read, path="report/loader.py")],
        [pytest],
        [tool_call(read, path="tests/test_totals.py")],
        [tool_call("update_working_checkpoint", key_info="Goal: fix totals, REPORT.md (p95, release, changes). "
                   "test_totals fails: expected north 1243.5. Suspect int() in region_totals.")],
        [tool_call(code, script="grep -n 'int(\\|round(' report/*.py | head -60", type="bash")],
        [tool_call(read, path="vendor/csv.py", count=400)],
        [tool_call(code, script="head -200 data/sales.csv", type="bash")],
        [tool_call(read, path="logs/service.log", count=200)],
        [tool_call(read, path="vendor/statistics.py", keyword="def quantiles")],
        [tool_call(code, script=p95)],
        [tool_call("update_working_checkpoint", key_info="Goal: fix totals, REPORT.md. p95=184.6 ms (7999 "
                   "requests). test_totals: int() drops cents; parse_amount breaks on '1,234.50'.")],
        [tool_call(scan, url=f"{base}/docs/index.html")],
        [tool_call(scan, url=f"{base}/docs/release.html")],
        [tool_call("update_working_checkpoint", key_info="Goal: fix totals, REPORT.md. p95=184.6 ms. Upstream "
                   "release 4.12.3. Bugs: int() in region_totals, parse_amount comma.")],
        [tool_call(scan, url=f"{base}/docs/guide.html")],
        [tool_call(scan, url=f"{base}/docs/changelog.html", text_only=True)],
        [tool_call(read, path="report/util.py")],
        [tool_call(read, path="vendor/statistics.py", start=200, count=400)],
        [tool_call(scan, url=f"{base}/docs/api.html")],
        [tool_call("file_patch", path="report/totals.py", old_content="+ int(row['amount'])",
                   new_content="+ row['amount']")],
        [pytest],
        [tool_call(read, path="report/loader.py", keyword="def parse_amount")],
        [tool_call(read, path="vendor/csv.py", start=200, count=250)],
        [tool_call("file_patch", path="report/loader.py", old_content="return float(text.replace(',', '.'))",
                   new_content="return float(text.replace(',', ''))")],
        [pytest],
        [tool_call("update_working_checkpoint", key_info="Tests pass. Fixed: int() in region_totals (cents "
                   "lost), parse_amount thousands comma. p95=184.6 ms. Release 4.12.3. Next: REPORT.md.")],
        [tool_call(read, path="report/totals.py")],
        [tool_call(code, script="python -c \"from report.loader import load; from report.totals import "
                   "region_totals; print(region_totals(load('data/sales.csv')))\"", type="bash")],
        [tool_call(scan, url=f"{base}/docs/news.html")],
        [tool_call(read, path="vendor/textwrap.py", count=400)],
        [tool_call(code, script="grep -c INFO logs/service.log; grep -n ' 2[0-9][0-9]\\.[0-9] ms' "
                   "logs/service.log | head -150", type="bash")],
        [tool_call(code, script="ls -la report tests data logs vendor", type="bash")],
        [tool_call(read, path="vendor/argparse.py", start=1100, count=400)],
        [tool_call(scan, url=f"{base}/docs/history.html", text_only=True)],
        [tool_call(code, script=p95.replace("p50_ms={q[49]:.1f} p95_ms={q[94]:.1f} p99_ms={q[98]:.1f}",
                                             "p90_ms={q[89]:.1f} p75_ms={q[74]:.1f}"))],
        [tool_call(read, path="vendor/statistics.py", start=600, count=400)],
        [tool_call("file_write", path="tests/test_region_totals.py", content="".join(
            f"def test_region_{i}():\n    from report.totals import region_totals\n"
            f"    assert region_totals([{{'region': 'r', 'amount': {i}.25}}]) == {{'r': {i}.25}}\n\n\n"
            for i in range(30)))],
        [tool_call(code, script="python -m pytest tests -v 2>&1 | tail -60", type="bash")],
        [tool_call(scan, url=f"{base}/docs/blog.html")],
        [tool_call(read, path="logs/service.log", start=4000, count=200)],
        [tool_call(scan, url=f"{base}/docs/faq.html")],
        [tool_call(code, script="python -m report data/sales.csv 2>&1 | head -30", type="bash")],
        [tool_call(read, path="vendor/argparse.py", start=1500, count=400)],
        [tool_call(read, path="vendor/statistics.py", start=1000, count=390)],
        [tool_call("file_write", path="REPORT.md", content=(
            "# Nightly report: totals fixed\n\n## Latency\np95 = 184.6 ms over 7999 requests (logs/service.log)."
            "\n\n## Upstream\nCurrent release: 4.12.3.\n\n## Changes\n- report/totals.py: region_totals summed "
            "int(amount), dropping cents; it sums the amounts now.\n- report/loader.py: parse_amount turned "
            "'1,234.50' into 1.2345; the thousands comma is removed now.\n- tests/test_region_totals.py: 30 "
            "cases.\n"))],
        [tool_call(read, path="REPORT.md")],
        [tool_call("file_patch", path="REPORT.md", old_content="30 \ncases.", new_content="30 cases.")],
        [tool_call("file_patch", path="REPORT.md", old_content="- tests/test_region_totals.py: 30 cases.",
                   new_content="- tests/test_region_totals.py: 30 new cases, all passing.")],
        [tool_call(read, path="REPORT.md")],
        [pytest],
        [tool_call(scan, url=f"{base}/docs/release.html", text_only=True)],
        [tool_call(scan, url=f"{base}/docs/notes.html", text_only=True)],
        [tool_call(read, path="report/totals.py", count=12), tool_call(read, path="report/loader.py", count=12)],
        [tool_call(scan, url=f"{base}/docs/tips.html")],
        [tool_call("update_working_checkpoint", key_info="Done: tests pass, REPORT.md written (p95 184.6 ms, "
                   "release 4.12.3, two fixes). Next: final answer.")],
    ]
    steps = [{"content": "", "tool_calls": calls} for calls in turns]
    steps.append({"content": "Fixed region_totals (int() dropped cents) and parse_amount (thousands comma); tests "
                             "pass. REPORT.md: p95 184.6 ms over 7999 requests, upstream release 4.12.3."})
    return steps


def record(out: Path, corpus: Path) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="ga-context-record-"))
    ws, home = tmp / "ws", tmp / "home"
    ws.mkdir()
    project(ws)
    site(tmp / "site", corpus)
    server, base = serve(tmp / "site")
    steps = session(base)
    settings = load_settings(env={}, home=home, workdir=ws, model="recorded", autonomous=True, max_turns=0,
                             browser_profile=False, context_tokens=10_000_000)
    run = Run.create(settings.runs_dir, TASK.format(site=base), {})
    agent = Agent(settings=settings, model=ScriptedModel(steps), dispatcher=Dispatcher(load_tools()), run=run,
                  ui=Terminal(quiet=True), interactive=False)
    get_session(agent.ctx).call(lambda s: (s.ensure(), block_the_internet(s)))
    outcome = agent.start()
    server.shutdown()
    results = {e["id"]: e for e in run.events() if e["type"] == "result"}
    turns = []
    for message in run.history().messages:
        if message["role"] != "assistant":
            continue
        calls = message.get("tool_calls") or []
        turns.append({"content": message["content"], "calls": [
            {"id": c["id"], "name": c["function"]["name"], "arguments": c["function"]["arguments"],
             "result": results[c["id"]]["content"], "is_error": results[c["id"]]["is_error"]} for c in calls]})
    fixture = {"task": run.state["task"].replace(base, "http://docs.local"), "facts": FACTS, "turns": turns,
               "status": outcome.status}
    text = json.dumps(fixture, ensure_ascii=False, indent=0).replace(base, "http://docs.local")
    out.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(out, "wt", encoding="utf-8", compresslevel=9) as f:
        f.write(text)
    errors = sum(c["is_error"] for t in turns for c in t["calls"])
    print(f"recorded {len(turns)} turns ({errors} failed calls, status {outcome.status}) into {out} "
          f"({out.stat().st_size:,} bytes; {len(text):,} chars)")
    shutil.rmtree(tmp, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(Path(__file__).parent / "fixtures" / "context_session.json.gz"))
    parser.add_argument("--corpus", default=str(DEFAULT_CORPUS), help="the saved pages (../shared/web-corpus)")
    opts = parser.parse_args()
    record(Path(opts.out), Path(opts.corpus))


if __name__ == "__main__":
    main()
