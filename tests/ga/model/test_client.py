"""OpenAIModel against a real HTTP server (ScriptedServer) through the real openai client."""

from __future__ import annotations

import hashlib
import json
import time
from types import SimpleNamespace as NS

import pytest
from openai.types.chat import ChatCompletionChunk

from ga.config import load_settings
from ga.errors import ContextOverflow, LimitReached, ModelError, ServerUnreachable
from ga.model.client import OpenAIModel
from ga.model.settings import ModelSettings, settings_for
from ga.model.stream import IncompleteReply, ReplyBuilder, repeated_calls, repeated_tail
from ga.tooling import tokens
from tests.scripted import ScriptedServer, tool_call

MESSAGES = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "read a.txt"}]
TOOLS = [
    {"type": "function", "function": {"name": n, "parameters": {"type": "object"}}} for n in ("file_read", "file_write")
]


@pytest.fixture
def serve(tmp_path):
    """serve(steps, **settings) -> (server, model, retry notices); the script must be used up exactly."""
    servers = []

    def start(steps, max_reply_bytes=None, model_settings=None, **overrides):
        server = ScriptedServer(steps).start()
        servers.append(server)
        settings = load_settings(
            env={},
            base_url=overrides.pop("base_url", server.url),
            api_key="test",
            model="m",
            home=tmp_path,
            workdir=tmp_path,
            **overrides,
        )
        notices: list[str] = []
        extra = {"max_reply_bytes": max_reply_bytes} if max_reply_bytes else {}
        extra["model_settings"] = model_settings
        return server, OpenAIModel(settings, on_retry=notices.append, **extra), notices

    yield start
    for server in servers:
        server.close()


@pytest.mark.parametrize("stream", [True, False])
def test_text_reply_with_usage_from_server(serve, stream):
    server, model, _ = serve(
        [{"content": "Hello there, all done.", "usage": {"prompt_tokens": 42, "completion_tokens": 7}}], stream=stream
    )
    pieces: list[str] = []
    reply = model.complete(MESSAGES, [], on_text=pieces.append)
    assert reply.content == "Hello there, all done."
    assert "".join(pieces) == reply.content
    assert len(pieces) > 1 if stream else len(pieces) == 1
    assert (reply.finish_reason, reply.tool_calls) == ("stop", [])
    assert (reply.usage.requests, reply.usage.prompt_tokens, reply.usage.completion_tokens) == (1, 42, 7)
    assert not reply.estimated_usage
    sent = server.requests[0]
    assert sent["messages"] == MESSAGES and sent["model"] == "m"
    assert "tools" not in sent and "parallel_tool_calls" not in sent
    assert sent.get("stream_options") == ({"include_usage": True} if stream else None)
    server.assert_complete()


@pytest.mark.parametrize("stream", [True, False])
@pytest.mark.parametrize("as_object", [False, True])
def test_parallel_tool_calls(serve, stream, as_object):
    calls = [tool_call("file_read", path="a.txt", start=3), tool_call("file_write", path="b.txt", content="x" * 40)]
    server, model, _ = serve([{"content": "Reading.", "tool_calls": calls, "args_as_object": as_object}], stream=stream)
    reply = model.complete(MESSAGES, TOOLS)
    assert reply.finish_reason == "tool_calls"
    assert [(c.id, c.name) for c in reply.tool_calls] == [("call_1_0", "file_read"), ("call_1_1", "file_write")]
    assert all(isinstance(c.arguments, str) for c in reply.tool_calls)
    assert [json.loads(c.arguments) for c in reply.tool_calls] == [c["arguments"] for c in calls]
    assert server.requests[0]["tools"] == TOOLS and server.requests[0]["parallel_tool_calls"] is True
    assert "tool_choice" not in server.requests[0]


