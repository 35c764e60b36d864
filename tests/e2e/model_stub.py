#!/usr/bin/env python3
"""A loopback stub of the Anthropic Messages API, for running the real Claude Code CLI offline.

Point the CLI at it with ``ANTHROPIC_BASE_URL=http://127.0.0.1:<port>`` and any
``ANTHROPIC_API_KEY``. It answers ``POST /v1/messages`` (streamed as server-sent events when the
request says ``"stream": true``, one JSON message otherwise), ``POST /v1/messages/count_tokens``,
and anything else with a harmless answer. Every request is recorded.

Scripting
---------
*Agent turns* — requests that carry a non-empty ``tools`` list, i.e. the CLI's main loop — take
their answer from, in order:

1. ``stub.responder(request)`` when set and it returns a spec (not ``None``);
2. the next spec in ``stub.script`` (a queue);
3. ``stub.default`` (a short text answer).

*Side requests* (no ``tools``, or ``"tools": []``: the interactive CLI's session-title request,
summaries…) never consume the script; ``stub.side_responder(request)`` may answer them, otherwise
they get ``stub.side_default``: when the request asks for JSON output
(``output_config.format.type == "json_schema"``, as the title request of 2.1.197 does) a minimal
object satisfying the schema (strings ``"Stub title"``), else a short text. Check
``Request.is_agent`` to see how one was classified; replace ``stub.classify`` (request -> bool) to
classify differently. (Print mode of 2.1.197 with CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 sends
agent turns only.)

A spec is a dict (or a callable ``request -> dict``):

* ``{"text": "hello"}``
* ``{"tool_use": {"name": "mcp__nvim__getWorkspaceFolders", "input": {}}}`` (or a list of them;
  ``"text"`` alongside adds a text block first); ids are generated unless given;
* ``{"echo_tool_result": true}`` → a text answer ``"TOOL RESULT: <text of the tool_result(s) in
  the last user message>"``;
* ``{"content": [raw content blocks], "stop_reason": "end_turn"}`` for anything else;
* ``{"error": {"status": 500, "type": "api_error", "message": "…"}}`` → an HTTP error.

A streamed text block comes in two deltas; ``"pieces": N`` alongside a spec's text cuts it in
``N`` deltas instead (``"pieces": "lines"``: one delta per line), and ``"delay": seconds`` waits
that long before each delta after the first (an answer streaming slowly, e.g. a fenced block
that edit in place shows as it arrives).

Standalone (for tests in other languages)::

    python tests/e2e/model_stub.py [--port N] [--script FILE.json] [--record FILE.jsonl]

prints one JSON line ``{"port": N, "url": "http://127.0.0.1:N"}`` and serves until stdin closes
or SIGTERM/SIGINT. The script file is a JSON list of specs, or an object
``{"script": [...], "default": spec, "rules": [...]}`` where each rule is a spec with a ``"when"``
condition tried before the queue on agent turns: ``{"when": {"has_tool_result": true}, ...}``,
``{"when": {"last_user_contains": "text"}, ...}``. Control endpoints on the same port:
``GET /_stub/requests`` (every recorded request), ``POST /_stub/script`` (append specs: a JSON list),
``POST /_stub/reset`` (clear requests and script).
"""

from __future__ import annotations

import argparse
import itertools
import json
import signal
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Optional, Union

Spec = Union[dict, Callable[["Request"], Optional[dict]]]

_ids = itertools.count(1)


