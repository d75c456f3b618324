"""The shape of an authoring key: ``<prefix>_auth_<body>``, where the prefix is
``[a-z0-9]{2,16}`` and the body is base62, 32 characters of randomness followed by a
6-character checksum (the base62 CRC-32 of everything before it). A pasted key with a typo
is refused here, before it is stored or sent."""

from __future__ import annotations

import re
import zlib

_BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_SHAPE = re.compile(r"\A([a-z0-9]{2,16})_auth_([A-Za-z0-9]{38})\Z")
CHECKSUM_LEN = 6


def _base62_fixed(n: int) -> str:
    out = []
    for _ in range(CHECKSUM_LEN):
        out.append(_BASE62[n % 62])
        n //= 62
    return "".join(reversed(out))


def check_authoring_key(key: str) -> str | None:
    """None when ``key`` is a well-formed authoring key, else why it is not."""
    if not _SHAPE.match(key):
        if re.match(r"\A[a-z0-9]{2,16}_(live|test)_sk_", key):
            return "this is an SDK key, not an authoring key: the tool never uses SDK keys"
        return "not an authoring key: expected <prefix>_auth_<38 letters and digits>"
    head, checksum = key[:-CHECKSUM_LEN], key[-CHECKSUM_LEN:]
    if _base62_fixed(zlib.crc32(head.encode("ascii"))) != checksum:
        return "the key's checksum does not match: it was mistyped or cut short"
    return None


def key_prefix(key: str) -> str:
    """The key's first characters, enough to recognise it, never enough to use it."""
    head, _, body = key.partition("_auth_")
    return f"{head}_auth_{body[:4]}..."
