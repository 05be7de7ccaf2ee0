"""A fake Anthropic Messages API for the Claude Code check of checks.py.

Claude Code (the real CLI, pinned in package.json) is pointed at it with
ANTHROPIC_BASE_URL. It records the body of every POST /v1/messages and answers
with one short text turn ("ok", end_turn), streamed as server-sent events when
the request asks for `stream: true`, as one JSON message otherwise.
POST /v1/messages/count_tokens gets a small count; any other path a 404 in the
API's error shape. Every request is recorded (method and path), so a check can
say what else the CLI asked for.

It is also the CLI's HTTP(S) proxy: a CONNECT (or an absolute-URL request) is
an attempt to reach some other host, which is recorded and refused, so a check
can show that Claude Code needs nothing but this server.

Usage from checks.py: `with FakeAnthropic() as api: ... api.url ... api.next_message(timeout)`.
Standalone (to watch what a CLI sends): python3 fake_anthropic.py [PORT].
"""

import json
import queue
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODEL = "claude-fake-1"


def sse(event, data):
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


def message(model, text):
    return {"id": "msg_fake", "type": "message", "role": "assistant", "model": model,
            "content": [{"type": "text", "text": text}], "stop_reason": "end_turn",
            "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1}}


def stream(model, text):
    """The events of one streamed text turn, in the order the API sends them."""
    start = message(model, text) | {"content": [], "stop_reason": None}
    return b"".join([
        sse("message_start", {"type": "message_start", "message": start}),
        sse("content_block_start", {"type": "content_block_start", "index": 0,
                                    "content_block": {"type": "text", "text": ""}}),
        sse("content_block_delta", {"type": "content_block_delta", "index": 0,
                                    "delta": {"type": "text_delta", "text": text}}),
        sse("content_block_stop", {"type": "content_block_stop", "index": 0}),
        sse("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                              "usage": {"output_tokens": 1}}),
        sse("message_stop", {"type": "message_stop"}),
    ])


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fake-anthropic/1"

    def log_message(self, format, *args):  # noqa: A002 - the base class's name
        pass

    def body(self):
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def send(self, status, payload, content_type="application/json"):
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("request-id", "req_fake")
        self.end_headers()
        self.wfile.write(data)

    def not_found(self):
        self.send(404, {"type": "error", "error": {"type": "not_found_error", "message": f"fake API: no {self.path}"}})

    def elsewhere(self):
        """A request meant for another host (through us as a proxy): recorded, refused."""
        self.server.api.outside.append(f"{self.command} {self.path}")
        self.send(403, b"the interop check allows no other host\n", "text/plain")
        self.close_connection = True

    def do_CONNECT(self):  # noqa: N802 - http.server's naming
        self.elsewhere()

    def do_GET(self):  # noqa: N802
        if not self.path.startswith("/"):
            return self.elsewhere()
        self.server.api.requests.append(f"GET {self.path}")
        self.not_found()

    def do_HEAD(self):  # noqa: N802
        self.do_GET()

    def do_POST(self):  # noqa: N802
        if not self.path.startswith("/"):
            return self.elsewhere()
        raw = self.body()
        self.server.api.requests.append(f"POST {self.path}")
        path = self.path.split("?", 1)[0]
        if path == "/v1/messages/count_tokens":
            return self.send(200, {"input_tokens": 1})
        if path != "/v1/messages":
            return self.not_found()
        try:
            request = json.loads(raw)
        except ValueError:
            return self.send(400, {"type": "error", "error": {"type": "invalid_request_error", "message": "not JSON"}})
        self.server.api.messages.put(request)
        model = request.get("model") or MODEL
        if request.get("stream"):
            self.send(200, stream(model, "ok"), "text/event-stream")
        else:
            self.send(200, message(model, "ok"))


class FakeAnthropic:
    """The server on a free loopback port, in a thread, for a `with` block."""

    def __init__(self, port=0):
        self.messages = queue.Queue()  # every POST /v1/messages body, parsed, in order
        self.requests = []  # "METHOD /path" of every request to this API
        self.outside = []  # what was asked of other hosts through the proxy
        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.httpd.daemon_threads = True
        self.httpd.api = self
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def __enter__(self):
        threading.Thread(target=self.httpd.serve_forever, name="fake-anthropic", daemon=True).start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()

    def next_message(self, timeout):
        """The next /v1/messages body; queue.Empty once `timeout` seconds pass without one."""
        return self.messages.get(timeout=timeout)


if __name__ == "__main__":
    with FakeAnthropic(int(sys.argv[1]) if len(sys.argv) > 1 else 0) as api:
        print(f"listening on {api.url}", flush=True)
        while True:
            body = api.next_message(timeout=None)
            print(json.dumps(body, indent=1)[:4000], flush=True)
            print(f"requests so far: {api.requests}; other hosts: {api.outside}", flush=True)
