"""The SOP format, the ledger, retrieval's tokeniser and floor, and the distiller's reply checks."""

from __future__ import annotations

import pytest

from memory.distill import DistillError, parse_reply, sop_similarity
from sop import ledger, retrieval
from sop.skill import Skill, SkillError, parse
from sop.tokens import keywords, tokenize
from tests.memory.helpers import JSON_REPLY, SOP_REPLY


def test_chinese_and_mixed_text_become_bigrams_and_stems():
    assert tokenize("用 pandas 汇总 CSV 文件") == ["用", "panda", "汇总", "csv", "文件"]
    assert "销售" in tokenize("把销售数据汇总成报告") and "数据" in tokenize("把销售数据汇总成报告")
    assert tokenize("Summarise") == tokenize("summarize") == tokenize("summary")  # spellings and forms meet
    assert tokenize("résumé") == tokenize("resume")
    assert keywords("用 pandas 汇总 orders.csv 里的销售额") == ["pandas", "汇总", "orders", "csv", "里的销售额"]


def _skill(name: str, description: str, body: str = "1. do it") -> Skill:
    return Skill(name=name, description=description, body=body, metadata={"status": "ok"})


def test_retrieval_ranks_by_meaning_words_and_lists_nothing_for_an_unrelated_task():
    skills = [_skill("csv-summary-script", "Summarise a CSV file with pandas: totals per column."),
              _skill("kill-process-on-port", "Stop the process that holds a port (address already in use).",
                     "1. lsof -i :PORT"),
              _skill("merge-excel-sheets", "合并多个 Excel 文件或工作表为一个表格。")]
    assert retrieval.relevant(skills, "give me totals per column of sales.csv")[0][0].name == "csv-summary-script"
    assert retrieval.relevant(skills, "把这几个 excel 文件合并成一个")[0][0].name == "merge-excel-sheets"
    assert retrieval.relevant(skills, "Hello") == []
    assert retrieval.relevant(skills, "write a poem about the sea") == []
    archived = [_skill("csv-summary-script", "Summarise a CSV file.")]
    archived[0].metadata["status"] = "archived"
    assert retrieval.relevant(archived, "summarise a csv file") == []


def test_the_format_is_validated_field_by_field():
    with pytest.raises(SkillError, match="differs from its folder name"):
        parse("---\nname: a-b\ndescription: x\n---\nbody", folder_name="c-d")
    with pytest.raises(SkillError, match="at most 64"):
        parse(f"---\nname: {'a' * 65}\ndescription: x\n---\n")
    with pytest.raises(SkillError, match="metadata` values must be strings"):
        parse("---\nname: a\ndescription: x\nmetadata:\n  k: [1]\n---\n")
    skill = parse("---\nname: a\ndescription: x\nlicense: MIT\nmetadata:\n  uses: 3\n---\nbody")
    assert skill.metadata == {"uses": "3"} and skill.extra == {"license": "MIT"}
    assert parse(skill.text()) == skill  # written back unchanged


def test_the_ledger_flags_after_two_failures_in_a_row_and_archives_after_four():
    meta = ledger.stamp({}, run_id="r1", source="distilled")
    meta, change = ledger.record(meta, success=False)
    assert change == "" and meta["status"] == "ok"
    meta, change = ledger.record(meta, success=False)
    assert change == "flagged"
    meta, change = ledger.record(meta, success=True)
    assert change == "ok" and meta["failures_in_a_row"] == "0"
    for _ in range(ledger.ARCHIVE_AFTER):
        meta, change = ledger.record(meta, success=False)
    assert change == "archived" and (meta["uses"], meta["failures"], meta["successes"]) == ("7", "6", "1")
    assert ledger.stamp(meta, run_id="r2", source="x")["runs"] == "r1,r2"


@pytest.mark.parametrize("reply", ["NOTHING", "nothing.", "**NOTHING**", "NOTHING\n\nThe run was trivial."])
def test_nothing_in_its_usual_forms_means_nothing(reply):
    assert parse_reply(reply).skill is None


@pytest.mark.parametrize(("reply", "why"), [
    ("I learned that CSV files are useful.", "neither NOTHING nor an SOP"),
    ("---\nname: x-y\ndescription: short\n---\n1. a", "description is too short"),
    ("---\nname: x-y\ndescription: A description that is long enough to say when.\n---\nJust prose, no steps, "
     "which goes on and on to be longer than the minimum body length of eighty characters.", "no steps"),
    ("---\nname: x\n---\n", "malformed"),
])
def test_junk_replies_are_refused_with_the_reason(reply, why):
    with pytest.raises(DistillError, match=why):
        parse_reply(reply)


def test_fenced_replies_updates_and_wordy_names_are_understood():
    decision = parse_reply("UPDATE: csv-summary-script\n```markdown\n" + SOP_REPLY.format(name="CSV Summary", extra="")
                           + "```")
    assert decision.update == "csv-summary-script" and decision.skill.name == "csv-summary"


def test_near_duplicates_are_close_and_distinct_sops_are_not():
    a = parse_reply(SOP_REPLY.format(name="csv-summary-script", extra="")).skill
    b = parse_reply(SOP_REPLY.format(name="summarize-csv-file", extra=" for a report")).skill
    c = parse_reply(JSON_REPLY).skill
    assert sop_similarity(a, b) > 0.9 > 0.3 > sop_similarity(a, c)
