"""The context: masking in steps, what it keeps, byte-identical prefixes, resume, the summary fallback, budgets."""

from __future__ import annotations

import copy
import json

import pytest

from ga.context import compaction, history
from ga.context.history import Context
from ga.tooling import tokens

TASK = {"role": "user", "content": "the task: count the rows"}


@pytest.fixture
def saver(tmp_path):
    def save(name: str, data: str):
        path = tmp_path / "outputs" / name
        path.parent.mkdir(exist_ok=True)
        path.write_text(data)
        return path

    return save


def add_turn(ctx: Context, i: int, content: str, *, calls: int = 1, user: str | None = None) -> None:
    ids = [f"c{i}_{k}" for k in range(calls)]
    ctx.add({"role": "assistant", "content": f"step {i}",
             "tool_calls": [{"id": c, "type": "function",
                             "function": {"name": "file_read", "arguments": json.dumps({"path": f"f{i}.txt"})}}
                            for c in ids]})
    for c in ids:
        ctx.add({"role": "tool", "tool_call_id": c, "content": content})
    if user:
        ctx.add({"role": "user", "content": user})


def rows(i: int, n: int = 60) -> str:
    return "".join(f"{i}|row {i}.{k}: value {k * 7}\n" for k in range(n)) + f"[lines 1-{n} of 900; continue]"


def paired(messages: list[dict]) -> bool:
    """Every tool result follows the assistant message that asked for it, and every call has its result."""
    open_ids: set[str] = set()
    for m in messages:
        if m["role"] == "assistant":
            if open_ids:
                return False
            open_ids = {c["id"] for c in m.get("tool_calls") or []}
        elif m["role"] == "tool":
            if m["tool_call_id"] not in open_ids:
                return False
            open_ids.discard(m["tool_call_id"])
    return not open_ids


def size(messages: list[dict]) -> int:
    return tokens.request_tokens(messages)


def test_masking_keeps_the_task_the_user_the_checkpoint_and_the_newest_turns(saver):
    ctx = Context("system", budget=10_000, save_output=saver)
    ctx.add(TASK)
    for i in range(1, 31):
        add_turn(ctx, i, rows(i), user=f"The user adds: constraint {i}" if i % 10 == 0 else None)
    messages = ctx.request("CHECKPOINT-NOTE")
    assert messages[1] == TASK
    assert "CHECKPOINT-NOTE" in messages[-1]["content"]
    users = [m["content"].split(history.CHECKPOINT_NOTE)[0] for m in messages if m["role"] == "user"]
    assert [u for u in users if "constraint" in u] == [f"The user adds: constraint {i}" for i in (10, 20, 30)]
    results = [m for m in messages if m["role"] == "tool"]
    newest = results[-history.KEEP_TURNS:]
    assert [m["content"].split("\n\n[Working")[0] for m in newest] == [rows(i) for i in (28, 29, 30)]
    stubs = [m["content"] for m in results if m["content"].startswith("[old result masked")]
    assert len(stubs) >= 20
    assert paired(messages)
    assert size(messages) <= 10_000
    # a stub: tool, key arguments, what it said, where the whole is (saved in the run's outputs, readable)
    assert "· file_read path=f1.txt →" in stubs[0] and "[lines 1-60 of 900; continue]" in stubs[0]
    saved = stubs[0].split("file_read ")[1].split(" for all")[0]
    assert open(saved).read() == rows(1)


def shared(previous: list[dict], messages: list[dict]) -> float:
    """The share of the previous request (by estimated tokens) that starts the next one unchanged."""
    common = 0
    for old, new in zip(previous, messages, strict=False):
        if old != new:
            text, now = old.get("content") or "", new.get("content") or ""
            same = next((k for k, (a, b) in enumerate(zip(text, now, strict=False)) if a != b),
                        min(len(text), len(now)))
            common += tokens.estimate(text[:same])
            break
        common += tokens.message_tokens(old)
    return common / size(previous)


