"""The one dispatch path: repair, validation, permissions, concurrency, budget — with real tool specs."""

from __future__ import annotations

import json
import threading

import pytest

from ga.errors import ToolError
from ga.protocols import ToolCall
from ga.tooling import tokens
from ga.tooling.budget import MARKER_TOKENS, RESULTS_TOKENS, SHOWN_RESULTS
from ga.tooling.dispatch import Dispatcher
from ga.tooling.permissions import SideEffect
from ga.tooling.spec import ToolResult, ToolSpec
from tools import ask_user, update_working_checkpoint

SCHEMA = {
    "type": "object",
    "properties": {"n": {"type": "integer"}, "flag": {"type": "boolean"}, "items": {"type": "array"},
                   "text": {"type": "string"}},
    "required": ["n"],
    "additionalProperties": False,
}


def echo(args: dict, ctx) -> ToolResult:
    return ToolResult(content=json.dumps(args, sort_keys=True))


def spec(name: str = "echo", side_effect: SideEffect = SideEffect.READ_ONLY, run=echo) -> ToolSpec:
    return ToolSpec(name=name, description="test tool", parameters=SCHEMA, side_effect=side_effect, run=run)


def call(name: str, arguments, i: int = 0) -> ToolCall:
    return ToolCall(id=f"c{i}", name=name, arguments=arguments)


def one(dispatcher: Dispatcher, ctx, name: str, arguments) -> ToolResult:
    return dispatcher.dispatch([call(name, arguments)], ctx)[0]


def test_unknown_tool_lists_the_available_ones(make_ctx):
    result = one(Dispatcher([spec()]), make_ctx(), "file_raed", "{}")
    assert result.is_error and "Unknown tool 'file_raed'" in result.content and "echo" in result.content


def test_a_huge_unknown_tool_name_is_echoed_bounded(make_ctx):
    result = one(Dispatcher([spec()]), make_ctx(), "x" * 100_000, "{}")
    assert result.is_error and len(result.content) < 300


def test_arguments_that_are_not_json(make_ctx):
    result = one(Dispatcher([spec()]), make_ctx(), "echo", '{"n": 1,')
    assert result.is_error and "not valid JSON" in result.content and '{"n": 1,' in result.content


def test_arguments_given_as_a_json_string_are_decoded_and_the_model_told(make_ctx):
    result = one(Dispatcher([spec()]), make_ctx(), "echo", json.dumps(json.dumps({"n": 3})))
    note, _, rest = result.content.partition("\n")
    assert not result.is_error and json.loads(rest) == {"n": 3}
    assert note == "[Your arguments came as a JSON string holding the JSON object; they were decoded once more.]"
    assert json.loads(one(Dispatcher([spec()]), make_ctx(), "echo", json.dumps({"n": 3})).content) == {"n": 3}


def test_arguments_nested_too_deep_are_refused_not_a_crash(make_ctx):
    deep: list = [1]
    for _ in range(40):
        deep = [deep]
    for raw in ('{"n": ' + "[" * 100_000 + "]" * 100_000 + "}", "[" * 100_000,
                json.dumps(json.dumps({"n": 1, "deep": deep})), {"n": 1, "deep": deep}):
        result = one(Dispatcher([spec()]), make_ctx(), "echo", raw)
        assert result.is_error and result.details["stage"] == "arguments" and "nested more than 32" in result.content


def test_string_numbers_booleans_and_lists_are_repaired(make_ctx):
    raw = json.dumps({"n": "30", "flag": "true", "items": "[1, 2]"})
    result = one(Dispatcher([spec()]), make_ctx(), "echo", raw)
    assert json.loads(result.content) == {"n": 30, "flag": True, "items": [1, 2]}


def test_arguments_as_an_object_not_a_string(make_ctx):
    assert json.loads(one(Dispatcher([spec()]), make_ctx(), "echo", {"n": 2}).content) == {"n": 2}


@pytest.mark.parametrize("value", ["", None, "thirty", 1.5])
def test_empty_null_or_wrong_numbers_are_rejected_not_coerced(make_ctx, value):
    result = one(Dispatcher([spec()]), make_ctx(), "echo", json.dumps({"n": value}))
    assert result.is_error and "Invalid arguments for echo" in result.content and "n" in result.content
    assert "You sent" in result.content


