#!/usr/bin/env python3
"""Runs schemathesis over the engine's own OpenAPI document, against a real engine.

Steps: build (or take) the `offer-engine` binary, start it on a free loopback port with a
fixed JWT secret, mint an admin token with `offer-engine token`, create real objects through
the API (two games with currencies and items, an asset, a bundle, an experiment, keys, a
session, decisions and a pending approval), then run `st run` twice with every check, side by side:

1. the dashboard run, with the admin token, over every operation but `/v1/sdk/*`, with the
   first game, its asset, a decision and an approval as path parameters (items, bundles and
   keys come from the stateful phase, which creates them and follows the document's links);
2. the SDK run, with an SDK key of the second game, over `/v1/sdk/*`, with a real session.

`schemathesis.toml` beside this script holds the rest of the configuration. The run ends
with the answers each operation got, by status class, from the engine's own metrics.

The two runs use different games so that the first run's kill switch or key revocations
never change what the second run sees. Exits non-zero when either run reports a failure.

Environment:
  OFFER_ENGINE_BIN   the binary to test (default: `cargo build --bin offer-engine` and use
                     the debug binary under $CARGO_TARGET_DIR or ./target)
  ST_MAX_EXAMPLES    examples per operation (default 25)
  ST_EXTRA_ARGS      extra arguments for both `st run` calls (e.g. `--seed 1`)
"""

from __future__ import annotations

import binascii
import importlib.util
import json
import os
import shlex
import socket
import struct
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import uuid
import zlib
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
CONFIG = HERE / "schemathesis.toml"
# Any fixed secret of at least 32 bytes: the run mints its tokens with it.
JWT_SECRET = "schemathesis-fixed-jwt-secret-0123456789abcdef"
STUDIO = "schemathesis-studio"


def log(msg: str) -> None:
    print(f"schemathesis: {msg}", flush=True)


def fail(msg: str) -> None:
    print(f"schemathesis: error: {msg}", file=sys.stderr, flush=True)
    sys.exit(1)


def engine_binary() -> Path:
    given = os.environ.get("OFFER_ENGINE_BIN")
    if given:
        path = Path(given).resolve()
        if not path.is_file():
            fail(f"OFFER_ENGINE_BIN={given} is not a file")
        return path
    log("building the engine (cargo build --bin offer-engine)")
    subprocess.run(["cargo", "build", "--bin", "offer-engine"], cwd=REPO, check=True)
    target = Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
    if not target.is_absolute():
        target = REPO / target
    path = target / "debug" / "offer-engine"
    if not path.is_file():
        fail(f"cargo build did not produce {path}")
    return path


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Api:
    """A minimal JSON client of the engine."""

    def __init__(self, base: str) -> None:
        self.base = base

    def call(
        self,
        method: str,
        path: str,
        token: str,
        body: object | None = None,
        raw: bytes | None = None,
        content_type: str = "application/json",
        expect: tuple[int, ...] = (200, 201, 202, 204),
    ) -> tuple[int, dict, object]:
        data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
        req = urllib.request.Request(self.base + path, data=data, method=method)
        req.add_header("Authorization", f"Bearer {token}")
        if data is not None:
            req.add_header("Content-Type", content_type)
        try:
            with urllib.request.urlopen(req, timeout=10) as resp:
                status, headers, text = resp.status, dict(resp.headers), resp.read()
        except urllib.error.HTTPError as e:
            status, headers, text = e.code, dict(e.headers), e.read()
        if status not in expect:
            fail(f"{method} {path} answered {status}: {text[:500]!r}")
        return status, headers, json.loads(text) if text else None