@pytest.mark.parametrize("stream", [True, False])
def test_calls_sharing_one_id_stay_separate_calls(serve, stream):
    calls = [{**tool_call("file_read", path=name), "id": "call_0"} for name in ("a.txt", "b.txt")]
    _, model, _ = serve([{"tool_calls": calls}], stream=stream)
    reply = model.complete(MESSAGES, TOOLS)
    assert [(c.name, json.loads(c.arguments)) for c in reply.tool_calls] == [
        ("file_read", {"path": "a.txt"}), ("file_read", {"path": "b.txt"})]


def test_server_errors_then_success(serve):
    server, model, notices = serve([{"fault": "500"}, {"fault": "503"}, {"content": "ok"}])
    reply = model.complete(MESSAGES, [])
    assert reply.content == "ok" and reply.usage.requests == 1
    assert len(server.requests) == 3 and model.retries == 2
    assert notices == ["500 server error; retrying (retry 1 of 6)", "503 server error; retrying (retry 2 of 6)"]
    server.assert_complete()


def test_rate_limit_honours_retry_after(serve):
    server, model, notices = serve([{"fault": "429", "retry_after": 1}, {"content": "ok"}])
    started = time.monotonic()
    assert model.complete(MESSAGES, []).content == "ok"
    assert time.monotonic() - started >= 0.95  # the server's 1 s, not retry_base's 0.01 s
    assert notices == ["429 rate limited; retrying (retry 1 of 6)"]
    server.assert_complete()


@pytest.mark.parametrize("stream", [True, False])
def test_dropped_connection_then_success(serve, stream):
    server, model, notices = serve([{"fault": "drop"}, {"content": "ok"}], stream=stream)
    assert model.complete(MESSAGES, []).content == "ok"
    # no answer came yet: a server never heard from gets three tries, and the count says so
    assert len(server.requests) == 2 and notices == ["the connection failed; retrying (retry 1 of 2)"]
    server.assert_complete()


def test_stream_cut_mid_arguments_is_retried_whole(serve):
    half = {
        "content": "Let me look.",
        "tool_calls": [tool_call("file_write", path="a.txt", content="y" * 60)],
        "fault": "cut",
    }
    full = {"content": "Writing now.", "tool_calls": [tool_call("file_write", path="b.txt", content="z")]}
    server, model, notices = serve([half, full])
    pieces: list[str] = []
    reply = model.complete(MESSAGES, TOOLS, on_text=pieces.append)
    assert reply.content == "Writing now."
    assert [(c.name, json.loads(c.arguments)) for c in reply.tool_calls] == [
        ("file_write", {"path": "b.txt", "content": "z"})
    ]
    assert len(server.requests) == 2 and len(notices) == 1
    assert "".join(pieces).endswith("Writing now.")  # the cut text reached the terminal before the retry notice
    server.assert_complete()


@pytest.mark.parametrize("stream", [True, False])
def test_length_finish_reason_passed_through_with_its_calls(serve, stream):
    step = {"tool_calls": [tool_call("file_write", path="a.txt", content="long")], "finish_reason": "length"}
    server, model, _ = serve([step], stream=stream)
    reply = model.complete(MESSAGES, TOOLS)
    assert reply.finish_reason == "length"
    assert [c.name for c in reply.tool_calls] == ["file_write"]
    server.assert_complete()


SMALL = settings_for("local", local=True)


