"""A game client in a few lines: opens a session on the engine's WebSocket and prints every
message the engine pushes (ready, offers, balances, kill-switch and config changes).

    pip install websockets
    KEY=ofr_live_sk_... SESSION=$(python3 -c 'import uuid; print(uuid.uuid4())') \
        python3 examples/ws_client.py

Environment: KEY (an SDK key), SESSION (a UUID), PLAYER (default player_0), ENGINE (default
ws://127.0.0.1:8080). The protocol is described in docs/protocol.md.
"""

import asyncio
import json
import os

import websockets


async def main() -> None:
    url = os.environ.get("ENGINE", "ws://127.0.0.1:8080") + "/v1/sdk/ws"
    async with websockets.connect(
        url,
        subprotocols=["svc.v1.json"],
        additional_headers={"Authorization": f"Bearer {os.environ['KEY']}"},
    ) as ws:
        hello = {
            "type": "hello",
            "session_id": os.environ["SESSION"],
            "player_id": os.environ.get("PLAYER", "player_0"),
        }
        await ws.send(json.dumps(hello))
        async for frame in ws:
            message = json.loads(frame)
            print(message, flush=True)
            # Acknowledge what arrived, so the engine can forget it.
            await ws.send(json.dumps({"type": "ack", "seq": message["seq"]}))


if __name__ == "__main__":
    asyncio.run(main())
