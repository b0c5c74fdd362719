#!/usr/bin/env python3
"""Scripted fake of an OpenAI-compatible model server, for real-Hermes tests.

Standard library only; listens on 127.0.0.1 only.

    python3 fake_llm.py PORT      # PORT 0: pick a free port, print "PORT <n>" first

Hermes (provider ``custom``) talks to it like to any model server. The reply
depends on the conversation in the request:

* the turn's user message is a hermes-bridge wake (the text the hermes-bridge
  plugin makes of a relay wake: ``[hermes-bridge] Message de <from>
  (request_id=<id>, conversation_id=<id>) : <message>`` and a line telling the
  model to call ``reply``) and the request advertises ``mcp__<server>__reply``
  -> a tool call of that ``reply`` with {"request_id": <id>, "answer":
  "bot answer: <message>"}; once it has been called, the tool-result rule below
  ends the turn. Two variants, keyed on the wake's message:
  - ``RELAY_BUSY``: before the reply, FAKE_LLM_RELAY_STEPS (default 2) calls of
    ``mcp__<server>__list_agents``, and every answer of the turn waits
    FAKE_LLM_RELAY_DELAY_S (default 6) seconds first: the turn keeps working
    (tool calls, so the plugin's hooks fire and send heartbeats) for longer
    than a short relay timeout;
  - ``RELAY_STUCK``: the reply call waits FAKE_LLM_RELAY_STUCK_S (default 300)
    seconds first: an agent busy on one long model call;
* the last message is a tool result   -> text "DONE after tool: <result head>"
  (the first 120 characters, whitespace collapsed; for an MCP result, of the
  result inside Hermes's <untrusted_tool_result> wrapper)
* the last user message contains
  - ``TOOLCALL``   -> tool call ``terminal`` {"command": "echo hello-from-tool"}
  - ``APPROVE``    -> tool call ``terminal`` {"command": "rm -r <victim>"}, which
                      Hermes's dangerous-command approval intercepts
                      (victim: env FAKE_LLM_VICTIM, default ./victim)
  - ``MCPCALL``    -> tool call of the first advertised ``mcp__<server>__<tool>``
                      with <tool> = env FAKE_LLM_MCP_TOOL (default bridge_echo)
  - ``MCPBLOCKED`` -> the same with <tool> = env FAKE_LLM_MCP_BLOCKED_TOOL
  - ``SLOW``       -> 60 words, one every 0.5 s
* anything else -> text "FAKE ANSWER: <last user message>"

MCPCALL and MCPBLOCKED take their arguments from env FAKE_LLM_MCP_ARGS (a JSON
object, default {"text": "ping"}); MCPBLOCKED takes env FAKE_LLM_MCP_BLOCKED_ARGS
instead when that is set, so the two tools can get different arguments. A tool
is only called when the request advertises it; otherwise the plain answer is
given. ``stream: true`` answers with ``chat.completion.chunk`` events (tool
calls as ``delta.tool_calls``), ``stream: false`` with one ``chat.completion``.

A delayed answer is delayed before anything is sent (no headers, no stream).

``GET /v1/models`` lists the model with a ``context_length``; every other probe
(``POST /api/show``, ``GET /v1/models/<id>``, ...) gets 404. When env
FAKE_LLM_LOG is set, every request is appended to it as one JSON line, on
arrival (before any delay).
"""

import json
import os
import re
import shlex
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODEL_ID = "fake-model"
CONTEXT_LENGTH = 131072
SLOW_WORDS = 60
SLOW_INTERVAL_S = 0.5
RESULT_HEAD_CHARS = 120
USAGE = {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}


class Settings:
    """Behaviour knobs read once from the environment."""

    def __init__(self, env):
        self.victim = os.path.abspath(env.get("FAKE_LLM_VICTIM") or "victim")
        self.mcp_tool = env.get("FAKE_LLM_MCP_TOOL") or "bridge_echo"
        self.mcp_blocked_tool = env.get("FAKE_LLM_MCP_BLOCKED_TOOL") or ""
        self.mcp_args = json_object(env, "FAKE_LLM_MCP_ARGS", '{"text":"ping"}')
        blocked_args = json_object(env, "FAKE_LLM_MCP_BLOCKED_ARGS", None)
        self.mcp_blocked_args = self.mcp_args if blocked_args is None else blocked_args
        self.log_path = env.get("FAKE_LLM_LOG") or None
        self.relay_steps = int(env.get("FAKE_LLM_RELAY_STEPS") or 2)
        self.relay_delay_s = float(env.get("FAKE_LLM_RELAY_DELAY_S") or 6)
        self.relay_stuck_s = float(env.get("FAKE_LLM_RELAY_STUCK_S") or 300)


def json_object(env, name, default):
    """The JSON object in env ``name`` (``default`` when unset or empty)."""
    raw = env.get(name) or default
    if raw is None:
        return None
    value = json.loads(raw)
    if not isinstance(value, dict):
        raise SystemExit("%s must be a JSON object" % name)
    return value


