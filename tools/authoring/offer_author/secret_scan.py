"""The secret scanner: finds anything shaped like a service key, whatever its checksum or
deployment prefix.

The shape is ``[a-z0-9]{2,16}_(live_sk|test_sk|auth)_[A-Za-z0-9]{16,}``: an SDK key
(production or sandbox) or an authoring key. It is the same rule as the engine's scanner
(``domain/src/secret_scan.rs``), written the same way: one pass over the bytes. The checksum
is not verified (a key with a typo is still a leaked key) and any prefix counts. Placeholders
are not keys: a body of one repeated character (``svc_live_sk_xxxxxxxxxxxxxxxx``) or of
``x``/``X`` only; ``<KEY>`` never matches, as ``<`` is not a body character.

It works on bytes, so binary assets are scanned too (a key can hide in a PNG text chunk);
a hit never carries the key's body, so reporting it cannot leak the key again.
"""

from __future__ import annotations

from dataclasses import dataclass

MIN_BODY_LEN = 16
MIN_PREFIX_LEN = 2
MAX_PREFIX_LEN = 16

_MARKERS = (
    (b"_live_sk_", "live_sk", "a production SDK key"),
    (b"_test_sk_", "test_sk", "a sandbox SDK key"),
    (b"_auth_", "auth", "an authoring key"),
)


def _is_prefix_byte(b: int) -> bool:
    return 0x61 <= b <= 0x7A or 0x30 <= b <= 0x39  # a-z, 0-9


def _is_body_byte(b: int) -> bool:
    return 0x30 <= b <= 0x39 or 0x41 <= b <= 0x5A or 0x61 <= b <= 0x7A  # 0-9, A-Z, a-z


def _is_placeholder(body: bytes) -> bool:
    if not body:
        return True
    return body.count(body[0]) == len(body) or all(b in b"xX" for b in body)


@dataclass(frozen=True)
class SecretHit:
    """One key-shaped string: where it starts, its kind, and its prefix (safe to show)."""

    line: int
    marker: str
    kind: str
    prefix: str

    def message(self) -> str:
        return (
            f"line {self.line} holds something shaped like {self.kind} "
            f"(`{self.prefix}_{self.marker}_...`): remove it; keys are never part of a page"
        )


def scan(data: bytes | str) -> list[SecretHit]:
    """Every key-shaped string in ``data``, in order."""
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    hits: list[SecretHit] = []
    n = len(data)
    line = 1
    counted = 0
    i = data.find(b"_")
    while 0 <= i < n:
        found = None
        for marker, name, kind in _MARKERS:
            if data.startswith(marker, i):
                found = (marker, name, kind)
                break
        if found is None:
            i = data.find(b"_", i + 1)
            continue
        marker, name, kind = found
        p = i
        while p > 0 and _is_prefix_byte(data[p - 1]):
            p -= 1
        prefix_len = i - p
        body_start = i + len(marker)
        e = body_start
        while e < n and _is_body_byte(data[e]):
            e += 1
        body = data[body_start:e]
        if prefix_len < MIN_PREFIX_LEN or len(body) < MIN_BODY_LEN or _is_placeholder(body):
            i = data.find(b"_", i + 1)
            continue
        shown = min(prefix_len, MAX_PREFIX_LEN)
        line += data.count(b"\n", counted, i)
        counted = i
        hits.append(SecretHit(line, name, kind, data[i - shown : i].decode("ascii")))
        i = data.find(b"_", e)
    return hits
