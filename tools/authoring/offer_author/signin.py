"""Device sign-in (the shape of RFC 8628): start, show the code, poll for the key.

The poll waits ``interval`` seconds between two polls; ``slow_down`` adds 5 seconds (or takes
the engine's ``details.interval``); ``authorization_pending`` keeps polling until the code's
``expires_in`` runs out; ``access_denied``, ``expired_token`` and ``invalid_grant`` end it.
"""

from __future__ import annotations

import time

from offer_author.client import ApiError, Client


class SignInFailed(Exception):
    pass


def start(client: Client) -> dict:
    _, doc = client.request("POST", "/v1/auth/device", auth=False)
    for field in ("device_code", "user_code", "verification_uri", "interval", "expires_in"):
        if field not in doc:
            raise SignInFailed(f"the engine's sign-in answer has no {field}")
    return doc


def poll(client: Client, started: dict, sleep=None, clock=None, on_wait=None) -> dict:
    """Polls until the key is handed out; returns ``{key_id, authoring_key, expires_at}``."""
    sleep, clock = sleep or time.sleep, clock or time.monotonic
    interval = max(1, int(started.get("interval") or 5))
    deadline = clock() + float(started.get("expires_in") or 600)
    while True:
        if clock() >= deadline:
            raise SignInFailed("the sign-in code expired before it was approved: run "
                               "`offer-author login` again")
        sleep(interval)
        try:
            _, doc = client.request("POST", "/v1/auth/device/token",
                                    {"device_code": started["device_code"]}, auth=False)
            return doc
        except ApiError as e:
            if e.code == "authorization_pending":
                if on_wait:
                    on_wait(interval)
                continue
            if e.code == "slow_down":
                given = e.details.get("interval")
                interval = int(given) if isinstance(given, (int, float)) and given > interval \
                    else interval + 5
                continue
            if e.code == "rate_limited":
                sleep(max(float(e.retry_after or interval), 1.0))
                continue
            if e.code == "access_denied":
                raise SignInFailed("the sign-in was denied in the dashboard") from None
            if e.code == "expired_token":
                raise SignInFailed("the sign-in code expired (or its key was already handed "
                                   "out): run `offer-author login` again") from None
            if e.code == "invalid_grant":
                raise SignInFailed("the engine does not know this sign-in any more: run "
                                   "`offer-author login` again") from None
            raise