@pytest.mark.parametrize("stream", [True, False])
def test_with_small_model_settings_a_reply_that_repeats_itself_is_stopped_and_only_what_repeats_is_dropped(
        serve, stream):
    loop = "import unittest\nimport sys\nsys.path.append('/work/trials/ga/fix-calc-bug')\n" * 400  # a 1.5B model's
    # long, but no block repeats, not even with only its numbers changing
    rows = "".join(f"{i},{hashlib.sha1(str(i).encode()).hexdigest()[:10]},{i * 7 % 13}.50\n" for i in range(2000))
    clicks = "".join(f"await $ga({i}).click(); " for i in range(13, 600))  # a 1.5B model: 3,476 tokens, 574 s
    steps = [{"tool_calls": [tool_call("file_write", path="test_stats.py", content=loop)]},
             {"content": "Sorry. " + "I will fix the import. " * 200}, {"content": rows},
             {"tool_calls": [tool_call("web_execute_js", script=clicks)]}]
    server, model, _ = serve(steps, stream=stream, model_settings=SMALL)
    calls = model.complete(MESSAGES, TOOLS)
    assert calls.finish_reason == "repetition" and [c.name for c in calls.tool_calls] == ["file_write"]
    assert calls.estimated_usage == stream  # streamed: closed before its end (the server's usage comes last)
    text = model.complete(MESSAGES, TOOLS)
    assert text.finish_reason == "repetition" and text.content.count("I will fix the import.") == 1
    assert model.complete(MESSAGES, TOOLS).finish_reason == "stop"
    counting = model.complete(MESSAGES, TOOLS)
    assert counting.finish_reason == "repetition" and counting.estimated_usage == stream
    server.assert_complete()


@pytest.mark.parametrize("stream", [True, False])
def test_by_default_only_a_long_exact_repeat_is_a_loop_and_data_goes_through(serve, stream):
    loop = "import unittest\nimport sys\nsys.path.append('/work/trials/ga/fix-calc-bug')\n" * 400  # 28,000 chars
    records = "".join(f'{{"id": {i}, "name": "user{i}", "score": {i * 7 % 100}}},\n' for i in range(60))
    appends = [tool_call("file_write", path="log.txt", content=f"entry {i}\n", mode="append") for i in range(20)]
    steps = [{"tool_calls": [tool_call("file_write", path="test_stats.py", content=loop)]},
             {"content": "Sorry. " + "I will fix the import. " * 200},
             {"tool_calls": [tool_call("file_write", path="users.jsonl", content=records)]},
             {"tool_calls": appends}]
    server, model, _ = serve(steps, stream=stream)
    assert model.complete(MESSAGES, TOOLS).finish_reason == "repetition"
    assert model.complete(MESSAGES, TOOLS).finish_reason == "stop"  # 4,600 chars of a phrase: said, not cut
    data = model.complete(MESSAGES, TOOLS)
    assert data.finish_reason == "tool_calls" and json.loads(data.tool_calls[0].arguments)["content"] == records
    assert len(model.complete(MESSAGES, TOOLS).tool_calls) == 20
    server.assert_complete()


@pytest.mark.parametrize("stream", [True, False])
def test_with_small_model_settings_a_reply_making_the_same_calls_over_and_over_is_stopped(serve, stream):
    path = "/work/trials/ga/rename-function/1/workspace/sop/get_user/SKILL.md"
    pair = [tool_call("file_patch", path=path, old_content="get_user", new_content="fetch_user"),
            tool_call("file_write", path=path, content="fetch_user", mode="overwrite")]
    distinct = [tool_call("file_read", path=f"logs/day-{i}.log") for i in range(20)]  # many calls, none repeated
    server, model, _ = serve([{"tool_calls": pair * 35}, {"tool_calls": distinct}], stream=stream,
                             model_settings=SMALL)
    looped = model.complete(MESSAGES, TOOLS)  # a 1.5B model's reply: the pair 35 times, 3,269 tokens
    assert looped.finish_reason == "repetition"
    assert model.complete(MESSAGES, TOOLS).finish_reason in ("tool_calls", "stop")
    assert repeated_calls([("a", "1"), ("b", "2")] * 4, 4) == 4 and repeated_calls([("a", "1")] * 3, 4) == 0
    assert repeated_calls([("a", "1"), ("a", "2")] * 3, 4) == 0
    server.assert_complete()


