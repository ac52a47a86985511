"""When is a learnt script offered ("For this task, run it: ...")? A held-out set of task pairs: each taught task is
learnt as ga learns it (its program, the task's values lifted into parameters, saved as an SOP), then a related task
(the same procedure on other values) and an unrelated one sharing words with it are listed against that SOP alone.

    python bench/perf/offer_bench.py [--json]

Goal (issue "Learning, round 2"): related tasks offered the ready-to-run line >= 90%, unrelated ones <= 5%.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from memory.index import task_listing  # noqa: E402
from memory.learn.extract import Extraction  # noqa: E402
from memory.learn.learnt import save_learnt  # noqa: E402
from memory.learn.script import Lifter, build  # noqa: E402
from memory.learn.steps import Step  # noqa: E402
from sop.library import install_seeds  # noqa: E402

READY = "For this task, run it with code_run"


@dataclass
class Case:
    taught: str
    files: dict[str, str]
    code: str
    related: str
    related_files: dict[str, str]
    unrelated: str
    unrelated_files: dict[str, str]


CSV = "id,amount\n1,10.5\n2,20.25\n"
LOG = "INFO start\nERROR disk\nINFO ok\n"
CASES = [
    Case("`payments.csv` has a column named `amount`. Write the sum of that column into `total.txt`.",
         {"payments.csv": CSV},
         "import csv\ntotal = sum(float(r['amount']) for r in csv.DictReader(open('payments.csv')))\n"
         "open('total.txt', 'w').write(f'{total:.2f}\\n')\n",
         "`sales.csv` has a column named `price`. Write the sum of that column into `sum.txt`.",
         {"sales.csv": "id,price\n1,2\n"},
         "Write a short poem about the sum of all fears into `poem.txt`.", {}),
    Case("Count the lines of `app.log` that contain `ERROR` and write the number into `errors.txt`.",
         {"app.log": LOG},
         "n = sum(1 for line in open('app.log') if 'ERROR' in line)\nopen('errors.txt', 'w').write(f'{n}\\n')\n",
         "Count the lines of `server.log` that contain `WARN` and write the number into `warns.txt`.",
         {"server.log": LOG},
         "Fix the ERROR handling in `app.py` so that a missing file prints a message instead of a traceback.",
         {"app.py": "open('x')\n"}),
    Case("Sort the lines of `names.txt` alphabetically into `sorted.txt`.", {"names.txt": "b\na\n"},
         "lines = sorted(open('names.txt').read().splitlines())\nopen('sorted.txt', 'w').write('\\n'.join(lines) + "
         "'\\n')\n",
         "Sort the lines of `cities.txt` alphabetically into `cities_sorted.txt`.", {"cities.txt": "b\na\n"},
         "Explain in two sentences how the `sorted` function in Python treats upper-case letters.", {}),
    Case("In `app.py`, rename the function `calc` to `compute` everywhere.",
         {"app.py": "def calc(x):\n    return x\n\nprint(calc(1))\n"},
         "import re\ntext = open('app.py').read()\nopen('app.py', 'w').write(re.sub(r'\\bcalc\\b', 'compute', text))\n",
         "In `tools.py`, rename the function `parse` to `read_config` everywhere.",
         {"tools.py": "def parse():\n    pass\n"},
         "Add a function `mul` to `app.py` that multiplies two numbers.",
         {"app.py": "def add(a, b):\n    return a + b\n"}),
    Case("Fix the `add` function in `app.py`: it must return the sum of its two arguments.",
         {"app.py": "def add(a, b):\n    return a - b\n"},
         "text = open('app.py').read()\nopen('app.py', 'w').write(text.replace('return a - b', 'return a + b'))\n",
         "Fix the `add` function in `calc.py`: it must return the sum of its two arguments.",
         {"calc.py": "def add(a, b):\n    return a - b\n"},
         "Add a function `mul` to `app.py` that returns the product of its two arguments.",
         {"app.py": "def add(a, b):\n    return a + b\n"}),
    Case("Write the number of files in the folder `logs` into `count.txt`.", {"logs/a.log": "x\n"},
         "import os\nopen('count.txt', 'w').write(f\"{len(os.listdir('logs'))}\\n\")\n",
         "Write the number of files in the folder `images` into `n.txt`.", {"images/a.png": "x\n"},
         "Delete the folder `logs` and everything in it.", {"logs/a.log": "x\n"}),
    Case("Convert `items.json` (a list of objects with `name` and `price`) into `items.csv` with a header line.",
         {"items.json": '[{"name": "pen", "price": 1}]'},
         "import csv, json\nrows = json.load(open('items.json'))\nw = csv.writer(open('items.csv', 'w', newline=''))\n"
         "w.writerow(['name', 'price'])\nfor r in rows:\n    w.writerow([r['name'], r['price']])\n",
         "Convert `products.json` (a list of objects with `name` and `price`) into `products.csv` with a header line.",
         {"products.json": '[{"name": "pen", "price": 1}]'},
         "What is the price of the pen in `items.json`?", {"items.json": '[{"name": "pen", "price": 1}]'}),
    Case("Remove duplicate lines from `emails.txt`, keeping the first of each, and write the result to `unique.txt`.",
         {"emails.txt": "a\na\nb\n"},
         "seen, out = set(), []\nfor line in open('emails.txt'):\n    if line not in seen:\n        seen.add(line)\n"
         "        out.append(line)\nopen('unique.txt', 'w').write(''.join(out))\n",
         "Remove duplicate lines from `ips.txt`, keeping the first of each, and write the result to `ips_unique.txt`.",
         {"ips.txt": "1\n1\n"},
         "Write the first line of `emails.txt` into `first.txt`.", {"emails.txt": "a\n"}),
    Case("Write the largest value of the `score` column of `results.csv` into `max.txt`.",
         {"results.csv": "name,score\na,3\nb,9\n"},
         "import csv\nbest = max(float(r['score']) for r in csv.DictReader(open('results.csv')))\n"
         "open('max.txt', 'w').write(f'{best:g}\\n')\n",
         "Write the largest value of the `temp` column of `weather.csv` into `hottest.txt`.",
         {"weather.csv": "day,temp\n1,3\n"},
         "Rename the column `score` of `results.csv` to `points`.", {"results.csv": "name,score\na,3\n"}),
    Case("Replace every `http://` with `https://` in `links.md`.", {"links.md": "see http://a\n"},
         "text = open('links.md').read()\nopen('links.md', 'w').write(text.replace('http://', 'https://'))\n",
         "Replace every `http://` with `https://` in `README.md`.", {"README.md": "see http://a\n"},
         "Download the page `https://example.org` and save its title into `title.txt`.", {}),
]

HELD_OUT = [  # written before the floor was chosen on CASES; related tasks reworded as a user would
    Case("Write the average of the `celsius` column of `temps.csv` into `avg.txt`.",
         {"temps.csv": "day,celsius\n1,3\n2,5\n"},
         "import csv\nv = [float(r['celsius']) for r in csv.DictReader(open('temps.csv'))]\n"
         "open('avg.txt', 'w').write(f'{sum(v) / len(v):g}\\n')\n",
         "Put the average of the `points` column in `scores.csv` into `mean.txt`.",
         {"scores.csv": "name,points\na,3\n"},
         "Add a `fahrenheit` column to `temps.csv` computed from `celsius`.", {"temps.csv": "day,celsius\n1,3\n"}),
    Case("Write the lines of `todo.txt` in reverse order into `reversed.txt`.", {"todo.txt": "a\nb\n"},
         "lines = open('todo.txt').read().splitlines()\nopen('reversed.txt', 'w').write('\\n'.join(lines[::-1]) + "
         "'\\n')\n",
         "Reverse the order of the lines of `steps.txt` and write them to `steps_rev.txt`.", {"steps.txt": "a\n"},
         "Write the number of lines of `todo.txt` into `n.txt`.", {"todo.txt": "a\n"}),
    Case("Write the value of `port` in the `[server]` section of `config.ini` into `port.txt`.",
         {"config.ini": "[server]\nport = 80\n"},
         "import configparser\nc = configparser.ConfigParser()\nc.read('config.ini')\n"
         "open('port.txt', 'w').write(c['server']['port'] + '\\n')\n",
         "Write the value of `host` in the `[db]` section of `settings.ini` into `host.txt`.",
         {"settings.ini": "[db]\nhost = x\n"},
         "Change `port` in the `[server]` section of `config.ini` to 8080.", {"config.ini": "[server]\nport = 80\n"}),
    Case("Write the value of the key `version` in `package.json` into `version.txt`.",
         {"package.json": '{"version": "1.2.0"}'},
         "import json\nopen('version.txt', 'w').write(json.load(open('package.json'))['version'] + '\\n')\n",
         "Read the key `name` from `app.json` and write its value into `name.txt`.", {"app.json": '{"name": "x"}'},
         "Set the key `version` in `package.json` to `2.0.0`.", {"package.json": '{"version": "1.2.0"}'}),
    Case("Write the number of rows of `people.csv`, without the header, into `rows.txt`.",
         {"people.csv": "name\na\nb\n"},
         "n = len(open('people.csv').read().splitlines()) - 1\nopen('rows.txt', 'w').write(f'{n}\\n')\n",
         "How many rows does `orders.csv` have without its header? Write the number into `orders_count.txt`.",
         {"orders.csv": "id\n1\n"},
         "Write the header line of `people.csv` into `header.txt`.", {"people.csv": "name\na\n"}),
    Case("Replace the word `colour` with `color` everywhere in `notes.md`.", {"notes.md": "colour\n"},
         "import re\nt = open('notes.md').read()\nopen('notes.md', 'w').write(re.sub(r'\\bcolour\\b', 'color', t))\n",
         "In `essay.md`, replace every occurrence of the word `grey` with `gray`.", {"essay.md": "grey\n"},
         "Count how many times the word `colour` appears in `notes.md` and write it into `n.txt`.",
         {"notes.md": "colour\n"}),
    Case("Copy every file of `inbox` whose name ends in `.txt` into the folder `archive`.", {"inbox/a.txt": "x\n"},
         "import shutil, pathlib\npathlib.Path('archive').mkdir(exist_ok=True)\n"
         "for p in pathlib.Path('inbox').glob('*.txt'):\n    shutil.copy(p, 'archive')\n",
         "Copy the files of `drafts` ending in `.md` into the folder `backup`.", {"drafts/a.md": "x\n"},
         "List the files of `inbox` that end in `.txt` and write their names into `names.txt`.",
         {"inbox/a.txt": "x\n"}),
    Case("Extract the `email` column of `users.csv` into `emails.txt`, one per line, without the header.",
         {"users.csv": "name,email\na,a@x\n"},
         "import csv\nopen('emails.txt', 'w').write(''.join(r['email'] + '\\n' for r in "
         "csv.DictReader(open('users.csv'))))\n",
         "Extract the `phone` column of `contacts.csv` into `phones.txt`, one per line, without the header.",
         {"contacts.csv": "name,phone\na,1\n"},
         "Send an email to every user in `users.csv`.", {"users.csv": "name,email\na,a@x\n"}),
    Case("Write the number of words in `essay.txt` into `words.txt`.", {"essay.txt": "a b c\n"},
         "n = len(open('essay.txt').read().split())\nopen('words.txt', 'w').write(f'{n}\\n')\n",
         "Count the words of `story.txt` and write the count into `count.txt`.", {"story.txt": "a b\n"},
         "Fix the spelling mistakes in `essay.txt`.", {"essay.txt": "a b c\n"}),
    Case("Append the line `DONE` to the end of `todo.txt`.", {"todo.txt": "a\n"},
         "open('todo.txt', 'a').write('DONE\\n')\n",
         "Append the line `END` at the end of `log.txt`.", {"log.txt": "a\n"},
         "Remove the line `DONE` from `todo.txt`.", {"todo.txt": "a\nDONE\n"}),
]


def _learn(home: Path, case: Case, i: int) -> str:
    ws = home.parent / f"taught{i}"
    for name, text in case.files.items():
        (ws / name).parent.mkdir(parents=True, exist_ok=True)
        (ws / name).write_text(text)
    step = Step(kind="python", code=case.code)
    lifter = Lifter(case.taught, [step], existed=set(case.files))
    extraction = Extraction(script=build([step], lifter), steps=[step], verified="checked", outputs=[])
    saved = save_learnt(extraction, home=home, skills_path=[], run_id=f"r{i}", task=case.taught, check="",
                        secrets=(), workspace=ws)
    return saved if isinstance(saved, str) else saved.skill.name


def _probe(home: Path, task: str, files: dict[str, str], tag: str, name: str) -> tuple[bool, bool]:
    """(the SOP `name` is offered ready to run, it is listed) for `task` in a workspace holding `files`."""
    ws = home.parent / f"probe-{tag}"
    ws.mkdir()
    for file, text in files.items():
        (ws / file).parent.mkdir(parents=True, exist_ok=True)
        (ws / file).write_text(text)
    listing = task_listing(home, task, workdir=ws)
    entries = listing.split("\n- ")[1:]
    mine = next((e for e in entries if e.startswith(f"{name} (")), "")
    return READY in mine, bool(mine)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--set", choices=("dev", "held-out"), default="held-out",
                        help="dev: the cases the floor was chosen on; held-out (default): the others")
    args = parser.parse_args()
    cases = CASES if args.set == "dev" else HELD_OUT
    rows = []
    with tempfile.TemporaryDirectory() as tmp:  # one library: the seeds and every taught task, as a user has
        home = Path(tmp) / "home"
        (home / "sop").mkdir(parents=True)
        install_seeds(home)
        names = [_learn(home, case, i) for i, case in enumerate(cases)]
        for i, (case, name) in enumerate(zip(cases, names, strict=True)):
            related = _probe(home, case.related, case.related_files, f"r{i}", name)
            unrelated = _probe(home, case.unrelated, case.unrelated_files, f"u{i}", name)
            rows.append({"taught": case.taught, "sop": name, "related_offered": related[0],
                         "related_listed": related[1], "unrelated_offered": unrelated[0],
                         "unrelated_listed": unrelated[1]})
    n = len(rows)
    summary = {key: sum(r[key] for r in rows) for key in ("related_offered", "related_listed", "unrelated_offered",
                                                          "unrelated_listed")}
    if args.json:
        print(json.dumps({"rows": rows, "summary": summary, "pairs": n}, indent=1))
        return
    for r in rows:
        print(f"{r['sop'][:34]:34} related offered={r['related_offered']!s:5} listed={r['related_listed']!s:5} "
              f"unrelated offered={r['unrelated_offered']!s:5} listed={r['unrelated_listed']!s:5}")
    print(f"{n} pairs: related offered {summary['related_offered']}/{n}, listed {summary['related_listed']}/{n}; "
          f"unrelated offered {summary['unrelated_offered']}/{n}, listed {summary['unrelated_listed']}/{n}")


if __name__ == "__main__":
    main()
