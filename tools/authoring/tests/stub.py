"""A scripted HTTP server on a free loopback port: each request gets the next answer queued
for its method and path, and every request is recorded (method, path, headers, body)."""

import json
import threading
from collections import defaultdict, deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Stub:
    def __init__(self):
        self.answers = defaultdict(deque)
        self.requests = []
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _serve(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                stub.requests.append((self.command, self.path, dict(self.headers), body))
                queue = stub.answers[(self.command, self.path)]
                if not queue:
                    status, payload, headers = 404, {"error": {"code": "not_found",
                                                               "message": "not found",
                                                               "details": {}}}, {}
                else:
                    status, payload, headers = queue[0] if len(queue) == 1 else queue.popleft()
                raw = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Length", str(len(raw)))
                self.send_header("Content-Type", "application/octet-stream"
                                 if isinstance(payload, bytes) else "application/json")
                for k, v in headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(raw)

            do_GET = do_POST = do_DELETE = _serve

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,),
                                       daemon=True)
        self.thread.start()

    def answer(self, method, path, status, payload, headers=None):
        """Queues an answer; the last one queued for a path repeats."""
        self.answers[(method, path)].append((status, payload, headers or {}))

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def error(code, message="", details=None):
    return {"error": {"code": code, "message": message or code, "details": details or {}}}