def test_missing_and_extra_parameters_are_named(make_ctx):
    result = one(Dispatcher([spec()]), make_ctx(), "echo", json.dumps({"flag": True, "colour": "red"}))
    assert "missing required parameter 'n'" in result.content
    assert "unexpected parameter 'colour'" in result.content and "allowed: n, flag, items, text" in result.content


def test_echo_of_bad_arguments_is_bounded(make_ctx):
    result = one(Dispatcher([spec()]), make_ctx(), "echo", json.dumps({"n": "x", "text": "y" * 50_000}))
    assert result.is_error and len(result.content) < 1_000


def test_read_only_calls_run_together_and_results_keep_the_order_asked(make_ctx):
    barrier = threading.Barrier(4, timeout=10)

    def meet(args, ctx):
        barrier.wait()  # times out (an error result) unless all four run at the same time
        return ToolResult(content=str(args["n"]))

    calls = [call("meet", json.dumps({"n": i}), i) for i in range(4)]
    results = Dispatcher([spec("meet", run=meet)]).dispatch(calls, make_ctx())
    assert [r.content for r in results] == ["0", "1", "2", "3"]


def test_at_most_ten_calls_run_at_once_and_writes_run_alone(make_ctx):
    active, peak, log = [0], [0], []
    lock = threading.Lock()

    def track(args, ctx):
        with lock:
            active[0] += 1
            peak[0] = max(peak[0], active[0])
            log.append(("start", args["n"], active[0]))
        threading.Event().wait(0.05)
        with lock:
            active[0] -= 1
        return ToolResult(content=str(args["n"]))

    calls = [call("read", json.dumps({"n": i}), i) for i in range(12)]
    calls.insert(5, call("write", json.dumps({"n": 99}), 99))
    specs = [spec("read", run=track), spec("write", SideEffect.WRITE, run=track)]
    results = Dispatcher(specs).dispatch(calls, make_ctx())
    assert [r.content for r in results] == [c.content for c in results]  # in order
    assert [r.content for r in results][5] == "99"
    assert peak[0] <= 10
    assert next(a for kind, n, a in log if n == 99) == 1  # the write ran alone


def test_a_crashing_tool_becomes_an_error_result(make_ctx):
    def boom(args, ctx):
        raise RuntimeError("disk on fire")

    result = one(Dispatcher([spec(run=boom)]), make_ctx(), "echo", '{"n": 1}')
    assert result.is_error and "RuntimeError: disk on fire" in result.content


def test_tool_errors_reach_the_model_verbatim(make_ctx):
    def refuse(args, ctx):
        raise ToolError("No such thing. Try another.")

    assert one(Dispatcher([spec(run=refuse)]), make_ctx(), "echo", '{"n": 1}').content == "No such thing. Try another."


def test_plan_mode_refuses_writes_but_not_reads_or_the_checkpoint(make_ctx):
    ctx = make_ctx(mode="plan")
    d = Dispatcher([spec("w", SideEffect.WRITE), spec("r"), update_working_checkpoint.SPEC])
    refused = one(d, ctx, "w", '{"n": 1}')
    assert refused.is_error and "plan mode" in refused.content and "rule: plan-mode-read-only" in refused.content
    assert not one(d, ctx, "r", '{"n": 1}').is_error
    assert not one(d, ctx, "update_working_checkpoint", '{"key_info": "goal: x"}').is_error


def test_confirm_mode_asks_and_honours_reject_and_edit(make_ctx):
    answers = [("reject", ""), ("reject", "use the staging file"), ("edit", '{"n": 7}'), ("approve", ""),
               ("approve", "")]
    ctx = make_ctx(mode="confirm", interactive=True, answers=answers)
    d = Dispatcher([spec("w", SideEffect.WRITE)])
    assert "rejected" in one(d, ctx, "w", '{"n": 1}').content
    with_reason = one(d, ctx, "w", '{"n": 1}').content
    assert "rejected" in with_reason and "Their reason: use the staging file" in with_reason
    edited = one(d, ctx, "w", '{"n": 1}')
    assert "The user edited this call" in edited.content and json.loads(edited.content.split("\n")[1]) == {"n": 7}
    assert ctx.ui.asked[3][2] == "n: 7"  # the edited version was shown again and approved
    assert json.loads(one(d, ctx, "w", '{"n": 2}').content) == {"n": 2}
    assert one(d, make_ctx(mode="confirm"), "w", '{"n": 1}').content.startswith("Refused w: the run is in confirm")


