"""The model stub itself: the SSE stream a Messages API client expects, scripting, side requests,
recording, and the stand-alone process other test suites use."""

from __future__ import annotations

import http.client
import json
import time
import subprocess
import sys
from pathlib import Path

from model_stub import ModelStub, schema_example

HERE = Path(__file__).resolve().parent


def post(port, path, body, stream=None):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    c.request("POST", path, json.dumps(body), {"content-type": "application/json"})
    r = c.getresponse()
    data = r.read().decode()
    c.close()
    return r.status, r.getheader("content-type"), data


def get(port, path):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    c.request("GET", path)
    r = c.getresponse()
    data = r.read().decode()
    c.close()
    return r.status, data


def parse_sse(text):
    events = []
    for chunk in text.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in chunk.splitlines())
        data = json.loads(lines["data"])
        assert data["type"] == lines["event"]
        events.append(data)
    return events


def agent_body(text="hi", stream=True, **kw):
    b = {"model": "m", "max_tokens": 10, "stream": stream, "tools": [{"name": "t", "input_schema": {"type": "object"}}],
         "messages": [{"role": "user", "content": text}]}
    b.update(kw)
    return b


def test_streamed_tool_use_and_text_reassemble():
    with ModelStub() as stub:
        stub.push({"text": "hello world", "tool_use": [{"name": "mcp__x__y", "input": {"a": [1, "b"]}}]})
        status, ctype, data = post(stub.port, "/v1/messages?beta=true", agent_body())
        assert status == 200 and ctype.startswith("text/event-stream")
        ev = parse_sse(data)
        assert [e["type"] for e in ev] == [
            "message_start", "content_block_start", "content_block_delta", "content_block_delta", "content_block_stop",
            "content_block_start", "content_block_delta", "content_block_stop", "message_delta", "message_stop",
        ]
        text = "".join(e["delta"]["text"] for e in ev if e["type"] == "content_block_delta" and e["index"] == 0)
        assert text == "hello world"
        tool = [e for e in ev if e["type"] == "content_block_start" and e["index"] == 1][0]["content_block"]
        assert tool["name"] == "mcp__x__y" and tool["id"].startswith("toolu_")
        js = "".join(e["delta"]["partial_json"] for e in ev if e["type"] == "content_block_delta" and e["index"] == 1)
        assert json.loads(js) == {"a": [1, "b"]}
        assert ev[-2]["delta"]["stop_reason"] == "tool_use"
        assert stub.requests[0].response["content"][1]["id"] == tool["id"]


def test_text_streamed_in_pieces_with_a_delay():
    block = "Here:\n```py\nx = 1\ny = 2\n```\n"
    with ModelStub() as stub:
        stub.push({"text": block, "pieces": "lines", "delay": 0.2}, {"text": block, "pieces": 4}, {"text": block})
        t0 = time.time()
        ev = parse_sse(post(stub.port, "/v1/messages", agent_body())[2])
        deltas = [e["delta"]["text"] for e in ev if e["type"] == "content_block_delta"]
        assert deltas == block.splitlines(keepends=True)
        assert time.time() - t0 >= 0.2 * (len(deltas) - 1)
        ev = parse_sse(post(stub.port, "/v1/messages", agent_body())[2])
        deltas = [e["delta"]["text"] for e in ev if e["type"] == "content_block_delta"]
        assert len(deltas) == 4 and "".join(deltas) == block
        # Without pieces: the two halves, as before.
        ev = parse_sse(post(stub.port, "/v1/messages", agent_body())[2])
        deltas = [e["delta"]["text"] for e in ev if e["type"] == "content_block_delta"]
        assert len(deltas) == 2 and "".join(deltas) == block
        # The non-streamed answer carries the whole text, no stub keys.
        stub.push({"text": block, "pieces": 3})
        body = dict(agent_body(), stream=False)
        msg = json.loads(post(stub.port, "/v1/messages", body)[2])
        assert msg["content"] == [{"type": "text", "text": block}]


def test_non_streaming_and_other_endpoints():
    with ModelStub(script=[{"text": "plain"}]) as stub:
        status, ctype, data = post(stub.port, "/v1/messages", agent_body(stream=False))
        msg = json.loads(data)
        assert status == 200 and msg["type"] == "message" and msg["content"] == [{"type": "text", "text": "plain"}]
        assert msg["stop_reason"] == "end_turn"
        status, _, data = post(stub.port, "/v1/messages/count_tokens", {"messages": []})
        assert status == 200 and json.loads(data)["input_tokens"] >= 1
        status, data = get(stub.port, "/api/anything")
        assert status == 200 and json.loads(data) == {}
        assert [r.path for r in stub.requests] == ["/v1/messages", "/v1/messages/count_tokens", "/api/anything"]


