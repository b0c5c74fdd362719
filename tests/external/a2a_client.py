"""Drive hal0's A2A face with the official Python A2A SDK (a2a-sdk 1.3), as any A2A client
would: discover the card, then send (blocking and streaming), get, list, cancel, answer a
question (input-required), and try what must be refused. Prints one JSON report on stdout;
the Rust test (tests/it/a2a.rs) asserts on it.

usage: a2a_client.py BASE_URL KEY OTHER_CLIENT_KEY RELAY_ONLY_KEY [BINDING]
(BINDING: JSONRPC, the default, or HTTP+JSON)
"""

import asyncio
import json
import sys
import uuid

import httpx
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.client.errors import A2AClientError
from a2a.types.a2a_pb2 import (
    CancelTaskRequest,
    GetTaskRequest,
    ListTasksRequest,
    Message,
    Part,
    Role,
    SendMessageRequest,
    SubscribeToTaskRequest,
    TaskState,
)
from a2a.utils.errors import TaskNotCancelableError, TaskNotFoundError
from google.protobuf import json_format


def message(text, task_id=None, context_id=None):
    m = Message(message_id=str(uuid.uuid4()), role=Role.ROLE_USER, parts=[Part(text=text)])
    if task_id:
        m.task_id = task_id
    if context_id:
        m.context_id = context_id
    return m


def state(t):
    return TaskState.Name(t.status.state)


def output(t):
    return "".join(p.text for a in t.artifacts for p in a.parts)


BINDING = sys.argv[5] if len(sys.argv) > 5 else "JSONRPC"


def config(streaming, http):
    return ClientConfig(streaming=streaming, httpx_client=http, supported_protocol_bindings=[BINDING])


async def client_for(base, key, streaming):
    http = httpx.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=60)
    card = await A2ACardResolver(http, base).get_agent_card()
    return card, ClientFactory(config(streaming, http)).create(card)


async def last_task(client, request):
    """Send and return the last task the SDK reports (non-streaming: the only one)."""
    last = None
    async for ev in client.send_message(request):
        if ev.HasField("task"):
            last = ev.task
    return last


async def main():
    base, key, other_key, relay_key = sys.argv[1:5]
    report = {"binding": BINDING}

    # Discovery: the box's own card and the default profile's, through the SDK's resolver.
    async with httpx.AsyncClient(timeout=30) as anon:
        root = await A2ACardResolver(anon, base).get_agent_card()
        report["root_card"] = json_format.MessageToDict(root)
        prof = await A2ACardResolver(anon, base + "/a2a/hermes").get_agent_card()
        report["profile_card_url"] = prof.supported_interfaces[0].url

    card, blocking = await client_for(base, key, streaming=False)
    report["card_name"] = card.name
    report["transport"] = type(blocking._transport).__name__

    # A blocking send: the SDK waits for the task and gets it completed, with its output.
    t = await last_task(blocking, SendMessageRequest(message=message("hello from a2a")))
    report["blocking"] = {"id": t.id, "context": t.context_id, "state": state(t), "output": output(t)}

    # The same message sent again (the same messageId) is the same task.
    m = message("say it once")
    first = await last_task(blocking, SendMessageRequest(message=m))
    again = await last_task(blocking, SendMessageRequest(message=m))
    report["same_message_same_task"] = first.id == again.id

    # Streaming: the task first, output chunks, the final status.
    _, streaming = await client_for(base, key, streaming=True)
    kinds, chunks, states = [], [], []
    async for ev in streaming.send_message(SendMessageRequest(message=message("stream this please"))):
        kind = ev.WhichOneof("payload")
        kinds.append(kind)
        if kind == "artifact_update":
            chunks.append("".join(p.text for p in ev.artifact_update.artifact.parts))
        if kind == "status_update":
            states.append(TaskState.Name(ev.status_update.status.state))
        if kind == "task":
            streamed_id = ev.task.id
    report["stream"] = {"kinds": kinds, "output": "".join(chunks), "states": states}

    # Input required: the agent asks, the answer is a message naming the task.
    t = await last_task(blocking, SendMessageRequest(message=message("CLARIFY which one")))
    asked = {"id": t.id, "state": state(t), "question": t.status.message.parts[0].text if t.status.message.parts else ""}
    t2 = await last_task(blocking, SendMessageRequest(message=message("the left one", task_id=t.id, context_id=t.context_id)))
    asked["after_answer"] = state(t2)
    asked["same_task"] = t2.id == t.id
    report["input_required"] = asked

    # Get and list.
    got = await blocking.get_task(GetTaskRequest(id=report["blocking"]["id"]))
    report["get"] = {"state": state(got), "output": output(got)}
    listed = await blocking.list_tasks(ListTasksRequest(page_size=2))
    page2 = await blocking.list_tasks(ListTasksRequest(page_size=2, page_token=listed.next_page_token))
    everything = await blocking.list_tasks(ListTasksRequest())
    report["list"] = {
        "first_page": [x.id for x in listed.tasks],
        "second_page": [x.id for x in page2.tasks],
        "all": [x.id for x in everything.tasks],
        "total": everything.total_size,
        "streamed_listed": streamed_id in [x.id for x in everything.tasks],
        "completed": [x.id for x in (await blocking.list_tasks(ListTasksRequest(status=TaskState.TASK_STATE_COMPLETED))).tasks],
        "in_context": [x.id for x in (await blocking.list_tasks(ListTasksRequest(context_id=report["blocking"]["context"]))).tasks],
    }

    # Cancel a slow task; a second cancel is refused (it has ended).
    slow = SendMessageRequest(message=message("SLOW work"))
    slow.configuration.return_immediately = True
    t = await last_task(blocking, slow)
    # Resubscribe to the running task's stream, then cancel it from the side.
    subscribed = []

    async def follow():
        async for ev in streaming.subscribe(SubscribeToTaskRequest(id=t.id)):
            subscribed.append(ev.WhichOneof("payload"))
            if ev.HasField("status_update"):
                subscribed.append(TaskState.Name(ev.status_update.status.state))

    follower = asyncio.create_task(follow())
    await asyncio.sleep(0.5)
    cancelled = await blocking.cancel_task(CancelTaskRequest(id=t.id))
    await asyncio.wait_for(follower, 30)
    try:
        await blocking.cancel_task(CancelTaskRequest(id=t.id))
        again = "accepted"
    except TaskNotCancelableError:
        again = "not_cancelable"
    report["cancel"] = {"state": state(cancelled), "again": again, "subscribed": subscribed}

    # Refusals: an unknown task; another client's task; a key without the agents scope; no key.
    try:
        await blocking.get_task(GetTaskRequest(id="run_doesnotexist"))
        report["unknown"] = "found"
    except TaskNotFoundError:
        report["unknown"] = "task_not_found"
    _, other = await client_for(base, other_key, streaming=False)
    try:
        await other.get_task(GetTaskRequest(id=report["blocking"]["id"]))
        report["other_client_get"] = "found"
    except TaskNotFoundError:
        report["other_client_get"] = "task_not_found"
    report["other_client_list"] = [x.id for x in (await other.list_tasks(ListTasksRequest())).tasks]
    for name, k in [("relay_only", relay_key), ("no_key", None)]:
        headers = {"Authorization": f"Bearer {k}"} if k else {}
        http = httpx.AsyncClient(headers=headers, timeout=30)
        c = ClientFactory(config(False, http)).create(card)
        try:
            await c.get_task(GetTaskRequest(id=report["blocking"]["id"]))
            report[name] = "allowed"
        except A2AClientError as e:
            report[name] = str(e)
    print(json.dumps(report))


asyncio.run(main())
