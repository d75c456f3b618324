"""A real engine for the end-to-end tests: the `offer-engine` binary of this repository,
started on a free loopback port with the embedded store in a temporary folder and a JWT secret
of its own, so the tests mint dashboard tokens with `offer-engine token`.

The binary is `OFFER_ENGINE_BIN`, else `target/debug/offer-engine` at the repository's root
(`cargo build --bin offer-engine` makes it; `cargo test --workspace` does too). A missing binary
fails the tests with that message: nothing is skipped.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

TOOL_DIR = Path(__file__).resolve().parents[1]
REPO_ROOT = TOOL_DIR.parents[1]


def engine_binary() -> Path:
    given = os.environ.get("OFFER_ENGINE_BIN")
    path = Path(given) if given else REPO_ROOT / "target" / "debug" / "offer-engine"
    if not path.is_file() or not os.access(path, os.X_OK):
        raise AssertionError(
            f"the engine binary is missing: {path} is not an executable file. Build it with "
            "`cargo build --bin offer-engine` at the repository's root, or point "
            "OFFER_ENGINE_BIN at one.")
    return path


class Engine:
    def __init__(self):
        self.binary = engine_binary()
        self.dir = tempfile.TemporaryDirectory(prefix="offer-author-e2e-")
        self.env = dict(os.environ)
        for k in list(self.env):
            if k.startswith("OFFER__"):
                del self.env[k]
        self.env.update({
            "OFFER__AUTH__JWT_SECRET": secrets.token_hex(32),
            "OFFER__STORE__PATH": os.path.join(self.dir.name, "engine.db"),
            "OFFER__STORE__SYNC": "normal",
            "OFFER__SERVER__SHARDS": "1",
            "OFFER__DEVICE__POLL_INTERVAL_S": "1",
            "RUST_LOG": "warn",
        })
        self.log_path = os.path.join(self.dir.name, "engine.log")
        self.log = open(self.log_path, "wb")
        # The working folder is the temporary one, so no `.env` of a developer's is read.
        self.proc = subprocess.Popen(
            [str(self.binary), "serve", "--bind", "127.0.0.1:0"], cwd=self.dir.name,
            env=self.env, stdout=subprocess.PIPE, stderr=self.log)
        self.url = self._wait_listening(timeout=60)
        threading.Thread(target=self._drain, daemon=True).start()

    def _wait_listening(self, timeout):
        found = {}

        def read():
            for raw in self.proc.stdout:
                m = re.search(rb"listening on (http://[0-9.]+:\d+)", raw)
                if m:
                    found["url"] = m.group(1).decode()
                    return

        t = threading.Thread(target=read, daemon=True)
        t.start()
        t.join(timeout)
        if "url" not in found:
            self.stop()
            raise AssertionError(f"the engine did not start within {timeout} s; its log:\n"
                                 + Path(self.log_path).read_text(errors="replace")[-3000:])
        return found["url"]

    def _drain(self):
        for _ in self.proc.stdout:
            pass

    def token(self, role="admin", studio="studio-e2e", sub="operator") -> str:
        out = subprocess.run([str(self.binary), "token", "--studio", studio, "--role", role,
                              "--sub", sub, "--ttl", "1h"], cwd=self.dir.name, env=self.env,
                             capture_output=True, check=True, timeout=60)
        return out.stdout.decode().strip()

    def api(self, method, path, body=None, token=None):
        """``(status, parsed body or None)``; error answers are returned, not raised."""
        headers = {"Accept": "application/json"}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        if token:
            headers["Authorization"] = f"Bearer {token}"
        req = urllib.request.Request(self.url + path, data=data, headers=headers, method=method)
        try:
            with urllib.request.urlopen(req, timeout=30) as resp:
                raw = resp.read()
                return resp.status, (json.loads(raw) if raw else None)
        except urllib.error.HTTPError as e:
            raw = e.read()
            return e.code, (json.loads(raw) if raw else None)

    def upload(self, path, data: bytes, content_type: str, token: str):
        """A raw body (an image) posted; ``(status, parsed body)``."""
        req = urllib.request.Request(self.url + path, data=data, method="POST", headers={
            "Content-Type": content_type, "Authorization": f"Bearer {token}"})
        try:
            with urllib.request.urlopen(req, timeout=30) as resp:
                return resp.status, json.loads(resp.read())
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read() or b"null")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc.stdout:
            self.proc.stdout.close()
        self.log.close()
        self.dir.cleanup()


def run_tool(args, env, stdin=None, timeout=60):
    """Runs `python -m offer_author ARGS` as a user would; returns the completed process."""
    return subprocess.run([sys.executable, "-m", "offer_author", *args], cwd=TOOL_DIR, env=env,
                          input=stdin, capture_output=True, text=True, timeout=timeout)


def start_tool(args, env):
    return subprocess.Popen([sys.executable, "-m", "offer_author", *args], cwd=TOOL_DIR,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def wait_for(pred, timeout=30.0, step=0.1):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = pred()
        if value:
            return value
        time.sleep(step)
    raise AssertionError("timed out")
