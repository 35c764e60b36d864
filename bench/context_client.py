"""read_context through a Python WebSocket client (as a Python MCP client sees it).

Run by `bench_context --python PYTHON` against its in-process bridge:

    python bench/context_client.py PORT TOKEN CALLS BRANCH

Prints two medians over CALLS calls after 50 warm-up calls: request sent -> whole message
received (the `websockets` library's framing and UTF-8 decode), and the same plus `json.loads` of
the answer (what an MCP client does before it can use it).
"""

import asyncio
import json
import statistics
import sys
import time

import websockets


async def main() -> None:
    port, token, calls, branch = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    async with websockets.connect(
        f"ws://127.0.0.1:{port}",
        additional_headers={"x-claude-code-ide-authorization": token},
        max_size=64 * 1024 * 1024,
        compression=None,
    ) as ws:
        n = 0

        def rpc(method: str, params: dict) -> str:
            nonlocal n
            n += 1
            return json.dumps({"jsonrpc": "2.0", "id": n, "method": method, "params": params})

        await ws.send(
            rpc(
                "initialize",
                {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "bench-py", "version": "0"},
                },
            )
        )
        await ws.recv()
        args = {"name": "read_context", "arguments": {"branch": branch}}
        raw, decoded = [], []
        size = 0
        for i in range(50 + calls):
            msg = rpc("tools/call", args)
            t = time.perf_counter()
            await ws.send(msg)
            reply = await ws.recv()
            t1 = time.perf_counter()
            v = json.loads(reply)
            t2 = time.perf_counter()
            assert v["result"]["isError"] is False, v
            size = len(reply.encode())
            if i >= 50:
                raw.append(t1 - t)
                decoded.append(t2 - t)

    def q(xs: list, p: float) -> float:
        xs = sorted(xs)
        return xs[min(len(xs) - 1, int(p * len(xs)))] * 1000

    print(
        f"  Python client (websockets), answer {size / 1000:.1f} KB: received median "
        f"{statistics.median(raw) * 1000:.3f} ms (p90 {q(raw, 0.9):.3f}); with json.loads "
        f"median {statistics.median(decoded) * 1000:.3f} ms (p90 {q(decoded, 0.9):.3f})"
    )


asyncio.run(main())