def test_calls_streamed_one_after_another_are_stopped_at_the_fourth_copy():
    """llama.cpp streams a reply's calls one after another: the builder says stop once a run of calls has come
    four times (small-model settings), so the client closes the stream there instead of at the 70th call."""
    builder = ReplyBuilder(loops=SMALL)
    args = json.dumps({"path": "sop/get_user/SKILL.md", "old_content": "get_user", "new_content": "fetch_user"})
    for i in range(70):
        head = {"index": i, "id": f"c{i}", "type": "function", "function": {"name": "file_patch", "arguments": ""}}
        for delta in (head, {"index": i, "function": {"arguments": args}}):
            builder.add_chunk(ChatCompletionChunk.model_validate({
                "id": "x", "object": "chat.completion.chunk", "created": 0, "model": "m",
                "choices": [{"index": 0, "delta": {"tool_calls": [delta]}, "finish_reason": None}]}))
        if builder.looped:
            break
    assert builder.looped >= 4 and i < 12
    assert builder.build(MESSAGES, TOOLS).finish_reason == "repetition"


def test_the_repeat_detector_needs_enough_copies_of_one_block():
    block = "x = compute(a, b)  # again\n"
    small, default = SMALL, ModelSettings()
    assert repeated_tail("start\n" + block * 60, small.loop_chars, small.loop_repeats) == (len(block), 60)
    assert repeated_tail(block * 7, small.loop_chars, small.loop_repeats) == (0, 0)  # under 8 copies
    assert repeated_tail("-" * 1199, 1200, 8) == (0, 0) and repeated_tail("-" * 1200, 1200, 8)[1] >= 8
    assert repeated_tail(block * 60, default.loop_chars, default.loop_repeats) == (0, 0)  # 1,620 chars: no loop
    assert repeated_tail(block * 600, default.loop_chars, default.loop_repeats)[1] == 600


@pytest.mark.parametrize("stream", [True, False])
def test_usage_estimated_when_server_reports_none(serve, stream):
    server, model, _ = serve([{"content": "Some answer text.", "usage": False}], stream=stream)
    reply = model.complete(MESSAGES, TOOLS)
    assert reply.estimated_usage and reply.usage.requests == 1
    assert reply.usage.prompt_tokens > 10 and 0 < reply.usage.completion_tokens < 10
    server.assert_complete()


def test_rejected_stream_options_falls_back_and_stays_off(serve):
    server, model, notices = serve([{"fault": "reject_stream_options", "content": "one"}, {"content": "two"}])
    assert model.complete(MESSAGES, []).content == "one"
    assert model.complete(MESSAGES, []).content == "two"
    assert ["stream_options" in r for r in server.requests] == [True, False, False]
    assert notices == [] and model.retries == 0
    server.assert_complete()


def test_a_server_that_ignores_stream_true_is_read_without_streaming(serve):
    server, model, notices = serve([{"fault": "no_stream", "content": "one"}, {"content": "two"}])
    assert model.complete(MESSAGES, []).content == "one"
    assert model.complete(MESSAGES, []).content == "two"
    assert [bool(r.get("stream")) for r in server.requests] == [True, False, False]
    assert notices == [] and model.retries == 0
    server.assert_complete()


def test_rejected_parallel_tool_calls_falls_back_and_stays_off(serve):
    server, model, _ = serve([{"fault": "reject_parallel_tool_calls", "content": "one"}, {"content": "two"}])
    assert model.complete(MESSAGES, TOOLS).content == "one"
    assert model.complete(MESSAGES, TOOLS).content == "two"
    assert ["parallel_tool_calls" in r for r in server.requests] == [True, False, False]
    assert all("stream_options" in r for r in server.requests)
    server.assert_complete()


def test_unauthorised_fails_at_once_with_what_to_check(serve):
    server, model, notices = serve([{"fault": "401"}])
    with pytest.raises(ModelError) as caught:
        model.complete(MESSAGES, [])
    message = str(caught.value)
    assert "HTTP 401" in message and "Incorrect API key provided" in message and "OPENAI_API_KEY" in message
    assert (caught.value.status, caught.value.exit_code) == ("failed", 1)
    assert len(server.requests) == 1 and notices == []


def test_not_found_names_model_and_base_url(serve):
    server, model, _ = serve([{"fault": "404"}])
    with pytest.raises(ModelError, match="HTTP 404") as caught:
        model.complete(MESSAGES, [])
    assert "GA_MODEL" in str(caught.value) and "'m'" in str(caught.value) and server.url in str(caught.value)
    assert len(server.requests) == 1


