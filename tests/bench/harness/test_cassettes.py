"""--record saves a run's exchanges; --replay runs the same agent again with no model at all."""

from __future__ import annotations

import json

from tests.bench.harness.conftest import bench, copy_tasks, rows, tiny_config

FIX = "sed -i 's|(len(values) + 1)|len(values)|' stats.py"
STEPS = [{"tool_calls": [{"name": "run", "arguments": {"command": FIX}}],
          "usage": {"prompt_tokens": 321, "completion_tokens": 12}},
         {"content": "fixed", "usage": {"prompt_tokens": 400, "completion_tokens": 3}}]


def test_a_recorded_run_replays_without_a_model(tmp_path):
    suite = copy_tasks(tmp_path / "suite", "fix-calc-bug")
    (suite / "fix-calc-bug" / "scripted" / "tiny.json").write_text(json.dumps(STEPS))
    tiny, tapes = tiny_config(tmp_path), tmp_path / "tapes"
    assert bench(suite, "--agents", tiny, "--upstream", "scripted", "--record", tapes, "--out", tmp_path / "a",
                 "--no-report") == 0
    assert (tapes / "tiny" / "fix-calc-bug" / "1.jsonl").is_file()
    assert bench(suite, "--agents", tiny, "--replay", tapes, "--out", tmp_path / "b", "--no-report") == 0
    (recorded,), (replayed,) = rows(tmp_path / "a"), rows(tmp_path / "b")
    assert recorded["success"] and replayed["success"]
    for key in ("input_tokens", "output_tokens", "requests", "tool_calls"):
        assert recorded[key] == replayed[key]
    exchanges = (tmp_path / "b" / "trials" / "tiny" / "fix-calc-bug" / "1" / "exchanges.jsonl").read_text()
    assert [json.loads(line)["replay"] for line in exchanges.splitlines()] == ["key", "key"]