def test_confirm_mode_approves_a_tool_or_every_change_for_the_rest_of_the_run(make_ctx):
    ctx = make_ctx(mode="confirm", interactive=True, answers=[("approve", "tool"), ("approve", ""),
                                                               ("approve", "run")])
    d = Dispatcher([spec("w", SideEffect.WRITE), spec("x", SideEffect.SYSTEM_CHANGE), spec("y", SideEffect.WRITE)])
    for name in ("w", "w", "x", "x", "y", "w"):
        assert not one(d, ctx, name, '{"n": 1}').is_error
    assert [a[1] for a in ctx.ui.asked] == ["w (write)", "x (system_change)", "x (system_change)"]
    assert ctx.state["approved"] == {"all": True, "tools": ["w"]}  # saved with the run: a resume keeps it
    plain = make_ctx(mode="confirm", interactive=True, answers=[("approve", ""), ("approve", "")])
    one(d, plain, "w", '{"n": 1}'), one(d, plain, "w", '{"n": 1}')
    assert len(plain.ui.asked) == 2 and "approved" not in plain.state


def test_an_edited_call_is_announced_again_with_what_runs(make_ctx):
    seen = []
    ctx = make_ctx(mode="confirm", interactive=True, answers=[("edit", '{"n": 7}'), ("approve", "")])
    ctx.ui.tool_start = lambda call, args: seen.append((call.id, call.arguments, args))
    result = one(Dispatcher([spec("w", SideEffect.WRITE)]), ctx, "w", '{"n": 1}')
    assert seen == [("c0", {"n": 7}, {"n": 7})] and result.details["edited"] == {"n": 7}


def test_an_edit_the_human_got_wrong_goes_back_to_the_human_not_to_the_model(make_ctx):
    ctx = make_ctx(mode="confirm", interactive=True,
                   answers=[("edit", '{"n": 7,'), ("edit", '{"n": "x"}'), ("edit", '{"n": 8}'), ("approve", "")])
    result = one(Dispatcher([spec("w", SideEffect.WRITE)]), ctx, "w", '{"n": 1}')
    assert not result.is_error and json.loads(result.content.split("\n")[1]) == {"n": 8}
    assert len(ctx.ui.notices) == 2 and all(n.startswith("That edit cannot be used") for n in ctx.ui.notices)
    assert "not valid JSON" in ctx.ui.notices[0]


def test_an_editable_argument_is_edited_as_text_and_shown_as_written(make_ctx):
    text_spec = ToolSpec(name="w", description="t", parameters=SCHEMA, side_effect=SideEffect.WRITE, run=echo,
                         editable="text")
    ctx = make_ctx(mode="confirm", interactive=True, answers=[("edit", 'print("hi")\n'), ("approve", "")])
    result = one(Dispatcher([text_spec]), ctx, "w", json.dumps({"n": 1, "text": "line 1\nline 2"}))
    assert json.loads(result.content.split("\n")[1]) == {"n": 1, "text": 'print("hi")\n'}
    assert ctx.ui.asked[0][2] == "n: 1\n\nline 1\nline 2"  # no JSON, no \n escapes
    assert ctx.ui.asked[1][2] == 'n: 1\n\nprint("hi")\n'


def test_output_over_budget_is_cut_and_saved_whole(make_ctx):
    big = "".join(f"line {i}\n" for i in range(100_000))
    result = one(Dispatcher([spec(run=lambda a, c: ToolResult(content=big))]), make_ctx(), "echo", '{"n": 1}')
    assert len(result.content) < 60_000 and "line 0\n" in result.content and "line 99999" in result.content
    with open(result.details["full_output"]) as f:
        assert f.read() == big


def sized(args: dict, ctx) -> ToolResult:
    """A result of args["n"] lines, each naming its call."""
    return ToolResult(content="".join(f"{ctx.call_id} line {i}: some output text\n" for i in range(args["n"])))


