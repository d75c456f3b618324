"""The `offer-author` command line.

Exit codes: 0 done; 1 the command ran and the answer is no (an invalid page, a key found in an
export, a failed preview, a denied sign-in); 2 a usage error (bad arguments, unreadable
input); 3 a credential problem (not signed in, key expired or revoked: sign in again); 4 the
engine could not be reached or answered with an error.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from urllib.parse import quote

from offer_author import __version__, config, export, png, signin
from offer_author.client import (DEFAULT_BASE_URL, ApiError, Client, EngineUnreachable,
                                 explain, is_credential_problem, is_refusal)
from offer_author.keys import check_authoring_key, key_prefix
from offer_author.secret_scan import scan

EXIT_OK, EXIT_NO, EXIT_USAGE, EXIT_CREDENTIALS, EXIT_ENGINE = 0, 1, 2, 3, 4


class Fail(Exception):
    def __init__(self, message: str, code: int):
        super().__init__(message)
        self.code = code


def _out(line: str = "") -> None:
    print(line, flush=True)


def _err(line: str) -> None:
    print(f"offer-author: {line}", file=sys.stderr, flush=True)


# --- shared plumbing -------------------------------------------------------------------------


def _base_url(args) -> str:
    return args.base_url or os.environ.get("OFFER_BASE_URL") or DEFAULT_BASE_URL


def _credentials() -> dict:
    try:
        record = config.load_credentials()
    except config.CredentialsError as e:
        raise Fail(str(e), EXIT_CREDENTIALS)
    if record is None:
        raise Fail("not signed in: run `offer-author login` (device sign-in) or "
                   "`offer-author login --key -` (paste a key from the dashboard)",
                   EXIT_CREDENTIALS)
    if config.loose_mode():
        _err(f"warning: {config.credentials_path()} can be read by other users; "
             "`chmod 600` it")
    return record


def _authed(args) -> tuple[Client, str]:
    """A client with the stored key, and the game: --game, else OFFER_GAME, else the game
    the key was stored for."""
    record = _credentials()
    game = args.game or os.environ.get("OFFER_GAME") or record.get("game_id")
    if not game:
        raise Fail("which game? pass --game GAME_ID (or set OFFER_GAME)", EXIT_USAGE)
    base = _base_url(args) if (args.base_url or os.environ.get("OFFER_BASE_URL")) \
        else record.get("base_url") or DEFAULT_BASE_URL
    return Client(base, record["authoring_key"], timeout=args.timeout), game


def _api_fail(e: ApiError) -> Fail:
    if is_credential_problem(e):
        return Fail(explain(e), EXIT_CREDENTIALS)
    return Fail(explain(e), EXIT_NO if is_refusal(e) else EXIT_ENGINE)


RUN_HEADER = "X-Authoring-Run"


def _run_headers(args) -> dict:
    """``X-Authoring-Run`` when the call belongs to an authoring run (--run or OFFER_RUN)."""
    run = getattr(args, "run", None) or os.environ.get("OFFER_RUN")
    return {RUN_HEADER: run} if run else {}


def _read_text(path: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise Fail(f"cannot read {path}: {e}", EXIT_USAGE)


def _bindings(value: str) -> dict:
    text = _read_text(value[1:]) if value.startswith("@") else value
    try:
        doc = json.loads(text)
    except ValueError as e:
        raise Fail(f"--bindings is not JSON: {e}", EXIT_USAGE)
    if not isinstance(doc, dict):
        raise Fail('--bindings must be a JSON object, e.g. {"items": ["gems_100"]}', EXIT_USAGE)
    return doc


def _page(args) -> tuple[str, dict]:
    """The template and bindings, scanned here first so that a key never leaves the machine."""
    template = _read_text(args.file)
    bindings = _bindings(args.bindings)
    found = [(args.file, h) for h in scan(template)]
    found += [("--bindings", h) for h in scan(json.dumps(bindings))]
    if found:
        for where, hit in found:
            _err(f"secret_pattern_found: {where}:{hit.line}: something shaped like {hit.kind} "
                 f"(`{hit.prefix}_{hit.marker}_...`); remove it (nothing was sent)")
        raise Fail("refused: the page holds a service key", EXIT_NO)
    return template, bindings


def _games_path(game: str, *rest: str) -> str:
    """``/v1/games/{game}/custom-pages/...``, every segment escaped (ids come from users)."""
    segments = [quote(game, safe=""), "custom-pages", *(quote(r, safe="") for r in rest)]
    return "/v1/games/" + "/".join(segments)


# --- commands --------------------------------------------------------------------------------


def cmd_login(args) -> int:
    base = _base_url(args)
    if args.key is not None:
        key = sys.stdin.readline().strip() if args.key == "-" else args.key.strip()
        why = check_authoring_key(key)
        if why:
            raise Fail(f"refused: {why}", EXIT_USAGE)
        record = {"authoring_key": key, "base_url": base, "source": "pasted",
                  "saved_at": _now()}
        if args.game:
            record["game_id"] = args.game
        path = config.save_credentials(record)
        _out(f"Stored the authoring key {key_prefix(key)} in {path} (mode 0600).")
        if not args.game:
            _out("Pass --game GAME_ID (the key's game) to the commands, or log in again with "
                 "--game to keep it.")
        return EXIT_OK
    client = Client(base, timeout=args.timeout)
    started = signin.start(client)
    _out("To sign in, open this page in a browser and enter the code:")
    _out(f"  {started['verification_uri']}")
    _out(f"  code: {started['user_code']}")
    _out(f"Waiting for approval (the code is valid for {int(started['expires_in']) // 60} "
         f"min; Ctrl-C to stop)...")
    try:
        issued = signin.poll(client, started)
    except signin.SignInFailed as e:
        raise Fail(str(e), EXIT_NO)
    key = issued.get("authoring_key", "")
    why = check_authoring_key(key)
    if why:
        raise Fail(f"the engine handed out something that is not an authoring key: {why}",
                   EXIT_ENGINE)
    record = {"authoring_key": key, "key_id": issued.get("key_id"),
              "expires_at": issued.get("expires_at"), "base_url": base,
              "source": "device", "saved_at": _now()}
    if args.game:
        record["game_id"] = args.game
    path = config.save_credentials(record)
    _out(f"Signed in: the authoring key {key_prefix(key)} (valid until "
         f"{issued.get('expires_at')}) is stored in {path} (mode 0600).")
    return EXIT_OK


def cmd_logout(args) -> int:
    if config.delete_credentials():
        _out(f"Removed {config.credentials_path()}. Revoke the key in the dashboard "
             "(Settings, API Keys) if it may have leaked.")
    else:
        _out("Not signed in.")
    return EXIT_OK


def cmd_export(args) -> int:
    try:
        collected = export.collect(Path(args.dir))
    except (NotADirectoryError, OSError) as e:
        raise Fail(str(e), EXIT_USAGE)
    for rel, why in collected.skipped:
        _out(f"skipped {rel}: {why}")
    if collected.secrets:
        for f in collected.secrets:
            _err(f.message())
        raise Fail(f"export aborted: {len(collected.secrets)} service key(s) found; "
                   "nothing was written", EXIT_NO)
    if not any(rel.endswith(".dart") for rel, _ in collected.files):
        raise Fail(f"no Dart source under {args.dir}", EXIT_USAGE)
    for rel, data in collected.files:
        _out(f"collected {rel} ({len(data)} bytes)")
    if args.out:
        Path(args.out).write_bytes(export.bundle(collected))
        _out(f"Wrote {args.out}: {len(collected.files)} files, no service key found.")
    else:
        _out(f"{len(collected.files)} files, no service key found (pass --out FILE.zip to "
             "write them).")
    return EXIT_OK


def _print_findings(doc: dict) -> None:
    for kind in ("blockers", "warnings"):
        for f in doc.get(kind) or []:
            line = f" line {f['line']}" if f.get("line") is not None else ""
            _out(f"{kind[:-1]}: [{f.get('gate')}]{line}: {f.get('message')}")


def cmd_validate(args) -> int:
    client, game = _authed(args)
    template, bindings = _page(args)
    _, doc = client.request("POST", _games_path(game, "validate"),
                            {"template": template, "bindings": bindings},
                            headers=_run_headers(args))
    if args.json:
        _out(json.dumps(doc, indent=2))
    else:
        _print_findings(doc)
        n_b, n_w = len(doc.get("blockers") or []), len(doc.get("warnings") or [])
        _out(("valid" if doc.get("valid") else "invalid") + f": {n_b} blocker(s), "
             f"{n_w} warning(s)")
    return EXIT_OK if doc.get("valid") else EXIT_NO


def cmd_draft(args) -> int:
    client, game = _authed(args)
    template, bindings = _page(args)
    body = {"template": template, "bindings": bindings}
    if args.page_id:
        body["page_id"] = args.page_id
    _, doc = client.request("POST", _games_path(game, "draft"), body, headers=_run_headers(args))
    _out(json.dumps({"page_id": doc["page_id"], "version": doc["version"]}))
    return EXIT_OK


def cmd_preview(args) -> int:
    client, game = _authed(args)
    doc = request_preview(client, game, args.page_id, args.version, _run_headers(args))
    preview_id = doc["preview_id"]
    if not args.wait:
        _out(json.dumps({"preview_id": preview_id}))
        return EXIT_OK
    _err(f"preview {preview_id} queued; waiting")
    status = wait_preview(client, game, preview_id, timeout=args.wait_timeout)
    if status.get("status") != "ready":
        err = status.get("error")
        raise Fail(f"preview {preview_id} failed: {err or 'no reason given'}", EXIT_NO)
    out_dir = Path(args.out or ".")
    out_dir.mkdir(parents=True, exist_ok=True)
    saved = download_screenshots(client, status, out_dir, preview_id)
    for path, shot in saved:
        _out(f"saved {path} ({shot.get('width')}x{shot.get('height')})")
    if status.get("expires_at"):
        _out(f"the engine keeps these screenshots until {status['expires_at']}")
    return EXIT_OK


def request_preview(client: Client, game: str, page_id: str, version: int, headers: dict,
                    sleep=None, tries: int = 4) -> dict:
    """Queues a preview; a full build queue (503 `preview_queue_full`), the game's or the
    key's share of it in use (429 `preview_share_full`) or a busy engine (503 `unavailable`)
    is retried after its `Retry-After` (at most 30 s), a few times."""
    sleep = sleep or time.sleep
    for attempt in range(tries):
        try:
            _, doc = client.request("POST", _games_path(game, "preview"),
                                    {"page_id": page_id, "version": version}, headers=headers)
            return doc
        except ApiError as e:
            busy = e.status == 503 or e.code == "preview_share_full"
            if not busy or attempt == tries - 1:
                raise
            wait = min(max(e.retry_after or 2.0, 1.0), 30.0)
            _err(f"the engine is busy ({e.code}); trying again in {wait:.0f} s")
            sleep(wait)
    raise AssertionError("unreachable")


def wait_preview(client: Client, game: str, preview_id: str, timeout: float = 300.0,
                 sleep=None, clock=None) -> dict:
    """Polls the preview until ``ready`` or ``failed`` (0.5 s, doubling to 5 s between
    polls)."""
    sleep, clock = sleep or time.sleep, clock or time.monotonic
    deadline = clock() + timeout
    delay = 0.5
    while True:
        _, status = client.request("GET", _games_path(game, "preview", preview_id))
        if status.get("status") in ("ready", "failed"):
            return status
        if clock() + delay > deadline:
            raise Fail(f"preview {preview_id} still {status.get('status')} after {timeout:.0f} s",
                       EXIT_ENGINE)
        sleep(delay)
        delay = min(delay * 2, 5.0)


def download_screenshots(client: Client, status: dict, out_dir: Path, preview_id: str):
    saved = []
    for i, shot in enumerate(status.get("screenshots") or [], start=1):
        data = client.download(shot["url"])
        if not data.startswith(png.SIGNATURE):
            raise Fail(f"screenshot {i} of preview {preview_id} is not a PNG", EXIT_ENGINE)
        name = f"{preview_id}-{i}-{shot.get('width')}x{shot.get('height')}.png"
        path = out_dir / name
        path.write_bytes(data)
        saved.append((path, shot))
    return saved


def cmd_compare(args) -> int:
    images = []
    for path in (args.preview, args.reference):
        try:
            images.append(png.decode(Path(path).read_bytes()))
        except OSError as e:
            raise Fail(f"cannot read {path}: {e}", EXIT_USAGE)
        except png.PngError as e:
            raise Fail(f"{path}: {e}", EXIT_USAGE)
    result = png.compare(images[0], images[1])
    report = {
        "score": round(result.score, 6),
        "mean_abs_diff": round(result.mean_abs_diff, 6),
        "compared_at": [result.width, result.height],
        "preview_size": list(result.preview_size),
        "reference_size": list(result.reference_size),
    }
    _out(json.dumps(report))
    run = args.run or os.environ.get("OFFER_RUN")
    if run:
        client, game = _authed(args)
        body = {"score": report["score"]}
        preview_id = args.preview_id or _preview_id_of(Path(args.preview).name)
        if preview_id:
            body["preview_id"] = preview_id
        _, doc = client.request("POST", _games_path(game, "runs", run, "comparisons"), body)
        taken = doc.get("comparisons") if isinstance(doc, dict) else None
        _out(json.dumps({"run_id": run, "recorded": True, "comparisons": taken}))
    return EXIT_OK


_UUID = re.compile(r"\A([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})-\d+-")


def _preview_id_of(name: str) -> str | None:
    """The preview of a screenshot `preview --wait` saved (`<preview_id>-<n>-<w>x<h>.png`)."""
    m = _UUID.match(name)
    return m.group(1) if m else None


def cmd_run_open(args) -> int:
    client, game = _authed(args)
    _, doc = client.request("POST", _games_path(game, "runs"), {"mode": args.mode})
    _out(json.dumps({k: doc.get(k) for k in ("run_id", "mode", "expires_at")}))
    if args.mode == "cloud":
        _err("a cloud run takes no validate, draft or preview call until another developer "
             "of the studio confirms it in the dashboard")
    return EXIT_OK


def cmd_run_show(args) -> int:
    client, game = _authed(args)
    _, doc = client.request("GET", _games_path(game, "runs", args.run_id))
    _out(json.dumps(doc, indent=2))
    return EXIT_OK


def _now() -> str:
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")


# --- parser ----------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--base-url", help="the engine (default: OFFER_BASE_URL, else the URL "
                        f"stored at sign-in, else {DEFAULT_BASE_URL})")
    common.add_argument("--game", help="the game id (default: OFFER_GAME, else the game stored "
                        "at sign-in)")
    common.add_argument("--timeout", type=float, default=30.0,
                        help="seconds to wait for each answer (default 30)")

    p = argparse.ArgumentParser(prog="offer-author", description="The offer engine's "
                                "authoring tool: sign in, export, validate, draft, preview, "
                                "compare.")
    p.add_argument("--version", action="version", version=f"offer-author {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    s = sub.add_parser("login", parents=[common], help="sign in (device sign-in, or --key)")
    s.add_argument("--key", metavar="KEY", help="store a pasted authoring key instead; `-` "
                   "reads it from standard input (keeps it out of the shell history)")
    s.set_defaults(func=cmd_login)

    s = sub.add_parser("logout", parents=[common], help="forget the stored key")
    s.set_defaults(func=cmd_logout)

    s = sub.add_parser("export", parents=[common], help="collect a screen's files, refusing "
                       "any that holds a service key")
    s.add_argument("dir", metavar="DIR")
    s.add_argument("--out", metavar="FILE.zip", help="write the files and a manifest here")
    s.set_defaults(func=cmd_export)

    for name, func, text in (("validate", cmd_validate, "run the engine's validator"),
                             ("draft", cmd_draft, "save a draft version")):
        s = sub.add_parser(name, parents=[common], help=text)
        s.add_argument("file", metavar="FILE", help="the page's Dart source")
        s.add_argument("--bindings", required=True, metavar="JSON|@FILE",
                       help='the bindings, e.g. \'{"items": ["gems_100"], "title": "Sale"}\'')
        s.add_argument("--run", metavar="RUN_ID", help="the authoring run this call belongs to "
                       "(default: OFFER_RUN)")
        if name == "draft":
            s.add_argument("--page-id", help="add a version to this page")
        else:
            s.add_argument("--json", action="store_true", help="print the engine's answer")
        s.set_defaults(func=func)

    s = sub.add_parser("preview", parents=[common], help="queue a preview build")
    s.add_argument("--page-id", required=True)
    s.add_argument("--version", type=int, required=True)
    s.add_argument("--wait", action="store_true", help="wait for it and download the PNGs")
    s.add_argument("--wait-timeout", type=float, default=300.0, help="seconds (default 300)")
    s.add_argument("--out", metavar="DIR", help="where to save the screenshots (default .)")
    s.add_argument("--run", metavar="RUN_ID", help="the authoring run this call belongs to "
                   "(default: OFFER_RUN)")
    s.set_defaults(func=cmd_preview)

    s = sub.add_parser("compare", parents=[common], help="score a preview against a reference "
                       "screenshot (1 is identical)")
    s.add_argument("preview", metavar="PREVIEW_PNG")
    s.add_argument("reference", metavar="REFERENCE_PNG")
    s.add_argument("--run", metavar="RUN_ID", help="report the score to this authoring run "
                   "(default: OFFER_RUN; a run takes 3 comparisons)")
    s.add_argument("--preview-id", help="the preview compared (default: read from a file name "
                   "`preview --wait` saved)")
    s.set_defaults(func=cmd_compare)

    s = sub.add_parser("run", help="authoring runs: open one, or show one")
    runs = s.add_subparsers(dest="run_command", required=True, metavar="open|show")
    r = runs.add_parser("open", parents=[common], help="open a run (validate 4 times, "
                        "compare 3 times)")
    r.add_argument("--mode", choices=("local", "cloud"), default="local")
    r.set_defaults(func=cmd_run_open)
    r = runs.add_parser("show", parents=[common], help="a run and its calls")
    r.add_argument("run_id", metavar="RUN_ID")
    r.set_defaults(func=cmd_run_show)
    return p


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except Fail as e:
        _err(str(e))
        return e.code
    except ApiError as e:
        f = _api_fail(e)
        _err(str(f))
        return f.code
    except EngineUnreachable as e:
        _err(str(e))
        return EXIT_ENGINE
    except KeyboardInterrupt:
        _err("interrupted")
        return 130
