"""A scripted OpenAI-compatible chat-completions server on 127.0.0.1 (tests only).

``FakeChatServer(script)`` listens on a free loopback port in a background thread.  For each
POST to ``/v1/chat/completions`` it calls ``script(body, n)`` (``n``: 0-based count of requests
so far) which returns ``(status, reply)``: ``reply`` is the assistant text for status 200, or
raw bytes sent as the body (e.g. malformed JSON), and may be wrapped as ``Slow(seconds, reply)``
to delay the answer.  Every request body is kept in ``requests``; ``max_in_flight`` is the
largest number of requests being answered at once.
"""
from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable


@dataclass
class Slow:
    seconds: float
    reply: Any


@dataclass
class WithHeaders:
    """A reply sent with extra response headers (e.g. ``Retry-After`` as an HTTP-date)."""
    headers: dict
    reply: Any


def message_body(message: dict, choices: bool = True) -> bytes:
    """A 200 body whose ``choices[0].message`` is ``message`` (or no choices at all)."""
    return json.dumps({"id": "x", "object": "chat.completion", "choices": [
        {"index": 0, "message": {"role": "assistant", **message}, "finish_reason": "stop"}] if choices else [],
        "usage": {"prompt_tokens": 11, "completion_tokens": 1, "total_tokens": 12}}).encode()


def completion(text: str) -> bytes:
    return json.dumps({"id": "x", "object": "chat.completion", "choices": [
        {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 11, "completion_tokens": len(text.split()), "total_tokens": 11}}).encode()


class FakeChatServer:
    def __init__(self, script: Callable[[dict, int], tuple[int, Any]]) -> None:
        self.script = script
        self.requests: list[dict] = []
        self.lock = threading.Lock()
        self.in_flight = self.max_in_flight = 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):  # quiet
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with outer.lock:
                    n = len(outer.requests)
                    outer.requests.append(body)
                    outer.in_flight += 1
                    outer.max_in_flight = max(outer.max_in_flight, outer.in_flight)
                status, reply = outer.script(body, n)
                extra = {}
                if isinstance(reply, WithHeaders):
                    extra, reply = reply.headers, reply.reply
                if isinstance(reply, Slow):
                    time.sleep(reply.seconds)
                    reply = reply.reply
                with outer.lock:
                    outer.in_flight -= 1
                data = completion(reply) if status == 200 and isinstance(reply, str) else (
                    reply if isinstance(reply, bytes) else json.dumps({"error": {"message": str(reply)}}).encode())
                try:
                    self.send_response(status)
                    if status == 429 and "Retry-After" not in extra:
                        self.send_header("Retry-After", "0")
                    for k, v in extra.items():
                        self.send_header(k, v)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> "FakeChatServer":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
