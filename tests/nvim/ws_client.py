"""A tiny WebSocket client for tests/nvim specs: a stand-in for Claude Code.

    python ws_client.py PORT TOKEN [PATH]

Connects to the bridge with the token (at PATH: "/" by default, the IDE door; "/mcp" is the
model's door), then reads JSON lines on stdin:
  {"send": <JSON-RPC message>}   sends it as a text frame
  {"close": true}                closes the connection and exits
Every message received is written to stdout as one JSON line; "CONNECTED" is written once the
handshake is done, "CLOSED" when the connection ends.
"""

import json
import sys
import threading

from websockets.sync.client import connect


def main() -> None:
    port, token = sys.argv[1], sys.argv[2]
    path = sys.argv[3] if len(sys.argv) > 3 else ""
    ws = connect(
        f"ws://127.0.0.1:{port}{path}",
        additional_headers={"x-claude-code-ide-authorization": token},
        subprotocols=["mcp"],
        open_timeout=10,
        # Claude Code's client takes messages of any size (a selection of megabytes); the
        # library's default (1 MiB) would close the connection on one.
        max_size=None,
    )
    out_lock = threading.Lock()

    def out(line: str) -> None:
        with out_lock:
            sys.stdout.write(line + "\n")
            sys.stdout.flush()

    out("CONNECTED")

    def reader() -> None:
        try:
            for msg in ws:
                out(msg if isinstance(msg, str) else msg.decode())
        except Exception:
            pass
        out("CLOSED")

    t = threading.Thread(target=reader, daemon=True)
    t.start()
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        cmd = json.loads(line)
        if "send" in cmd:
            ws.send(json.dumps(cmd["send"]))
        if cmd.get("close"):
            break
    ws.close()
    t.join(5)


if __name__ == "__main__":
    main()