def test_retries_exhausted_say_how_many_attempts(serve):
    server, model, notices = serve([{"fault": "500"}] * 3, retries=2)
    with pytest.raises(ModelError, match=r"after 3 attempts: the server at \S+ answered 500 server error: scripted"):
        model.complete(MESSAGES, [])
    assert len(server.requests) == 3 and len(notices) == 2
    server.assert_complete()


def test_slow_server_times_out_and_is_retried(serve):
    server, model, notices = serve([{"content": "late", "delay": 3}, {"content": "ok"}], request_timeout=1)
    assert model.complete(MESSAGES, []).content == "ok"
    assert notices[0].startswith("no complete reply within 1 s")
    assert len(server.requests) == 2


def test_ctrl_c_is_not_retried(serve):
    server, model, notices = serve([{"content": "hello world"}, {"content": "unused"}])

    def interrupt(text: str) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        model.complete(MESSAGES, [], on_text=interrupt)
    assert len(server.requests) == 1 and notices == []


def _chunk(finish=None, usage=None, **delta):
    return NS(choices=[NS(index=0, delta=NS(**delta), finish_reason=finish)], usage=usage)


def _call(index=None, id=None, name=None, arguments=None):
    return NS(index=index, id=id, function=NS(name=name, arguments=arguments))


def test_deltas_without_index_or_id_join_the_latest_call():
    builder = ReplyBuilder()
    builder.add_chunk(_chunk(tool_calls=[_call(0, "a", "file_read", '{"pa')]))
    builder.add_chunk(_chunk(tool_calls=[_call(arguments='th": "x"}')]))
    # A server that numbers every call 0: a new id at a known index is a new call.
    builder.add_chunk(_chunk(tool_calls=[_call(0, "b", "file_read", {"path": "y"})]))
    builder.add_chunk(_chunk(finish="tool_calls"))
    reply = builder.build(MESSAGES, TOOLS)
    assert [(c.id, c.arguments) for c in reply.tool_calls] == [("a", '{"path": "x"}'), ("b", '{"path": "y"}')]


def test_only_a_small_models_reply_is_cut_once_begun_at_its_share_of_the_time_left():
    for settings, cut in ((ModelSettings(), False), (SMALL, True)):  # a capable model's reply takes what it takes
        builder = ReplyBuilder(loops=settings)
        assert not builder.past(time.monotonic() - 1)  # not begun: the prompt may take long
        builder.add_chunk(_chunk(content="a reply that "))
        assert builder.past(builder.asked + 3) is False and builder.past(None) is False
        assert builder.past(time.monotonic() - 1) is cut
    assert builder.build(MESSAGES, []).finish_reason == "length"  # told as a reply cut by its length


def test_stream_ending_without_finish_is_incomplete():
    builder = ReplyBuilder()
    builder.add_chunk(_chunk(content="half a rep"))
    with pytest.raises(IncompleteReply):
        builder.build(MESSAGES, [])


def test_estimate_tokens_handles_very_long_text():
    assert tokens.estimate("") == 0
    assert 50_000 < tokens.estimate("word " * 200_000) <= 250_000


@pytest.mark.parametrize("stream", [True, False])
@pytest.mark.parametrize("fault", ["truncated_json", "bad_sse", "no_choices"])
def test_a_broken_200_reply_is_retried_like_a_failure(serve, stream, fault):
    server, model, notices = serve([{"fault": fault, "content": "lost"}, {"content": "ok"}], stream=stream)
    assert model.complete(MESSAGES, []).content == "ok"
    assert len(notices) == 1 and notices[0].startswith("broken reply (")
    assert ("no choices" in notices[0]) == (fault == "no_choices")
    server.assert_complete()