# --- deciding the reply ------------------------------------------------------


class Text:
    delay_s = 0.0  # wait before answering at all

    def __init__(self, text, pause_s=0.0, words=False):
        self.text = text
        self.pause_s = pause_s  # delay between streamed pieces
        self.words = words  # stream word by word instead of in two halves


class ToolCall:
    def __init__(self, name, arguments, delay_s=0.0):
        self.name = name
        self.arguments = arguments
        self.delay_s = delay_s  # wait before answering at all


def content_text(content):
    """The plain text of a message's content (a string or a list of parts)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                parts.append(part["text"])
            elif isinstance(part, str):
                parts.append(part)
        return " ".join(parts)
    return str(content)


# Hermes wraps MCP tool results as <untrusted_tool_result source=...>, a preamble
# paragraph, a blank line, the result, </untrusted_tool_result>.
UNTRUSTED_RE = re.compile(r"^\s*<untrusted_tool_result[^>]*>.*?\n\s*\n(.*?)\s*</untrusted_tool_result>\s*$", re.DOTALL)


def unwrap_untrusted(text):
    """The result inside Hermes's untrusted-result wrapper, or the text as it is."""
    m = UNTRUSTED_RE.match(text)
    return m.group(1) if m else text


def advertised_tools(body):
    """Tool names in the request, in the order they were listed."""
    names = []
    for tool in body.get("tools") or []:
        if not isinstance(tool, dict):
            continue
        fn = tool.get("function") if isinstance(tool.get("function"), dict) else tool
        name = fn.get("name")
        if isinstance(name, str):
            names.append(name)
    return names


def find_mcp_tool(tools, suffix):
    if not suffix:
        return None
    for name in tools:
        if name.startswith("mcp__") and name.endswith("__" + suffix):
            return name
    return None


# The wake text of the hermes-bridge plugin (adapter/wake.py, build_wake_text); the
# request_id pattern is the plugin's own (extract_request_id).
WAKE_RE = re.compile(
    r"\[hermes-bridge\] Message de (?P<sender>\S+) \(request_id=(?P<request_id>[^,\s)]+), "
    r"conversation_id=(?P<conversation_id>[^,\s)]+)\) : (?P<message>.*)\nRéponds avec le tool reply\(",
    re.DOTALL,
)
RELAY_ANSWER_PREFIX = "bot answer: "


def called_tools(messages):
    """Names of the tools the assistant called in ``messages``, in order."""
    names = []
    for message in messages:
        if message.get("role") != "assistant":
            continue
        for call in message.get("tool_calls") or []:
            fn = call.get("function") if isinstance(call, dict) else None
            if isinstance(fn, dict) and isinstance(fn.get("name"), str):
                names.append(fn["name"])
    return names


def relay_turn(wake, turn, tools, settings):
    """The next step of a turn answering a relay wake, or None (then the other rules)."""
    reply = find_mcp_tool(tools, "reply")
    if not reply:
        return None
    called = called_tools(turn)
    if reply in called:
        return None  # replied: the tool-result rule ends the turn
    message = wake.group("message")
    if "RELAY_BUSY" in message:
        step = find_mcp_tool(tools, "list_agents")
        delay = settings.relay_delay_s
        if step and called.count(step) < settings.relay_steps:
            return ToolCall(step, {}, delay)
    elif "RELAY_STUCK" in message:
        delay = settings.relay_stuck_s
    else:
        delay = 0.0
    answer = {"request_id": wake.group("request_id"), "answer": RELAY_ANSWER_PREFIX + message}
    return ToolCall(reply, answer, delay)


def decide(body, settings):
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    user_idx = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=None)
    if user_idx is not None:
        wake = WAKE_RE.search(content_text(messages[user_idx].get("content")))
        if wake:
            step = relay_turn(wake, messages[user_idx + 1 :], advertised_tools(body), settings)
            if step is not None:
                return step
    if messages and messages[-1].get("role") == "tool":
        result = unwrap_untrusted(content_text(messages[-1].get("content")))
        result = " ".join(result.split())
        return Text("DONE after tool: " + result[:RESULT_HEAD_CHARS])

    user = ""
    for message in reversed(messages):
        if message.get("role") == "user":
            user = content_text(message.get("content"))
            break
    tools = advertised_tools(body)

    if "TOOLCALL" in user and "terminal" in tools:
        return ToolCall("terminal", {"command": "echo hello-from-tool"})
    if "APPROVE" in user and "terminal" in tools:
        return ToolCall("terminal", {"command": "rm -r " + shlex.quote(settings.victim)})
    # MCPBLOCKED before MCPCALL: neither word contains the other, but keep the
    # more specific trigger first anyway.
    if "MCPBLOCKED" in user:
        name = find_mcp_tool(tools, settings.mcp_blocked_tool)
        if name:
            return ToolCall(name, settings.mcp_blocked_args)
    if "MCPCALL" in user:
        name = find_mcp_tool(tools, settings.mcp_tool)
        if name:
            return ToolCall(name, settings.mcp_args)
    if "SLOW" in user:
        words = " ".join("w%d" % i for i in range(SLOW_WORDS))
        return Text(words, pause_s=SLOW_INTERVAL_S, words=True)
    return Text("FAKE ANSWER: " + user[-200:])