@dataclass
class Request:
    """One recorded HTTP request."""

    method: str
    path: str
    headers: dict
    body: Any  # parsed JSON, or the raw text when it is not JSON, or None
    is_agent: bool = False
    time: float = field(default_factory=time.time)
    response: Any = None  # the message (dict) the stub answered with, for /v1/messages

    # -- helpers for assertions -------------------------------------------------------------
    @property
    def messages(self) -> list:
        return (self.body or {}).get("messages", []) if isinstance(self.body, dict) else []

    @property
    def model(self) -> str:
        return (self.body or {}).get("model", "") if isinstance(self.body, dict) else ""

    @property
    def tool_names(self) -> list:
        if not isinstance(self.body, dict):
            return []
        return [t.get("name", "") for t in self.body.get("tools") or []]

    def system_text(self) -> str:
        s = (self.body or {}).get("system") if isinstance(self.body, dict) else None
        if isinstance(s, str):
            return s
        if isinstance(s, list):
            return "\n".join(b.get("text", "") for b in s if isinstance(b, dict))
        return ""

    def last_user(self) -> Optional[dict]:
        for m in reversed(self.messages):
            if m.get("role") == "user":
                return m
        return None

    def tool_results(self, last_only: bool = True) -> list:
        """The ``tool_result`` blocks of the last user message (or of all messages)."""
        msgs = [self.last_user()] if last_only else self.messages
        out = []
        for m in msgs:
            if not m or not isinstance(m.get("content"), list):
                continue
            out.extend(b for b in m["content"] if isinstance(b, dict) and b.get("type") == "tool_result")
        return out

    def tool_result_texts(self, last_only: bool = True) -> list:
        return [block_text(b) for b in self.tool_results(last_only)]

    def all_text(self) -> str:
        """Every text in the conversation (user, assistant, tool results), for `in` checks."""
        parts = []
        for m in self.messages:
            c = m.get("content")
            if isinstance(c, str):
                parts.append(c)
            elif isinstance(c, list):
                parts.extend(block_text(b) for b in c if isinstance(b, dict))
        return "\n".join(parts)

    def to_json(self) -> dict:
        return {
            "method": self.method,
            "path": self.path,
            "headers": self.headers,
            "body": self.body,
            "is_agent": self.is_agent,
            "time": self.time,
            "response": self.response,
        }


def block_text(b: dict) -> str:
    """The text of a content block (tool_result content may be a string or a list of blocks)."""
    t = b.get("type")
    if t == "text":
        return b.get("text", "")
    if t == "tool_result":
        c = b.get("content")
        if isinstance(c, str):
            return c
        if isinstance(c, list):
            return "\n".join(x.get("text", "") for x in c if isinstance(x, dict))
        return ""
    if t == "tool_use":
        return json.dumps({"tool_use": b.get("name"), "input": b.get("input")})
    return ""


def _rule_matches(when: dict, req: Request) -> bool:
    if when.get("has_tool_result") is not None:
        if bool(req.tool_results()) != bool(when["has_tool_result"]):
            return False
    if "last_user_contains" in when:
        lu = req.last_user() or {}
        c = lu.get("content")
        text = c if isinstance(c, str) else "\n".join(block_text(b) for b in c or [] if isinstance(b, dict))
        if when["last_user_contains"] not in text:
            return False
    return True