def test_side_requests_do_not_consume_the_script():
    with ModelStub(script=[{"text": "scripted"}]) as stub:
        schema = {"type": "object", "properties": {"title": {"type": "string"}}, "required": ["title"]}
        side = {"model": "m", "max_tokens": 5, "tools": [], "messages": [{"role": "user", "content": "x"}],
                "output_config": {"format": {"type": "json_schema", "schema": schema}}}
        _, _, data = post(stub.port, "/v1/messages", dict(side, stream=False))
        assert json.loads(json.loads(data)["content"][0]["text"]) == {"title": "Stub title"}
        _, _, data = post(stub.port, "/v1/messages", {"model": "m", "messages": []})
        assert json.loads(data)["content"][0]["text"] == "Stub title"
        _, _, data = post(stub.port, "/v1/messages", agent_body(stream=False))
        assert json.loads(data)["content"][0]["text"] == "scripted"
        _, _, data = post(stub.port, "/v1/messages", agent_body(stream=False))
        assert "script exhausted" in json.loads(data)["content"][0]["text"]
        assert [r.is_agent for r in stub.requests] == [False, False, True, True]


def test_responder_rules_and_echo():
    with ModelStub() as stub:
        stub.rules.append({"when": {"has_tool_result": True}, "echo_tool_result": True})
        stub.responder = lambda r: {"text": "magic"} if "magic" in r.all_text() else None
        stub.push({"text": "queued"})
        body = agent_body(stream=False, messages=[
            {"role": "user", "content": "q"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "t", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": "RESULT-42"}]}]},
        ])
        _, _, data = post(stub.port, "/v1/messages", body)
        assert json.loads(data)["content"][0]["text"] == "TOOL RESULT: RESULT-42"
        assert stub.requests[-1].tool_result_texts() == ["RESULT-42"]
        _, _, data = post(stub.port, "/v1/messages", agent_body("magic please", stream=False))
        assert json.loads(data)["content"][0]["text"] == "magic"
        _, _, data = post(stub.port, "/v1/messages", agent_body("plain", stream=False))
        assert json.loads(data)["content"][0]["text"] == "queued"


def test_error_spec_and_broken_responder():
    with ModelStub(script=[{"error": {"status": 529, "type": "overloaded_error", "message": "busy"}}]) as stub:
        status, _, data = post(stub.port, "/v1/messages", agent_body(stream=False))
        assert status == 529 and json.loads(data)["error"]["type"] == "overloaded_error"
        stub.responder = lambda r: 1 / 0
        status, _, data = post(stub.port, "/v1/messages", agent_body(stream=False))
        assert status == 500 and "ZeroDivisionError" in data


def test_schema_example():
    s = {"type": "object", "required": ["a", "b", "c"], "properties": {
        "a": {"type": "string"}, "b": {"type": "array"}, "c": {"type": "object", "properties": {"d": {"enum": ["x", "y"]}}}}}
    assert schema_example(s) == {"a": "Stub title", "b": [], "c": {"d": "x"}}


def test_standalone_process(tmp_path):
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"script": [{"text": "one"}], "rules": [{"when": {"last_user_contains": "ping"}, "text": "pong"}]}))
    record = tmp_path / "rec.jsonl"
    p = subprocess.Popen([sys.executable, str(HERE / "model_stub.py"), "--script", str(script), "--record", str(record)],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        info = json.loads(p.stdout.readline())
        port = info["port"]
        assert info["url"] == f"http://127.0.0.1:{port}"
        _, _, data = post(port, "/v1/messages", agent_body("ping", stream=False))
        assert json.loads(data)["content"][0]["text"] == "pong"
        _, _, data = post(port, "/v1/messages", agent_body("x", stream=False))
        assert json.loads(data)["content"][0]["text"] == "one"
        post(port, "/_stub/script", [{"text": "two"}])
        _, _, data = post(port, "/v1/messages", agent_body("x", stream=False))
        assert json.loads(data)["content"][0]["text"] == "two"
        status, data = get(port, "/_stub/requests")
        reqs = json.loads(data)
        assert [r["response"]["content"][0]["text"] for r in reqs] == ["pong", "one", "two"]
        assert [json.loads(line)["body"]["messages"][0]["content"] for line in record.read_text().splitlines()] == ["ping", "x", "x"]
    finally:
        p.stdin.close()
        assert p.wait(30) == 0
