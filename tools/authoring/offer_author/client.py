"""The engine's HTTP API, with ``urllib`` only.

Every non-2xx answer of the engine has one body, ``{"error": {"code", "message", "details"}}``
with a stable snake_case code; :class:`ApiError` carries it, and :func:`explain` turns the
codes a user can act on into a sentence that says what to do.
"""

from __future__ import annotations

import json
import socket
import urllib.error
import urllib.parse
import urllib.request

from offer_author import __version__

DEFAULT_BASE_URL = "http://127.0.0.1:8080"
USER_AGENT = f"offer-author/{__version__}"


class ApiError(Exception):
    """A non-2xx answer of the engine."""

    def __init__(self, status: int, code: str, message: str, details: dict | None = None,
                 retry_after: float | None = None):
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.details = details or {}
        self.retry_after = retry_after


class EngineUnreachable(Exception):
    """No answer at all: the engine is not running there, or the network failed."""


def _retry_after(headers, details: dict) -> float | None:
    value = details.get("retry_after") if isinstance(details, dict) else None
    if value is None and headers is not None:
        value = headers.get("Retry-After")
    try:
        return float(value) if value is not None else None
    except (TypeError, ValueError):
        return None


def error_from_http(status: int, body: bytes, headers=None) -> ApiError:
    """Reads the engine's error shape; anything else (a proxy's page) keeps its status."""
    try:
        doc = json.loads(body.decode("utf-8"))
        err = doc["error"]
        code = str(err["code"])
        message = str(err.get("message", code))
        details = err.get("details") or {}
        if not isinstance(details, dict):
            details = {}
    except (ValueError, KeyError, TypeError, UnicodeDecodeError):
        code, message, details = f"http_{status}", body[:200].decode("utf-8", "replace").strip(), {}
    return ApiError(status, code, message, details, _retry_after(headers, details))


class Client:
    """Calls one engine with one credential (or none, for the sign-in's open paths)."""

    def __init__(self, base_url: str, key: str | None = None, timeout: float = 30.0):
        self.base_url = base_url.rstrip("/")
        self.key = key
        self.timeout = timeout

    def url(self, path: str) -> str:
        return urllib.parse.urljoin(self.base_url + "/", path.lstrip("/"))

    def same_origin(self, url: str) -> bool:
        a, b = urllib.parse.urlsplit(self.base_url), urllib.parse.urlsplit(url)
        return (a.scheme, a.hostname, a.port) == (b.scheme, b.hostname, b.port)

    def request(self, method: str, path: str, body=None, auth: bool = True,
                headers: dict | None = None):
        """JSON in, JSON out: ``(status, parsed body or None)``; raises :class:`ApiError`."""
        data = None
        headers = {"Accept": "application/json", "User-Agent": USER_AGENT, **(headers or {})}
        if body is not None:
            data = json.dumps(body).encode("utf-8")
            headers["Content-Type"] = "application/json"
        if auth and self.key:
            headers["Authorization"] = f"Bearer {self.key}"
        status, raw, _ = self._send(method, self.url(path), data, headers)
        if not raw:
            return status, None
        try:
            return status, json.loads(raw.decode("utf-8"))
        except (ValueError, UnicodeDecodeError):
            raise ApiError(status, "bad_answer", "the engine's answer is not JSON")

    def download(self, url: str) -> bytes:
        """The bytes at ``url`` (relative to the engine, or absolute). The key goes only to
        the engine's own origin, never to another host a URL may name."""
        full = self.url(url)
        headers = {"User-Agent": USER_AGENT}
        if self.key and self.same_origin(full):
            headers["Authorization"] = f"Bearer {self.key}"
        _, raw, _ = self._send("GET", full, None, headers)
        return raw

    def _send(self, method, url, data, headers):
        req = urllib.request.Request(url, data=data, headers=headers, method=method)
        opener = urllib.request.build_opener(_NoRedirect)
        try:
            with opener.open(req, timeout=self.timeout) as resp:
                return resp.status, resp.read(), resp.headers
        except urllib.error.HTTPError as e:
            raw = e.read() if e.fp is not None else b""
            raise error_from_http(e.code, raw, e.headers) from None
        except (urllib.error.URLError, socket.timeout, ConnectionError, OSError) as e:
            reason = getattr(e, "reason", e)
            raise EngineUnreachable(
                f"cannot reach the engine at {self.base_url}: {reason} "
                "(is it running? set --base-url or OFFER_BASE_URL)"
            ) from None


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """A redirect is not followed: it could carry the Authorization header elsewhere."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        return None


SIGN_IN_AGAIN = "sign in again with `offer-author login`"


def explain(err: ApiError, with_key: bool = True) -> str:
    """One or more lines telling the user what happened and what to do."""
    code = err.code
    if code == "authoring_key_expired":
        return ("your authoring key has expired (authoring keys last 90 days): "
                f"{SIGN_IN_AGAIN}, or paste a new key with `offer-author login --key -`")
    if code == "unauthorized":
        if with_key:
            return ("the engine refused the authoring key: it was revoked in the dashboard "
                    "(Settings, API Keys), or this engine never issued it; " + SIGN_IN_AGAIN)
        return f"the engine asks for a credential: {SIGN_IN_AGAIN}"
    if code == "wrong_credential":
        return ("this credential cannot call that path: an authoring key may validate, draft "
                "and preview custom pages and read its game's items, nothing else")
    if code == "forbidden":
        return "your role does not allow this"
    if code == "not_found":
        return ("not found: the game (or page, or preview) does not exist, or is not the game "
                "this authoring key was issued for (check --game)")
    if code == "rate_limited":
        wait = f" Try again in {err.retry_after:.0f} s." if err.retry_after else ""
        return f"too many requests.{wait}"
    if code == "payload_too_large":
        return ("too large: a template is at most 65536 bytes and bindings at most 16384 bytes "
                "of JSON")
    if code == "validation_failed":
        lines = ["the engine refused the request:"]
        for e in err.details.get("errors", []) or []:
            where = e.get("field", "?")
            if "index" in e:
                where += f"[{e['index']}]"
            lines.append(f"  {where}: {e.get('reason', '')}")
        if len(lines) == 1:
            lines[0] += " " + err.message
        return "\n".join(lines)
    if code == "run_limit_reached":
        limit, most = err.details.get("limit"), err.details.get("max")
        what = {"validate": "validations (the first and three fix attempts)",
                "comparison": "visual comparisons", "calls": "calls"}.get(limit, "calls")
        most = f"{most} " if most is not None else ""
        return (f"this authoring run has taken all its {most}{what}: open a new run with "
                "`offer-author run open`, or go on without --run")
    if code == "run_not_confirmed":
        return ("this cloud run is not confirmed yet: another developer of the studio must "
                "confirm it in the dashboard (nothing was done)")
    if code == "second_member_required":
        return "another developer of the studio (not the one who approved the key) must confirm"
    if code == "conflict":
        return f"conflict: {err.message}"
    if code == "preview_queue_full":
        return "the engine's preview queue is full: try again in a moment"
    if code == "preview_share_full":
        return "previews of this game are already being built: try again once they are ready"
    if code == "unavailable":
        return "the engine is unavailable for a moment: try again"
    return f"{err.status} {code}: {err.message}"


def is_refusal(err: ApiError) -> bool:
    """A refusal of the run's rules rather than a failure: the answer is no."""
    return err.code in ("run_limit_reached", "run_not_confirmed", "second_member_required")


def is_credential_problem(err: ApiError) -> bool:
    return err.code in ("authoring_key_expired", "unauthorized", "wrong_credential")