def test_masking_happens_in_steps_and_between_steps_the_prefix_is_byte_identical(saver):
    steps = []
    ctx = Context("system", budget=6_000, save_output=saver, on_step=steps.append)
    ctx.add(TASK)
    previous = None
    for i in range(1, 61):
        add_turn(ctx, i, rows(i, 20), calls=1 + i % 3)
        before = len(steps)
        messages = ctx.request(f"checkpoint after turn {i}")
        if previous is not None and len(steps) == before:
            # no step: the previous request minus its checkpoint is a byte-identical prefix of this one
            head = json.dumps(previous[:-1])[:-1]
            assert json.dumps(messages).startswith(head)
            last = previous[-1]["content"].split(history.CHECKPOINT_NOTE)[0]
            assert messages[len(previous) - 1]["content"] == last
            assert shared(previous, messages) > 0.9
        assert size(messages) <= 6_000 and paired(messages)
        previous = messages
    # each step frees a quarter of the budget or more, so the next one is several turns away
    assert 3 <= len(steps) <= 10 and all(s.after <= 6_000 * history.FOLD_ABOVE for s in steps)


def test_large_steps_for_a_local_server_come_less_often(saver):
    """GA_CONTEXT_STEPS=large (--local): each step masks deeper, so the prefix breaks fewer times."""
    steps: dict[str, list] = {"small": [], "large": []}
    for kind, taken in steps.items():
        ctx = Context("system", budget=8_000, state={"steps": kind}, save_output=saver, on_step=taken.append)
        ctx.add(TASK)
        for i in range(1, 61):
            add_turn(ctx, i, rows(i, 20), calls=1 + i % 3)
            messages = ctx.request(f"checkpoint after turn {i}")
            assert size(messages) <= 8_000 and paired(messages)
    assert 3 <= len(steps["large"]) < len(steps["small"])
    assert min(s.after for s in steps["large"]) < min(s.after for s in steps["small"])


def test_a_resumed_context_shows_the_same_stubs_and_the_same_hand_off(saver):
    state: dict = {}
    ctx = Context("system", budget=3_000, state=state, save_output=saver, summarise=lambda request: "## Goal\nnote")
    ctx.add(TASK)
    for i in range(1, 80):
        add_turn(ctx, i, rows(i, 10))
        ctx.request("ck")
        if (state.get("masked") and i < 30) or i == 79:  # masked only; then masked and folded
            saved = json.loads(json.dumps(state))  # what state.json holds
            again = Context("system", budget=3_000, state=saved, save_output=saver)
            again.extend(ctx.messages)
            assert again.request("ck") == ctx.request("ck")
    assert state["summary"]["turns"] > 50


def test_the_summary_fallback_folds_whole_turns_and_carries_the_users_words(saver):
    requests = []

    def summarise(request):
        requests.append(request)
        return "## Goal\ncount rows\n## Progress\n- the total so far is 4711\n## Next step\nread f41.txt"

    ctx = Context("system", budget=3_000, save_output=saver, summarise=summarise)
    ctx.add(TASK)
    for i in range(1, 200):
        add_turn(ctx, i, rows(i, 12), user="The user adds: never delete anything" if i == 3 else None)
        messages = ctx.request("ck")
        assert size(messages) <= 3_000 and paired(messages)
        assert messages[1] == TASK
    assert requests, "masking alone cannot hold 200 turns of stubs in 3,000 tokens"
    hand_off = messages[2]["content"]
    assert hand_off.startswith("[Hand-off note") and "the total so far is 4711" in hand_off
    assert "- The user adds: never delete anything" in hand_off
    assert messages[3]["role"] == "assistant"  # the kept turns start on a whole turn
    for request in requests:  # the side request itself is within the budget, and has no tools
        assert size(request) + compaction.SUMMARY_TOKENS <= 3_000


def test_the_summary_request_is_pre_trimmed_whatever_it_folds():
    huge = [{"role": "tool", "tool_call_id": f"c{i}", "content": "data " * 20_000} for i in range(10)]
    request = compaction.summary_request("task", "an earlier note", huge, 8_000)
    assert size(request) + compaction.SUMMARY_TOKENS <= 8_000
    assert "an earlier note" in request[1]["content"] and "[… cut]" in request[1]["content"]


