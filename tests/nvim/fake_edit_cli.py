#!/usr/bin/env python3
"""A fake Claude Code CLI for edit_spec.lua: speaks stream-json on stdin and stdout as
`claude -p --input-format stream-json --output-format stream-json --verbose
--include-partial-messages` does.

Its folder ($FAKE_EDIT_DIR, else the script's own) holds:
  answers.json  a JSON list (read at each message), one entry per user message: {"text": "...", "pieces": N (the text
                cut in N deltas), "delay": seconds between deltas, "by_line": true (one
                delta per line), "die": true (exit before answering), "error": "..." (an error
                result), "wait": "file" (wait until the file exists before delta number
                "wait_after", default 1)}; a message past the list gets
                "OK".
  args.log      each start's arguments, one line
  starts        how many times it started
  prompts.log   each user message's text, separated by lines of "-----"
"""
import json
import os
import sys
import time

D = os.environ.get("FAKE_EDIT_DIR") or os.path.dirname(os.path.abspath(__file__))


def out(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def event(ev):
    out({"type": "stream_event", "event": ev, "parent_tool_use_id": None, "session_id": "fake"})


def answer(spec):
    text = spec.get("text", "OK")
    if spec.get("error"):
        out({"type": "result", "subtype": "error_during_execution", "is_error": True, "result": spec["error"]})
        return
    event({"type": "message_start", "message": {"id": "m", "content": []}})
    event({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})
    if spec.get("by_line"):
        pieces = text.splitlines(keepends=True)
    else:
        n = max(1, int(spec.get("pieces", 2)))
        size = max(1, -(-len(text) // n))
        pieces = [text[i : i + size] for i in range(0, len(text), size)]
    for i, piece in enumerate(pieces):
        if spec.get("wait") and i == spec.get("wait_after", 1):
            while not os.path.exists(os.path.join(D, spec["wait"])):
                time.sleep(0.02)
        event({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": piece}})
        if spec.get("delay"):
            time.sleep(spec["delay"])
    event({"type": "content_block_stop", "index": 0})
    out({"type": "assistant", "message": {"id": "m", "role": "assistant", "content": [{"type": "text", "text": text}]}, "parent_tool_use_id": None})
    event({"type": "message_stop"})
    out({"type": "result", "subtype": "success", "is_error": False, "result": text})


def main():
    with open(os.path.join(D, "args.log"), "a") as f:
        f.write(" ".join(sys.argv[1:]) + "\n")
    starts_path = os.path.join(D, "starts")
    starts = int(open(starts_path).read()) if os.path.exists(starts_path) else 0
    with open(starts_path + ".tmp", "w") as f:
        f.write(str(starts + 1))
    os.replace(starts_path + ".tmp", starts_path)
    out({"type": "system", "subtype": "init", "session_id": "fake", "tools": ["Read", "Grep", "Glob"]})
    count_path = os.path.join(D, "count")
    for line in sys.stdin:
        msg = json.loads(line)
        content = msg["message"]["content"]
        text = content if isinstance(content, str) else "".join(b.get("text", "") for b in content)
        with open(os.path.join(D, "prompts.log"), "a") as f:
            f.write(text + "\n-----\n")
        n = int(open(count_path).read()) if os.path.exists(count_path) else 0
        with open(count_path + ".tmp", "w") as f:
            f.write(str(n + 1))
        os.replace(count_path + ".tmp", count_path)
        try:
            answers = json.load(open(os.path.join(D, "answers.json")))
        except (OSError, ValueError):
            answers = []
        spec = answers[n] if n < len(answers) else {"text": "OK"}
        if spec.get("die"):
            sys.stderr.write("fake: dying as told\n")
            sys.exit(3)
        answer(spec)


if __name__ == "__main__":
    main()
