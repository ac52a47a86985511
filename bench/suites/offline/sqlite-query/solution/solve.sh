#!/usr/bin/env bash
set -eu
python3 - <<'PY'
import sqlite3
name, total = sqlite3.connect("shop.db").execute(
    "SELECT c.name, SUM(o.amount) FROM orders o JOIN customers c ON c.id = o.customer_id "
    "WHERE o.ordered_on LIKE '2024-%' GROUP BY c.id ORDER BY 2 DESC LIMIT 1").fetchone()
open("answer.txt", "w").write(f"{name}: {total:.2f}\n")
PY