def test_fifty_parallel_results_share_one_results_budget(make_ctx):
    ctx = make_ctx()
    calls = [call("echo", json.dumps({"n": 1_000}), i) for i in range(50)]  # 50 results of about 40k chars each
    results = Dispatcher([spec(run=sized)]).dispatch(calls, ctx)
    total = sum(tokens.estimate(r.content) for r in results)
    assert total <= RESULTS_TOKENS and sum(len(r.content) for r in results) < 60_000
    for i, r in enumerate(results):  # each cut keeps whole lines and says where the rest is
        assert r.content.startswith(f"c{i} line 0: some output text\n") and "cut to fit this turn's output" in r.content
        with open(r.details["full_output"]) as f:
            assert f.read() == sized({"n": 1_000}, ctx.__class__(**{**ctx.__dict__, "call_id": f"c{i}"})).content


def test_the_largest_results_are_cut_first(make_ctx):
    sizes = [5, 3_000, 10, 800, 40]
    calls = [call("echo", json.dumps({"n": n}), i) for i, n in enumerate(sizes)]
    results = Dispatcher([spec(run=sized)]).dispatch(calls, make_ctx(), budget=6_000)
    whole = [n for n, r in zip(sizes, results, strict=True) if "cut to fit" not in r.content]
    assert whole == [5, 10, 40]  # the small ones untouched, the two largest cut to the same level
    cut = [tokens.estimate(r.content) for r in results if "cut to fit" in r.content]
    assert abs(cut[0] - cut[1]) < 30 and sum(tokens.estimate(r.content) for r in results) <= 6_000


def test_sequential_calls_share_the_budget_and_a_cut_names_the_line_to_continue(make_ctx):
    ctx = make_ctx()
    calls = [call("w", json.dumps({"n": 2_000}), i) for i in range(3)]  # writes run one at a time
    results = Dispatcher([spec("w", SideEffect.WRITE, run=sized)]).dispatch(calls, ctx, budget=3_000)
    assert sum(tokens.estimate(r.content) for r in results) <= 3_000
    marker = next(line for line in results[0].content.splitlines() if "cut to fit" in line)
    start = int(marker.rsplit("start=", 1)[1].rstrip("]"))
    shown_lines = results[0].content.split("[…")[0].count("\n")
    assert start == shown_lines + 1
    with open(results[0].details["full_output"]) as f:
        assert f.read().splitlines()[start - 1] == f"c0 line {start - 1}: some output text"


def test_a_cut_result_is_no_longer_a_result_shown_in_full(make_ctx):
    ctx = make_ctx()
    ctx.state[SHOWN_RESULTS] = {"c0": "key-a", "c1": "key-b"}
    calls = [call("echo", json.dumps({"n": 5_000}), 0), call("echo", json.dumps({"n": 3}), 1)]
    Dispatcher([spec(run=sized)]).dispatch(calls, ctx, budget=2_000)
    assert ctx.state[SHOWN_RESULTS] == {"c1": "key-b"}


def test_a_tiny_budget_still_says_where_everything_is(make_ctx):
    results = Dispatcher([spec(run=sized)]).dispatch([call("echo", json.dumps({"n": 500}))], make_ctx(), budget=50)
    assert "cut to fit" in results[0].content and tokens.estimate(results[0].content) <= 50 + MARKER_TOKENS


def test_checkpoint_too_long_states_size_and_limit(make_ctx):
    ctx = make_ctx()
    d = Dispatcher([update_working_checkpoint.SPEC])
    result = one(d, ctx, "update_working_checkpoint", json.dumps({"key_info": "word " * 400}))
    assert result.is_error and "about 400 tokens" in result.content and "limit is 200" in result.content
    assert "checkpoint" not in ctx.state
    assert not one(d, ctx, "update_working_checkpoint", '{"key_info": "goal: ship"}').is_error
    assert ctx.state["checkpoint"] == "goal: ship"