# --- HTTP ----------------------------------------------------------------------


class FakeModelServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, port, settings):
        super().__init__(("127.0.0.1", port), Handler)
        self.settings = settings
        self.log_lock = threading.Lock()

    def log_request_json(self, record):
        if not self.settings.log_path:
            return
        line = json.dumps(record, ensure_ascii=False) + "\n"
        with self.log_lock:
            with open(self.settings.log_path, "a", encoding="utf-8") as f:
                f.write(line)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fake-llm/1"

    def log_message(self, fmt, *args):  # keep stderr quiet; FAKE_LLM_LOG has it all
        pass

    def route(self):
        return self.path.split("?", 1)[0].rstrip("/")

    def send_json(self, status, obj):
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def not_found(self):
        self.send_json(404, {"error": {"message": "not found: " + self.route(), "type": "not_found"}})

    def do_GET(self):
        self.server.log_request_json({"t": time.time(), "method": "GET", "path": self.path})
        if self.route() in ("/v1/models", "/models"):
            model = {
                "id": MODEL_ID,
                "object": "model",
                "created": 0,
                "owned_by": "fake-llm",
                "context_length": CONTEXT_LENGTH,
            }
            return self.send_json(200, {"object": "list", "data": [model]})
        return self.not_found()

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length > 0 else b""
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = None
        self.server.log_request_json({"t": time.time(), "method": "POST", "path": self.path, "body": body})
        if self.route() not in ("/v1/chat/completions", "/chat/completions"):
            return self.not_found()
        if not isinstance(body, dict):
            return self.send_json(400, {"error": {"message": "body is not a JSON object", "type": "invalid_request"}})
        reply = decide(body, self.server.settings)
        if reply.delay_s:
            time.sleep(reply.delay_s)
        if body.get("stream"):
            self.stream(reply)
        else:
            self.complete(reply)

    def complete(self, reply):
        message = {"role": "assistant", "content": None}
        if isinstance(reply, ToolCall):
            message["tool_calls"] = [
                {
                    "id": new_id("call_"),
                    "type": "function",
                    "function": {"name": reply.name, "arguments": json.dumps(reply.arguments)},
                }
            ]
            finish = "tool_calls"
        else:
            if reply.pause_s:
                time.sleep(reply.pause_s * SLOW_WORDS)
            message["content"] = reply.text
            finish = "stop"
        self.send_json(
            200,
            {
                "id": new_id("chatcmpl-"),
                "object": "chat.completion",
                "created": int(time.time()),
                "model": MODEL_ID,
                "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                "usage": USAGE,
            },
        )

    def stream(self, reply):
        completion_id = new_id("chatcmpl-")
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True

        def event(delta, finish=None, usage=False):
            chunk = {
                "id": completion_id,
                "object": "chat.completion.chunk",
                "created": int(time.time()),
                "model": MODEL_ID,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            }
            if usage:
                chunk["usage"] = USAGE
            self.wfile.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
            self.wfile.flush()

        try:
            event({"role": "assistant", "content": ""})
            if isinstance(reply, ToolCall):
                call_id = new_id("call_")
                event(
                    {
                        "tool_calls": [
                            {
                                "index": 0,
                                "id": call_id,
                                "type": "function",
                                "function": {"name": reply.name, "arguments": ""},
                            }
                        ]
                    }
                )
                args = json.dumps(reply.arguments)
                middle = len(args) // 2
                for piece in (args[:middle], args[middle:]):
                    event({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]})
                event({}, "tool_calls", usage=True)
            else:
                if reply.words:
                    pieces = [w + " " for w in reply.text.split(" ")]
                else:
                    middle = len(reply.text) // 2
                    pieces = [p for p in (reply.text[:middle], reply.text[middle:]) if p]
                for piece in pieces:
                    event({"content": piece})
                    if reply.pause_s:
                        time.sleep(reply.pause_s)
                event({}, "stop", usage=True)
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client went away (a stopped run): nothing more to send


def new_id(prefix):
    return prefix + uuid.uuid4().hex[:16]


def main(argv):
    if len(argv) != 2:
        sys.stderr.write("usage: fake_llm.py PORT   (0 = pick a free port)\n")
        return 2
    settings = Settings(os.environ)
    server = FakeModelServer(int(argv[1]), settings)
    port = server.server_address[1]
    if int(argv[1]) == 0:
        sys.stdout.write("PORT %d\n" % port)
        sys.stdout.flush()
    sys.stderr.write("fake_llm: listening on 127.0.0.1:%d\n" % port)
    sys.stderr.flush()
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
