"""report.md: one line per region with its total, largest first. Writes a partial reward (Harbor's reward.txt)."""
import csv
import os
import re
import sys
from collections import defaultdict
from pathlib import Path

totals = defaultdict(float)
with open("sales.csv", newline="") as f:
    for row in csv.DictReader(f):
        totals[row["region"]] += int(row["quantity"]) * float(row["unit_price"])
expected = sorted(((r, round(t, 2)) for r, t in totals.items()), key=lambda kv: -kv[1])

reward_file = Path(os.environ["LOGS_DIR"]) / "verifier" / "reward.txt"
report = Path("report.md")
if not report.is_file():
    print("no report.md")
    reward_file.write_text("0")
    sys.exit(1)
found = []
for line in report.read_text().splitlines():
    m = re.match(r"^\s*[-*]\s*([A-Za-z]+)\s*:\s*([0-9][0-9,]*\.?[0-9]*)\s*$", line)
    if m:
        found.append((m.group(1), round(float(m.group(2).replace(",", "")), 2)))
right_values = sum(1 for r, t in expected if any(fr == r and abs(ft - t) < 0.01 for fr, ft in found))
in_order = [r for r, _ in found] == [r for r, _ in expected]
reward = (right_values / len(expected)) * (1.0 if in_order else 0.5)
print(f"expected {expected}\nfound    {found}\nreward {reward:.2f}")
reward_file.write_text(f"{reward:.3f}")
sys.exit(0 if reward == 1 else 1)
