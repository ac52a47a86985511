"""Shared by the memory tests: scripted runs through the real CLI, and a valid SOP reply."""

from __future__ import annotations

import json
from pathlib import Path

from tests.ga.cli.test_cli import ga
from tests.scripted import ScriptedServer, tool_call

SOP_REPLY = """---
name: {name}
description: Write and run a Python script that summarises a CSV file (row count and totals per column).
---
## When to use
A CSV file needs a quick summary{extra}.
## Steps
1. Read the header and two rows with file_read to learn the columns.
2. Write summarize.py with the csv module; print the row count and the totals of numeric columns.
3. Run it with code_run and check one total by hand.
## Pitfalls
- Quoted commas: let the csv module parse them, never split on commas.
"""

REWORDED_REPLY = """---
name: {name}
description: Summarise the columns of a CSV file (totals and counts) with a small Python script.
---
## When to use
Asked for totals or statistics of a CSV{extra}.
## Steps
1. Look at the first lines of the CSV with file_read (count=3) to see the columns.
2. Create a Python script using csv.DictReader that counts the rows and sums each numeric column.
3. Execute it with code_run and verify one total manually.
## Pitfalls
- Do not split lines on commas yourself: quoted fields contain commas.
"""

JSON_REPLY = """---
name: json-to-csv
description: Flatten nested JSON records or JSON Lines into a CSV table with pandas.json_normalize.
---
## When to use
JSON exports (lists of objects, nested fields) must become a spreadsheet.
## Steps
1. Load the records with json.load, or one per line for .jsonl files.
2. Flatten nested objects with pandas.json_normalize(records, sep=".").
3. Write df.to_csv(index=False) and compare the column count with the keys of the first record.
## Pitfalls
- Lists inside records do not flatten: explode them first or keep them as JSON strings.
"""


TASK = "`payments.csv` has a column named `amount`. Write the sum of that column into `total.txt`."
NEXT = "`sales.csv` has a column named `price`. Write the sum of that column into `sum.txt`."
SUM = ("import csv\ntotal = sum(float(r['amount']) for r in csv.DictReader(open('payments.csv')))\n"
       "open('total.txt', 'w').write(f'{total:.2f}\\n')\n")


def payments(workspace, name="payments.csv", column="amount", values=("10.50", "20.25", "5.00")):
    rows = "".join(f"{i},{v}\n" for i, v in enumerate(values, 1))
    (workspace / name).write_text(f"id,{column}\n{rows}")


def sum_run(answer: str = "Done: total.txt holds 35.75.") -> list[dict]:
    """A run as a model makes it: a look around, a failed attempt, the program that worked, the answer."""
    return [{"tool_calls": [tool_call("code_run", type="bash", script="ls -la")]},
            {"tool_calls": [tool_call("code_run", script=SUM.replace("'amount'", "'Amount'"))]},  # KeyError
            {"tool_calls": [tool_call("code_run", script=SUM)]},
            {"content": answer}]


def skill_folder(root: Path, name: str, text: str) -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(text)
    return folder


def csv_run(answer: str = "Done: 2 rows.") -> list[dict]:
    """A successful three-call run of the CSV-summary family."""
    return [
        {"tool_calls": [tool_call("file_write", path="data.csv", content="a,b\n1,2\n3,4\n")]},
        {"tool_calls": [tool_call("file_write", path="summarize.py", content=(
            "import csv\nrows = list(csv.DictReader(open('data.csv')))\nprint(len(rows))\n"))]},
        {"tool_calls": [tool_call("code_run", script="import runpy; runpy.run_path('summarize.py')")]},
        {"content": answer},
    ]


def run_ga(steps: list[dict], home: Path, cwd: Path, task: str, *args: str, **env: str):
    """A run with learning as users get it (GA_LEARN unset: on by default)."""
    env.setdefault("GA_LEARN", "")
    with ScriptedServer(steps) as server:
        proc = ga([task, *args], server, home, cwd, **env)
    return proc, server


def sop_names(home: Path) -> list[str]:
    folder = home / "sop"
    return sorted(p.parent.name for p in folder.glob("*/SKILL.md")) if folder.is_dir() else []


def listed(server: ScriptedServer) -> str:
    """The first request's first user message: where the SOPs and facts listed for the task are, after the task."""
    return next(m["content"] for m in server.requests[0]["messages"] if m["role"] == "user")


def first_user_message(server: ScriptedServer) -> str:
    """The run's first user message after its per-run header line (workspace, platform, date)."""
    first = next(m["content"] for m in server.requests[0]["messages"] if m["role"] == "user")
    header, _, rest = first.partition("\n\n")
    assert header.startswith("Workspace "), first
    return rest


def memory_events(home: Path) -> list[dict]:
    found = []
    for trajectory in (home / "runs").glob("*/trajectory.jsonl"):
        found += [e for e in map(json.loads, trajectory.read_text().splitlines()) if e["type"] == "memory"]
    return found