@pytest.mark.parametrize("stream", [True, False])
def test_broken_replies_every_time_fail_with_one_message(serve, stream):
    server, model, _ = serve([{"fault": "truncated_json"}] * 3, stream=stream, retries=2)
    with pytest.raises(ModelError, match=r"after 3 attempts; last error: broken reply \(not valid JSON"):
        model.complete(MESSAGES, [])
    server.assert_complete()


@pytest.mark.parametrize("stream", [True, False])
def test_a_huge_reply_is_dropped_at_the_cap_not_read_whole(serve, stream):
    server, model, notices = serve([{"fault": "huge", "size": 5_000_000}, {"content": "ok"}], stream=stream,
                                   max_reply_bytes=200_000)
    assert model.complete(MESSAGES, []).content == "ok"
    assert notices[0].startswith("broken reply (reply larger than 0.2 MB; dropped)")
    server.assert_complete()


@pytest.mark.parametrize("fault", ["silent", "keepalive"])
@pytest.mark.parametrize("stream", [True, False])
def test_the_request_timeout_is_a_total_deadline(serve, fault, stream):
    server, model, notices = serve([{"fault": fault, "interval": 0.2}, {"content": "ok"}], stream=stream,
                                   request_timeout=1.5)
    started = time.monotonic()
    assert model.complete(MESSAGES, []).content == "ok"
    assert 1.4 < time.monotonic() - started < 6  # a keep-alive every 0.2 s does not restart the clock
    assert notices[0].startswith("no complete reply within 1.5 s")
    server.assert_complete()


@pytest.mark.parametrize("fault", ["silent", "keepalive"])
def test_the_run_deadline_ends_a_hanging_request_as_a_limit(serve, fault):
    _, model, notices = serve([{"fault": fault, "interval": 0.2}])
    started = time.monotonic()
    with pytest.raises(LimitReached, match="while waiting for the model"):
        model.complete(MESSAGES, [], deadline=started + 1.5)
    assert 1.4 < time.monotonic() - started < 5 and notices == []


@pytest.mark.parametrize("stream", [True, False])
def test_headers_sent_late_do_not_restart_the_clock(serve, stream):
    # the headers come after 1.2 s, then nothing: the body's read must not get a fresh timeout of its own
    _, model, _ = serve([{"fault": "keepalive", "interval": 60, "delay": 1.2}], stream=stream)
    started = time.monotonic()
    with pytest.raises(LimitReached):
        model.complete(MESSAGES, [], deadline=started + 2)
    assert time.monotonic() - started < 2.8


def test_a_retry_that_would_pass_the_deadline_is_not_waited_for(serve):
    _, model, notices = serve([{"fault": "429", "retry_after": 30}])
    started = time.monotonic()
    with pytest.raises(LimitReached, match="the retry after 429 rate limited would end after it"):
        model.complete(MESSAGES, [], deadline=started + 5)
    assert time.monotonic() - started < 3 and notices == []


def test_a_server_that_cannot_be_reached_fails_fast_naming_it(serve):
    with ScriptedServer() as gone:
        url = gone.url  # a port that was just free: nothing listens there now
    _, model, notices = serve([], base_url=url)
    started = time.monotonic()
    with pytest.raises(ServerUnreachable, match="Cannot reach the model server at " + url) as caught:
        model.complete(MESSAGES, [])
    assert "(3 tries)" in str(caught.value) and "OPENAI_BASE_URL" in str(caught.value)
    assert len(notices) == 2 and time.monotonic() - started < 5


def test_completions_are_capped_and_a_rejected_cap_is_renamed_then_dropped(serve):
    steps = [{"fault": "reject_max_tokens", "content": "one"}, {"fault": "reject_max_completion_tokens",
                                                                "content": "two"}, {"content": "three"}]
    server, model, _ = serve(steps, max_output_tokens=300)
    assert [model.complete(MESSAGES, []).content for _ in steps] == ["one", "two", "three"]
    sent = [(r.get("max_tokens"), r.get("max_completion_tokens")) for r in server.requests]
    assert sent == [(300, None), (None, 300), (None, 300), (None, None), (None, None)]
    server.assert_complete()