class ModelStub:
    """The stub server. ``start()`` binds 127.0.0.1 on a free port (or ``port``)."""

    def __init__(self, script: Optional[list] = None, port: int = 0, record: Optional[str] = None):
        self.script: deque = deque(script or [])
        self.rules: list = []  # specs with "when", tried before the script on agent turns
        self.responder: Optional[Callable[[Request], Optional[dict]]] = None
        self.side_responder: Optional[Callable[[Request], Optional[dict]]] = None
        self.default: Spec = {"text": "OK (model stub: script exhausted)"}
        self.side_default: Spec = _side_answer
        self.classify: Callable[[Request], bool] = lambda r: bool((r.body or {}).get("tools"))
        self.requests: list = []
        self._want_port = port
        self._record = record
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        self._server: Optional[ThreadingHTTPServer] = None
        self._thread: Optional[threading.Thread] = None

    # -- life cycle ----------------------------------------------------------------------------
    def start(self) -> "ModelStub":
        stub = self

        class Handler(_Handler):
            pass

        Handler.stub = stub
        self._server = ThreadingHTTPServer(("127.0.0.1", self._want_port), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="model-stub", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> "ModelStub":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._server, "stub not started"
        return self._server.server_address[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # -- scripting -------------------------------------------------------------------------------
    def push(self, *specs: Spec) -> None:
        with self._lock:
            self.script.extend(specs)

    def reset(self) -> None:
        with self._lock:
            self.script.clear()
            self.requests.clear()

    # -- inspection ------------------------------------------------------------------------------
    def agent_requests(self) -> list:
        with self._lock:
            return [r for r in self.requests if r.is_agent]

    def message_requests(self) -> list:
        with self._lock:
            return [r for r in self.requests if r.path.split("?")[0].rstrip("/").endswith("/v1/messages")]

    def wait_for(self, pred: Callable[[Request], bool], timeout: float = 30.0) -> Optional[Request]:
        """Waits until a recorded request satisfies ``pred``; returns it (or None on timeout)."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                for r in self.requests:
                    if pred(r):
                        return r
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self._cond.wait(left)

    def _record_request(self, r: Request) -> None:
        with self._cond:
            self.requests.append(r)
            self._cond.notify_all()
        if self._record:
            with open(self._record, "a", encoding="utf-8") as f:
                f.write(json.dumps(r.to_json()) + "\n")

    def _choose(self, req: Request) -> dict:
        """The spec answering a /v1/messages request (called under no lock)."""
        if not req.is_agent:
            if self.side_responder:
                s = self.side_responder(req)
                if s is not None:
                    return s
            return _resolve(self.side_default, req)
        if self.responder:
            s = self.responder(req)
            if s is not None:
                return s
        for rule in list(self.rules):
            if _rule_matches(rule.get("when", {}), req):
                return _resolve(rule, req)
        with self._lock:
            spec = self.script.popleft() if self.script else self.default
        return _resolve(spec, req)


def _resolve(spec: Spec, req: Request) -> dict:
    if callable(spec):
        s = spec(req)
        return s if s is not None else {"text": "OK"}
    return spec


def schema_example(schema: Any, text: str = "Stub title") -> Any:
    """A minimal value satisfying a (simple) JSON schema: required properties filled in."""
    if not isinstance(schema, dict):
        return text
    if "enum" in schema and schema["enum"]:
        return schema["enum"][0]
    if "const" in schema:
        return schema["const"]
    for key in ("anyOf", "oneOf"):
        if schema.get(key):
            return schema_example(schema[key][0], text)
    t = schema.get("type")
    if isinstance(t, list):
        t = next((x for x in t if x != "null"), "string")
    if t == "object" or "properties" in schema:
        props = schema.get("properties") or {}
        return {k: schema_example(props.get(k, {}), text) for k in schema.get("required", list(props))}
    if t == "array":
        return []
    if t in ("integer", "number"):
        return 0
    if t == "boolean":
        return False
    if t == "null":
        return None
    return text


def _side_answer(req: Request) -> dict:
    """The default answer to side requests: JSON when a schema is asked for, else short text."""
    fmt = ((req.body or {}).get("output_config") or {}).get("format") or {}
    if fmt.get("type") == "json_schema":
        return {"text": json.dumps(schema_example(fmt.get("schema")))}
    return {"text": "Stub title"}


def build_message(spec: dict, req: Request) -> dict:
    """Turns a spec into an Anthropic ``message`` object."""
    content = []
    stop = spec.get("stop_reason")
    if "content" in spec:
        content = list(spec["content"])
    else:
        if spec.get("echo_tool_result"):
            texts = req.tool_result_texts()
            content.append({"type": "text", "text": "TOOL RESULT: " + "\n".join(texts)})
        elif "text" in spec:
            content.append({"type": "text", "text": spec["text"]})
        uses = spec.get("tool_use")
        if isinstance(uses, dict):
            uses = [uses]
        for u in uses or []:
            content.append(
                {
                    "type": "tool_use",
                    "id": u.get("id") or f"toolu_stub{next(_ids):06d}",
                    "name": u["name"],
                    "input": u.get("input", {}),
                }
            )
    if stop is None:
        stop = "tool_use" if any(b.get("type") == "tool_use" for b in content) else "end_turn"
    in_tokens = max(1, len(json.dumps(req.body)) // 4) if req.body is not None else 1
    out_tokens = max(1, len(json.dumps(content)) // 4)
    return {
        "id": f"msg_stub{next(_ids):06d}",
        "type": "message",
        "role": "assistant",
        "model": req.model or "claude-stub",
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {
            "input_tokens": in_tokens,
            "output_tokens": out_tokens,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
        },
    }


def text_pieces(text: str, pieces=None) -> list:
    """The deltas a streamed text block is cut in: two halves, or ``pieces`` (a count, or
    ``"lines"``)."""
    if not text:
        return []
    if pieces == "lines":
        return text.splitlines(keepends=True)
    if isinstance(pieces, int) and pieces > 0:
        size = max(1, -(-len(text) // pieces))
        return [text[i : i + size] for i in range(0, len(text), size)]
    half = len(text) // 2
    return [p for p in (text[:half], text[half:]) if p]


def sse_events(msg: dict, pieces=None):
    """The server-sent events streaming ``msg``, as (event, data) pairs; ``pieces`` as
    :func:`text_pieces` takes it."""
    start = dict(msg, content=[], stop_reason=None, stop_sequence=None)
    start["usage"] = dict(msg["usage"], output_tokens=1)
    yield "message_start", {"type": "message_start", "message": start}
    for i, b in enumerate(msg["content"]):
        if b["type"] == "text":
            yield "content_block_start", {"type": "content_block_start", "index": i, "content_block": {"type": "text", "text": ""}}
            # Two deltas at least, so the client's accumulation is exercised.
            for part in text_pieces(b["text"], pieces):
                yield "content_block_delta", {"type": "content_block_delta", "index": i, "delta": {"type": "text_delta", "text": part}}
        elif b["type"] == "tool_use":
            head = {"type": "tool_use", "id": b["id"], "name": b["name"], "input": {}}
            yield "content_block_start", {"type": "content_block_start", "index": i, "content_block": head}
            js = json.dumps(b.get("input", {}))
            yield "content_block_delta", {"type": "content_block_delta", "index": i, "delta": {"type": "input_json_delta", "partial_json": js}}
        else:
            yield "content_block_start", {"type": "content_block_start", "index": i, "content_block": b}
        yield "content_block_stop", {"type": "content_block_stop", "index": i}
    yield "message_delta", {
        "type": "message_delta",
        "delta": {"stop_reason": msg["stop_reason"], "stop_sequence": None},
        "usage": {"output_tokens": msg["usage"]["output_tokens"]},
    }
    yield "message_stop", {"type": "message_stop"}


class _Handler(BaseHTTPRequestHandler):
    stub: ModelStub
    protocol_version = "HTTP/1.1"
    server_version = "model-stub/1"

    def log_message(self, fmt, *args):  # quiet
        pass

    def _read_body(self):
        n = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(n) if n else b""
        if not raw:
            return None
        try:
            return json.loads(raw)
        except ValueError:
            return raw.decode("utf-8", "replace")

    def _json(self, status: int, obj: Any) -> None:
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.send_header("request-id", f"req_stub{next(_ids):06d}")
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        self._dispatch("GET")

    def do_POST(self):
        self._dispatch("POST")

    def do_PUT(self):
        self._dispatch("PUT")

    def do_DELETE(self):
        self._dispatch("DELETE")

    def do_HEAD(self):
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    def _dispatch(self, method: str) -> None:
        stub = self.stub
        body = self._read_body() if method in ("POST", "PUT") else None
        path = self.path
        bare = path.split("?")[0].rstrip("/")
        if bare.startswith("/_stub/"):
            return self._control(method, bare, body)
        req = Request(method=method, path=path, headers={k.lower(): v for k, v in self.headers.items()}, body=body)
        if method == "POST" and bare.endswith("/v1/messages") and isinstance(body, dict):
            try:
                req.is_agent = bool(stub.classify(req))
            except Exception:
                req.is_agent = False
            try:
                spec = stub._choose(req)
            except Exception as e:  # a bad responder must not hang the CLI
                spec = {"error": {"status": 500, "type": "api_error", "message": f"stub responder failed: {e!r}"}}
            if "error" in spec:
                err = spec["error"]
                req.response = {"error": err}
                stub._record_request(req)
                return self._json(
                    err.get("status", 500),
                    {"type": "error", "error": {"type": err.get("type", "api_error"), "message": err.get("message", "stub error")}},
                )
            msg = build_message(spec, req)
            req.response = msg
            stub._record_request(req)
            if body.get("stream"):
                return self._stream(msg, spec.get("pieces"), spec.get("delay"))
            return self._json(200, msg)
        stub._record_request(req)
        if bare.endswith("/v1/messages/count_tokens"):
            n = max(1, len(json.dumps(body)) // 4) if body is not None else 1
            return self._json(200, {"input_tokens": n})
        if bare.endswith("/v1/models"):
            return self._json(200, {"data": [], "has_more": False, "first_id": None, "last_id": None})
        # Anything else (telemetry, feature flags, account look-ups): an empty success.
        return self._json(200, {})

    def _stream(self, msg: dict, pieces=None, delay=None) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("request-id", f"req_stub{next(_ids):06d}")
        self.send_header("connection", "close")
        self.end_headers()
        self.close_connection = True
        try:
            first = True
            for ev, data in sse_events(msg, pieces):
                if ev == "content_block_delta" and delay:
                    if not first:
                        time.sleep(float(delay))
                    first = False
                self.wfile.write(f"event: {ev}\ndata: {json.dumps(data)}\n\n".encode())
                self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass

    def _control(self, method: str, bare: str, body: Any) -> None:
        stub = self.stub
        if bare == "/_stub/requests" and method == "GET":
            with stub._lock:
                data = [r.to_json() for r in stub.requests]
            return self._json(200, data)
        if bare == "/_stub/script" and method == "POST":
            if not isinstance(body, list):
                return self._json(400, {"error": "POST a JSON list of specs"})
            stub.push(*body)
            return self._json(200, {"queued": len(stub.script)})
        if bare == "/_stub/reset" and method == "POST":
            stub.reset()
            return self._json(200, {})
        return self._json(404, {"error": f"unknown control endpoint {bare}"})


def load_script(stub: ModelStub, path: str) -> None:
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    if isinstance(data, list):
        stub.push(*data)
        return
    if not isinstance(data, dict):
        raise SystemExit(f"{path}: expected a JSON list of specs or an object with 'script'")
    stub.push(*data.get("script", []))
    stub.rules.extend(data.get("rules", []))
    if "default" in data:
        stub.default = data["default"]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="Loopback stub of the Anthropic Messages API")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--script", help="JSON file: a list of response specs, or {script, rules, default}")
    ap.add_argument("--record", help="append every request as a JSON line to this file")
    a = ap.parse_args(argv)
    stub = ModelStub(port=a.port, record=a.record)
    if a.script:
        load_script(stub, a.script)
    stub.start()
    print(json.dumps({"port": stub.port, "url": stub.url}), flush=True)
    done = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: done.set())

    def wait_stdin():
        try:
            while sys.stdin.read(65536):
                pass
        except Exception:
            pass
        done.set()

    threading.Thread(target=wait_stdin, daemon=True).start()
    done.wait()
    stub.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