def png(width: int = 2, height: int = 2) -> bytes:
    """A small valid RGB PNG."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = binascii.crc32(kind + data) & 0xFFFFFFFF
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)

    rows = b"".join(b"\x00" + b"\x80\x40\x20" * width for _ in range(height))
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", ihdr)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


GAME = {
    "genre": "rpg",
    "currencies": [
        {"currency_id": "gems", "kind": "hard"},
        {"currency_id": "gold", "kind": "earned"},
    ],
    "items": [
        {
            "item_id": "gems_100",
            "item_name": "100 Gems",
            "category": "currency",
            "currency_id": "gems",
            "quantity": 100,
            "price_usd": 0.99,
            "fallback_eligible": True,
        },
        {
            "item_id": "dragon_sword",
            "item_name": "Dragon Sword",
            "category": "equipment",
            "price_usd": 9.99,
            "fallback_eligible": True,
        },
        {
            "item_id": "potion",
            "item_name": "Potion",
            "category": "consumable",
            "price_cents": 199,
            "is_consumable": True,
            "fallback_eligible": True,
        },
        {"item_id": "hat", "item_name": "Hat", "category": "cosmetic", "price_usd": 2.99},
    ],
}


def session(session_id: str, player_id: str) -> dict:
    """A session with the features the AI levels need (without them only the shelf serves)."""
    return {
        "session_id": session_id,
        "player_id": player_id,
        "attributes": {"country": "US", "platform": "android"},
    }


def seed_dashboard_game(api: Api, admin: str) -> dict[str, str]:
    """The first game and one real object of every kind its operations name."""
    _, _, game = api.call("POST", "/v1/games", admin, {"name": "Dashboard game", **GAME})
    gid = game["game_id"]
    g = f"/v1/games/{gid}"
    _, _, asset = api.call("POST", f"{g}/assets", admin, raw=png(), content_type="image/png")
    api.call("PATCH", f"{g}/items/hat", admin, {"image": asset["asset_id"]})
    api.call(
        "POST",
        f"{g}/offer-bundles",
        admin,
        {"name": "Starter", "item_ids": ["dragon_sword", "potion"], "price_usd": 7.99},
    )
    api.call(
        "POST",
        f"{g}/experiments",
        admin,
        {"variants": [{"name": "control", "weight": 1}, {"name": "half", "weight": 1, "price_multiplier": 0.5}]},
    )
    _, _, sdk_key = api.call("POST", f"{g}/sdk-keys", admin, {"environment": "sandbox"})
    api.call("POST", f"{g}/authoring-keys", admin)
    # Assisted mode queues the L2 template's candidates for approval; a player outside the
    # holdout asks for a boss_raid offer until one is queued.
    api.call("POST", f"{g}/mode", admin, {"mode": "assisted"})
    key = sdk_key["api_key"]
    offer_id = None
    approval_id = None
    for attempt in range(200):
        sid = str(uuid.uuid4())
        api.call("POST", "/v1/sdk/sessions", key, session(sid, f"player_{attempt}"))
        status, headers, body = api.call(
            "POST",
            "/v1/sdk/offers/next",
            key,
            {"session_id": sid, "trigger_context": {"event_type": "boss_raid"}},
        )
        if offer_id is None:
            offer_id = body["offer_id"] if status == 200 else headers.get("decision-id")
        _, _, pending = api.call("GET", f"{g}/approvals?status=pending", admin)
        if pending["approvals"]:
            approval_id = pending["approvals"][0]["approval_id"]
            break
        time.sleep(0.02)
    if offer_id is None or approval_id is None:
        fail("no decision or approval could be produced for the dashboard game")
    return {
        "GAME_ID": gid,
        "ASSET_ID": asset["asset_id"],
        "OFFER_ID": offer_id,
        "APPROVAL_ID": approval_id,
    }


def seed_sdk_game(api: Api, admin: str) -> dict[str, str]:
    """The second game, its SDK key and an open session."""
    _, _, game = api.call("POST", "/v1/games", admin, {"name": "SDK game", **GAME})
    gid = game["game_id"]
    _, _, key = api.call("POST", f"/v1/games/{gid}/sdk-keys", admin, {"environment": "production"})
    sid = str(uuid.uuid4())
    api.call("POST", "/v1/sdk/sessions", key["api_key"], session(sid, "player_sdk"))
    return {"GAME_ID": gid, "SDK_KEY": key["api_key"], "SESSION_ID": sid}


def st_start(base: str, env: dict[str, str], filters: list[str], report: Path) -> subprocess.Popen:
    """Starts one `st run` in the background, its output going to `report/st.log`."""
    if importlib.util.find_spec("schemathesis") is None:
        fail(f"schemathesis is not installed for {sys.executable}: python3 -m pip install schemathesis")
    args = [
        sys.executable,
        "-m",
        "schemathesis.cli",
        "--config-file",
        str(CONFIG),
        "run",
        f"{base}/v1/openapi.json",
        "--max-examples",
        os.environ.get("ST_MAX_EXAMPLES", "25"),
        "--report",
        "junit",
        "--report-dir",
        str(report),
        *filters,
        *shlex.split(os.environ.get("ST_EXTRA_ARGS", "")),
    ]
    report.mkdir(parents=True, exist_ok=True)
    log(" ".join(shlex.quote(a) for a in args))
    output = open(report / "st.log", "wb")
    return subprocess.Popen(
        args, env={**os.environ, **env}, cwd=report, stdout=output, stderr=subprocess.STDOUT
    )


def st_finish(name: str, run: subprocess.Popen, report: Path) -> int:
    """Waits for one `st run` and prints its output whole, so two runs never interleave."""
    code = run.wait()
    log(f"{name}: exit {code}; its output:")
    sys.stdout.write((report / "st.log").read_text(errors="replace"))
    sys.stdout.flush()
    return code


def reached(base: str) -> None:
    """Prints, per documented operation, how many answers of each status class the runs got
    (from the engine's own metrics), so a log shows whether valid requests got through."""
    with urllib.request.urlopen(f"{base}/v1/openapi.json", timeout=10) as resp:
        doc = json.load(resp)
    documented = {f"{m.upper()} {p}" for p, ops in doc["paths"].items() for m in ops}
    with urllib.request.urlopen(f"{base}/metrics", timeout=10) as resp:
        text = resp.read().decode()
    counts: dict[str, dict[str, int]] = {}
    for line in text.splitlines():
        if not line.startswith("http_requests_total{"):
            continue
        labels, _, value = line.partition("} ")
        fields = dict(part.split("=", 1) for part in labels[len("http_requests_total{") :].split(","))
        route = f"{fields['method'].strip(chr(34))} {fields['route'].strip(chr(34))}"
        status = fields["status"].strip('"')[0] + "xx"
        by_class = counts.setdefault(route, {})
        by_class[status] = by_class.get(status, 0) + int(float(value))
    log("answers per operation (from /metrics):")
    for route in sorted(documented & counts.keys()):
        summary = ", ".join(f"{k}: {v}" for k, v in sorted(counts[route].items()))
        print(f"  {route:<60} {summary}", flush=True)


def main() -> int:
    binary = engine_binary()
    work = Path(tempfile.mkdtemp(prefix="schemathesis-"))
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    # The engine here is a debug build on a shared CI machine, under schemathesis's bursts of
    # writes: a SQLite write queued behind them once took more than the default second and was
    # answered 503 `unavailable`, which is the documented answer to a store that does not
    # answer in time (tested on its own), not a mistake of the contract checked here. So the
    # store gets the longest the engine allows, two seconds.
    env = {
        **os.environ,
        "OFFER__AUTH__JWT_SECRET": JWT_SECRET,
        "OFFER__STORE__TIMEOUT_MS": "2000",
        "RUST_LOG": "warn",
    }
    engine_log = work / "engine.log"
    log(f"starting {binary} on {base} (log: {engine_log})")
    with open(engine_log, "wb") as out:
        engine = subprocess.Popen(
            [str(binary), "--bind", f"127.0.0.1:{port}"], cwd=work, env=env, stdout=out, stderr=out
        )
    try:
        deadline = time.monotonic() + 30
        while True:
            if engine.poll() is not None:
                fail(f"the engine exited with {engine.returncode}:\n{engine_log.read_text()}")
            try:
                with urllib.request.urlopen(f"{base}/healthz", timeout=1):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    fail("the engine did not answer /healthz within 30 s")
                time.sleep(0.1)
        admin = subprocess.run(
            [str(binary), "token", "--studio", STUDIO, "--role", "admin", "--ttl", "1h"],
            cwd=work,
            env=env,
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
        api = Api(base)
        dashboard = seed_dashboard_game(api, admin)
        sdk = seed_sdk_game(api, admin)
        log(f"dashboard game: {dashboard}")
        log(f"SDK game: {sdk['GAME_ID']}, session {sdk['SESSION_ID']}")
        # The two runs go side by side: each is one Python process, mostly busy generating
        # requests, and they touch different games, so running them at once halves the wait on
        # a machine with two cores without changing what either sees.
        log("run 1: dashboard operations, admin token; run 2: SDK operations, SDK key")
        # Both runs get every variable the configuration names; each selects its operations.
        dashboard_run = st_start(
            base,
            {"ST_BEARER": admin, "SESSION_ID": sdk["SESSION_ID"], **dashboard},
            ["--exclude-path-regex", "^/v1/sdk/"],
            work / "dashboard",
        )
        sdk_run = st_start(
            base,
            {**dashboard, "ST_BEARER": sdk["SDK_KEY"], "GAME_ID": sdk["GAME_ID"], "SESSION_ID": sdk["SESSION_ID"]},
            ["--include-path-regex", "^/v1/sdk/"],
            work / "sdk",
        )
        failed = st_finish("run 1 (dashboard)", dashboard_run, work / "dashboard") != 0
        failed |= st_finish("run 2 (SDK)", sdk_run, work / "sdk") != 0
        if engine.poll() is not None:
            fail(f"the engine died during the run:\n{engine_log.read_text()[-4000:]}")
        reached(base)
        log(f"reports and engine log in {work}")
        return 1 if failed else 0
    finally:
        engine.terminate()
        try:
            engine.wait(timeout=10)
        except subprocess.TimeoutExpired:
            engine.kill()


if __name__ == "__main__":
    sys.exit(main())
