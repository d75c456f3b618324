"""Well-formed authoring keys for tests (the engine's checksum rule), never real ones."""

import random
import zlib

from offer_author.keys import _base62_fixed

ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def make_key(prefix="ofr", seed=1):
    rng = random.Random(seed)
    head = f"{prefix}_auth_" + "".join(rng.choice(ALPHABET) for _ in range(32))
    return head + _base62_fixed(zlib.crc32(head.encode()))