def test_without_a_summary_the_hand_off_lists_what_the_folded_calls_did(saver):
    ctx = Context("system", budget=3_000, save_output=saver, summarise=lambda request: "")
    ctx.add(TASK)
    for i in range(1, 200):
        add_turn(ctx, i, rows(i, 12))
        messages = ctx.request()
        assert size(messages) <= 3_000 and paired(messages)
    assert "(No summary: the model gave no summary" in messages[2]["content"]
    assert "[lines 1-12 of 900; continue]" in messages[2]["content"]


def test_old_long_arguments_are_shortened_and_stay_json(saver):
    ctx = Context("system", budget=3_000, save_output=saver)
    ctx.add(TASK)
    for i in range(1, 12):
        ctx.add({"role": "assistant", "content": "", "tool_calls": [{"id": f"w{i}", "type": "function", "function": {
            "name": "file_write", "arguments": json.dumps({"path": f"out{i}.txt", "content": "text " * 400})}}]})
        ctx.add({"role": "tool", "tool_call_id": f"w{i}", "content": f"Wrote out{i}.txt (2,000 chars)."})
    messages = ctx.request()
    first = json.loads(messages[2]["tool_calls"][0]["function"]["arguments"])
    assert first["path"] == "out1.txt" and first["content"].endswith("[masked: 2,000 chars]")
    assert json.loads(messages[-2]["tool_calls"][0]["function"]["arguments"])["content"] == "text " * 400


def test_the_results_budget_follows_the_room_left_within_floor_and_ceiling(saver):
    ctx = Context("system", budget=32_000, save_output=saver)
    ctx.add(TASK)
    assert ctx.results_budget() == history.RESULTS_CEILING
    small = Context("system", budget=6_000, save_output=saver)
    small.add(TASK)
    roomy = small.results_budget()
    for i in range(1, 4):
        add_turn(small, i, rows(i, 100))
    assert history.RESULTS_FLOOR == small.results_budget() < roomy


def test_the_window_caps_the_budget_and_an_overflow_teaches_the_scale(saver):
    ctx = Context("system", budget=32_000, window=8_192, save_output=saver)
    assert ctx.budget == history.window_cap(8_192) < 8_192
    ctx.add(TASK)
    for i in range(1, 12):
        add_turn(ctx, i, rows(i, 30))
    ctx.request()
    estimate = ctx.last_estimate
    step = ctx.overflowed(window=None, sent=estimate * 2)  # the server counts twice what we estimated
    assert ctx.scale == 2.0 and step.after <= ctx.budget
    assert tokens.request_tokens(ctx.request()) * 2 <= ctx.budget


def test_a_refusal_that_says_nothing_lowers_the_budget(saver):
    ctx = Context("system", budget=32_000, save_output=saver)
    ctx.add(TASK)
    for i in range(1, 40):
        add_turn(ctx, i, rows(i, 30))
    sent = ctx.tokens()
    ctx.overflowed(window=None, sent=None)
    assert ctx.budget == int(sent * 0.7) and ctx.tokens() <= ctx.budget


def test_a_state_that_does_not_fit_the_history_is_ignored(saver):
    ctx = Context("system", budget=3_000, state={"masked": {"1": {"role": "tool", "tool_call_id": "other",
                                                                  "content": "stale"}}}, save_output=saver)
    ctx.add(TASK)
    add_turn(ctx, 1, "fresh")
    assert ctx.request()[2]["content"] == "step 1" and ctx.request()[3]["content"] == "fresh"


def test_stubs_survive_a_copy_of_the_state(saver):
    """The state is plain JSON: what is masked is decided once and never recomputed."""
    state: dict = {}
    ctx = Context("system", budget=3_000, state=state, save_output=saver)
    ctx.add(TASK)
    for i in range(1, 20):
        add_turn(ctx, i, rows(i, 20))
    ctx.request()
    frozen = copy.deepcopy(state["masked"])
    add_turn(ctx, 20, rows(20, 20))
    ctx.request()
    assert all(state["masked"][k] == v for k, v in frozen.items())
