"""The SOP format, the ledger, retrieval's tokeniser and floor, and the distiller's reply checks."""

from __future__ import annotations

import pytest

from sop import ledger, retrieval
from sop.skill import Skill, SkillError, parse
from sop.words import keywords, tokenize


def test_chinese_and_mixed_text_become_bigrams_and_stems():
    assert tokenize("用 pandas 汇总 CSV 文件") == ["panda", "汇总", "csv", "文件"]  # 用 alone is a function word
    assert "销售" in tokenize("把销售数据汇总成报告") and "数据" in tokenize("把销售数据汇总成报告")
    assert tokenize("Summarise") == tokenize("summarize") == tokenize("summary")  # spellings and forms meet
    assert tokenize("résumé") == tokenize("resume")
    assert keywords("用 pandas 汇总 orders.csv 里的销售额") == ["pandas", "汇总", "orders", "csv", "销售额"]
    assert tokenize("shrink the PNGs and PDFs") == tokenize("shrink the png and pdf")  # acronyms in the plural
    assert tokenize("settings.yml app.db") == tokenize("settings.yaml application database")  # short forms


def _skill(name: str, description: str, body: str = "1. do it") -> Skill:
    return Skill(name=name, description=description, body=body, metadata={"status": "ok"})


def test_retrieval_ranks_by_words_and_lists_nothing_for_an_unrelated_task():
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


def test_a_chinese_task_finds_an_english_sop_through_the_dictionary_and_a_chinese_chat_finds_none():
    skills = [_skill("background-long-job", "Run a long job (training, crawl, build) in the background with nohup, "
                     "keep its log, and check on it later."),
              _skill("qr-code-generate", "Generate a QR code image (PNG or SVG) for a URL or text."),
              _skill("git-undo-commit", "Undo the last git commit without losing work (reset --soft, revert).")]
    assert retrieval.relevant(skills, "在后台运行这个爬虫并查看日志")[0][0].name == "background-long-job"
    assert retrieval.relevant(skills, "生成一个二维码")[0][0].name == "qr-code-generate"
    assert retrieval.relevant(skills, "撤销上一次 git 提交")[0][0].name == "git-undo-commit"
    assert retrieval.relevant(skills, "写一首关于春天的诗") == []  # 首 means head, poem... and nothing here
    assert retrieval.relevant(skills, "今天星期几？") == []


def test_a_word_with_many_senses_weighs_less_than_a_word_with_one():
    from sop import translate

    ranker = retrieval.Ranker([retrieval.skill_fields(s) for s in [
        _skill("a", "Move files along a line."), _skill("b", "Run a job."), _skill("c", "Recursion explained.")]])
    many = translate.concepts("运行")[0]  # to move along, to function, to operate, to run...
    one = translate.concepts("递归")[0]  # recursion
    assert "run" in many[1] and len(many[1]) > 3 > len(one[1])
    run = next(m for m in ranker.rank("运行", floor=0) if m.index == 1)
    recursion = next(m for m in ranker.rank("递归", floor=0) if m.index == 2)
    assert run.evidence < recursion.evidence


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