def test_the_small_model_settings_cap_a_reply_below_the_configured_cap(serve):
    from ga.model.settings import settings_for

    small = settings_for("qwen2.5-coder-1.5b")
    server, model, _ = serve([{"content": "a"}], max_output_tokens=8192, model_settings=small)
    model.complete(MESSAGES, [])
    assert server.requests[0]["max_tokens"] == small.max_reply_tokens == 1024
    server, model, _ = serve([{"content": "a"}], max_output_tokens=0, model_settings=small)
    model.complete(MESSAGES, [])
    assert server.requests[0]["max_tokens"] == 1024  # GA_MAX_OUTPUT_TOKENS=0 leaves the model's own cap


def test_no_cap_is_sent_when_it_is_zero(serve):
    server, model, _ = serve([{"content": "ok"}], max_output_tokens=0)
    model.complete(MESSAGES, [])
    assert "max_tokens" not in server.requests[0]


def test_text_that_cannot_be_encoded_is_made_safe_on_the_wire(serve):
    server, model, _ = serve([{"content": "ok"}])
    model.complete([{"role": "user", "content": "half an emoji \ud83d, a byte \udce9"}], [])
    assert server.requests[0]["messages"][0]["content"] == "half an emoji \ufffd, a byte \\xe9"


@pytest.mark.parametrize("stream", [True, False])
def test_cached_prompt_tokens_are_read_from_the_usage_details(serve, stream):
    usage = {"prompt_tokens": 900, "completion_tokens": 5, "prompt_tokens_details": {"cached_tokens": 768}}
    _, model, _ = serve([{"content": "hi", "usage": usage}], stream=stream)
    assert model.complete(MESSAGES, []).usage.cached_tokens == 768


@pytest.mark.parametrize("stream", [True, False])
def test_cached_prompt_tokens_from_llama_cpp_timings(serve, stream):
    """llama.cpp says how many prompt tokens it processed; the rest came from its cache."""
    usage = {"prompt_tokens": 1_285, "completion_tokens": 40}
    _, model, _ = serve([{"content": "hi", "usage": usage, "timings": {"prompt_n": 5, "predicted_n": 40}}],
                        stream=stream)
    assert model.complete(MESSAGES, []).usage.cached_tokens == 1_280


@pytest.mark.parametrize("flavour", ["openai", "llama.cpp", "vllm"])
def test_a_context_length_refusal_is_recognised_with_its_numbers(serve, flavour):
    server, model, notices = serve([{"fault": "context_length", "flavour": flavour, "window": 4096}])
    with pytest.raises(ContextOverflow) as caught:
        model.complete(MESSAGES, TOOLS)
    sent = len(json.dumps(server.requests[0]["messages"]) + json.dumps(TOOLS)) // 4
    assert (caught.value.window, caught.value.sent) == (4096, sent)
    assert notices == [] and len(server.requests) == 1  # not retried as if it were transient
    assert "too long for the model's context" in str(caught.value)


def test_the_window_the_server_reports_is_found(serve):
    server = ScriptedServer([], window=6_000).start()
    try:
        settings = load_settings(env={}, base_url=server.url, api_key="t", model="m")
        assert OpenAIModel(settings).context_window() == 6_000
    finally:
        server.close()
    _, model, _ = serve([])
    assert model.context_window() is None  # the fake reports none by default


def test_forced_model_settings_take_field_overrides_for_an_ablation():
    from ga.errors import ConfigError

    assert settings_for("x", force="small:failure_hint=false").failure_hint is False
    assert settings_for("x", force="small:failure_hint=false").doubt_answers is True
    assert settings_for("x", force="default:min_read_lines=5,doubt_answers=true").min_read_lines == 5
    for bad in ("small:nope=1", "small:failure_hint", "small:min_read_lines=abc"):
        with pytest.raises(ConfigError, match="GA_MODEL_SETTINGS"):
            settings_for("x", force=bad)