def test_ask_user_on_a_terminal_maps_a_number_to_the_candidate(make_ctx):
    ctx = make_ctx(interactive=True, answers=["2"])
    arguments = json.dumps({"question": "Which?", "candidates": ["a", "b"]})
    result = one(Dispatcher([ask_user.SPEC]), ctx, "ask_user", arguments)
    assert result.content == "The user answered: b"
    assert ctx.ui.asked == [("ask", "Which?", ["a", "b"])]


def test_ask_user_with_more_candidates_than_a_menu_holds_is_refused_before_anyone_is_asked(make_ctx):
    ctx = make_ctx(interactive=True, answers=["1"])
    many = [f"us-west-{i}" for i in range(1, ask_user.CANDIDATES + 2)]
    result = one(Dispatcher([ask_user.SPEC]), ctx, "ask_user", json.dumps({"question": "Region?", "candidates": many}))
    assert result.is_error and "candidates: 9 items, at most 8 allowed" in result.content, result.content
    assert ctx.ui.asked == []
    fits = json.dumps({"question": "Region?", "candidates": many[:ask_user.CANDIDATES]})
    assert one(Dispatcher([ask_user.SPEC]), ctx, "ask_user", fits).content == "The user answered: us-west-1"


def test_with_small_model_settings_an_argument_copied_from_the_schema_is_dropped_and_said(make_ctx, workspace):
    from tools import file_read

    (workspace / "customers.csv").write_text("email,name\na@x.org,Ann\n")
    # what a 1.5B model sent, word for word, from the description it was shown
    echo = ("jump to the first case-insensitive match from start (shown with the 3 lines above it). Lines over 2000 "
            "chars are cut. The footer gives total lines and the next start.")
    capable = one(Dispatcher([file_read.SPEC]), make_ctx(), "file_read",
                  json.dumps({"path": "customers.csv", "keyword": echo}))
    assert "Ignored" not in capable.content and "no line" in capable.content  # by default: searched as sent
    d = Dispatcher([file_read.SPEC], drop_echoed=True)  # the small-model settings
    result = one(d, make_ctx(), "file_read", json.dumps({"path": "customers.csv", "keyword": echo}))
    assert not result.is_error and result.content.startswith("[Ignored keyword: the value sent was the parameter's")
    assert "2|a@x.org,Ann" in result.content
    for keyword in ("case-insensitive match from start", "the footer of the report gives totals"):
        kept = one(d, make_ctx(), "file_read", json.dumps({"path": "customers.csv", "keyword": keyword}))
        assert "Ignored" not in kept.content and "no line" in kept.content  # a real keyword, searched for


def test_a_crashing_tool_is_an_error_the_model_reads_and_its_trace_stays_off_the_terminal(make_ctx, caplog):
    def crash(args: dict, ctx) -> ToolResult:
        raise RuntimeError("display gone")

    with caplog.at_level("WARNING"):
        result = one(Dispatcher([spec(run=crash)]), make_ctx(), "echo", '{"n": 1}')
    assert result.is_error and result.content.startswith("echo failed unexpectedly: RuntimeError: display gone")
    assert "Traceback" in result.details["traceback"] and 'raise RuntimeError("display gone")' in \
        result.details["traceback"]  # kept in the trajectory
    assert not caplog.records  # nothing at the default level: no traceback between the progress lines


def test_a_floor_never_refuses_a_small_count_it_runs_as_sent_with_a_note(make_ctx, workspace):
    from tools import file_read

    (workspace / "long.md").write_text("".join(f"line {n}\n" for n in range(1, 301)))
    sent = json.dumps({"path": "long.md", "start": 1, "count": 3})
    as_sent = one(Dispatcher([file_read.SPEC]), make_ctx(), "file_read", sent)
    assert "3|line 3" in as_sent.content and "4|line 4" not in as_sent.content and not as_sent.is_error
    floored = Dispatcher([file_read.SPEC], floors={"file_read": {"count": 100}})
    noted = one(floored, make_ctx(), "file_read", sent)
    assert not noted.is_error and "count=3" in noted.content and "count=100 or more" in noted.content
    assert "3|line 3" in noted.content and "4|line 4" not in noted.content  # the call as sent, never another
    enough = one(floored, make_ctx(), "file_read", json.dumps({"path": "long.md", "count": 150}))
    assert not enough.is_error and "150|line 150" in enough.content and "151|line 151" not in enough.content
