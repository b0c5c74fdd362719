"""Ask a hal0 relay bot through its A2A card with the official Python A2A SDK (a2a-sdk 1.3):
discover the bot's card, send a question (the answer is a message), continue the
conversation with the answer's contextId, and check that tasks are refused. Prints one JSON
report on stdout for tests/it/a2a.rs.

usage: a2a_relay.py AGENT_BASE_URL RELAY_KEY
"""

import asyncio
import json
import sys
import uuid

import httpx
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.types.a2a_pb2 import GetTaskRequest, Message, Part, Role, SendMessageRequest
from a2a.utils.errors import UnsupportedOperationError


def message(text, context_id=None):
    m = Message(message_id=str(uuid.uuid4()), role=Role.ROLE_USER, parts=[Part(text=text)])
    if context_id:
        m.context_id = context_id
    return m


async def ask(client, text, context_id=None):
    async for ev in client.send_message(SendMessageRequest(message=message(text, context_id))):
        if ev.HasField("message"):
            return {"text": "".join(p.text for p in ev.message.parts), "context": ev.message.context_id,
                    "role": Role.Name(ev.message.role)}
    return None


async def main():
    base, key = sys.argv[1:3]
    http = httpx.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=60)
    card = await A2ACardResolver(http, base).get_agent_card()
    client = ClientFactory(ClientConfig(streaming=True, httpx_client=http)).create(card)
    report = {"card": card.name, "streaming": card.capabilities.streaming}
    first = await ask(client, "what is the answer?")
    report["first"] = first
    report["second"] = await ask(client, "and again?", first["context"])
    try:
        await client.get_task(GetTaskRequest(id="anything"))
        report["get_task"] = "answered"
    except UnsupportedOperationError as e:
        report["get_task"] = str(e)
    print(json.dumps(report))


asyncio.run(main())
