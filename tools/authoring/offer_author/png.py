"""A PNG decoder on ``zlib``, and the visual comparison of two screenshots.

Decodes non-interlaced PNGs of bit depth 8: greyscale, RGB, palette, greyscale with alpha and
RGBA, with the five row filters (None, Sub, Up, Average, Paeth). Every image is turned into
RGB by compositing it over black, since a screenshot's transparent parts show nothing.
"""

from __future__ import annotations

import struct
import zlib
from itertools import accumulate, repeat
from operator import and_
from dataclasses import dataclass

SIGNATURE = b"\x89PNG\r\n\x1a\n"
_CHANNELS = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}
MAX_PIXELS = 64 * 1024 * 1024


class PngError(ValueError):
    pass


@dataclass
class Image:
    """An RGB image: ``pixels`` is ``width * height * 3`` bytes, row by row."""

    width: int
    height: int
    pixels: bytes


def _add_bytes(a: bytes, b: bytes) -> bytes:
    """Bytewise ``(a + b) mod 256`` on whole rows at once: the low 7 bits of every byte are
    added without carrying into the next byte, and the top bit is the XOR of the three."""
    n = len(a)
    x, y = int.from_bytes(a, "little"), int.from_bytes(b, "little")
    low = int.from_bytes(b"\x7f" * n, "little")
    high = int.from_bytes(b"\x80" * n, "little")
    return (((x & low) + (y & low)) ^ ((x ^ y) & high)).to_bytes(n, "little")


def _unfilter(raw: bytes, width: int, height: int, bpp: int) -> bytearray:
    stride = width * bpp
    out = bytearray(stride * height)
    prev = bytearray(stride)
    pos = 0
    for y in range(height):
        if pos >= len(raw):
            raise PngError("image data is cut short")
        ftype = raw[pos]
        line = bytearray(raw[pos + 1 : pos + 1 + stride])
        if len(line) != stride:
            raise PngError("image data is cut short")
        pos += 1 + stride
        if ftype == 0:
            pass
        elif ftype == 1:  # Sub: a running sum of each channel, modulo 256
            for ch in range(bpp):
                line[ch::bpp] = bytes(map(and_, accumulate(line[ch::bpp]), repeat(0xFF)))
        elif ftype == 2:  # Up: bytewise addition of two rows, as two big integers
            line = bytearray(_add_bytes(line, prev))
        elif ftype == 3:  # Average
            for i in range(stride):
                left = line[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + ((left + prev[i]) >> 1)) & 0xFF
        elif ftype == 4:  # Paeth
            for i in range(stride):
                a = line[i - bpp] if i >= bpp else 0
                b = prev[i]
                c = prev[i - bpp] if i >= bpp else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                if pa <= pb and pa <= pc:
                    pred = a
                elif pb <= pc:
                    pred = b
                else:
                    pred = c
                line[i] = (line[i] + pred) & 0xFF
        else:
            raise PngError(f"row {y} has an unknown filter type {ftype}")
        out[y * stride : (y + 1) * stride] = line
        prev = line
    return out


def decode(data: bytes) -> Image:
    """Decodes a PNG into RGB over black; :class:`PngError` says what is unsupported."""
    if not data.startswith(SIGNATURE):
        raise PngError("not a PNG file")
    pos = len(SIGNATURE)
    header = None
    palette = b""
    trns = b""
    idat = []
    while pos + 8 <= len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        ctype = data[pos + 4 : pos + 8]
        chunk = data[pos + 8 : pos + 8 + length]
        if len(chunk) != length or pos + 12 + length > len(data):
            raise PngError(f"chunk {ctype!r} is cut short")
        (crc,) = struct.unpack(">I", data[pos + 8 + length : pos + 12 + length])
        if zlib.crc32(ctype + chunk) & 0xFFFFFFFF != crc:
            raise PngError(f"chunk {ctype!r} fails its CRC")
        pos += 12 + length
        if ctype == b"IHDR":
            if length != 13:
                raise PngError("IHDR has the wrong length")
            header = struct.unpack(">IIBBBBB", chunk)
        elif ctype == b"PLTE":
            palette = chunk
        elif ctype == b"tRNS":
            trns = chunk
        elif ctype == b"IDAT":
            idat.append(chunk)
        elif ctype == b"IEND":
            break
    if header is None:
        raise PngError("no IHDR chunk")
    width, height, depth, color, compression, filt, interlace = header
    if color not in _CHANNELS:
        raise PngError(f"unknown colour type {color}")
    if depth != 8:
        raise PngError(f"bit depth {depth} is not supported (8 only)")
    if compression != 0 or filt != 0:
        raise PngError("unknown compression or filter method")
    if interlace != 0:
        raise PngError("interlaced PNGs are not supported")
    if width == 0 or height == 0 or width * height > MAX_PIXELS:
        raise PngError(f"unsupported size {width}x{height}")
    if color == 3 and not palette:
        raise PngError("palette image without a PLTE chunk")
    try:
        raw = zlib.decompress(b"".join(idat))
    except zlib.error as e:
        raise PngError(f"image data does not inflate: {e}") from None
    bpp = _CHANNELS[color]
    px = _unfilter(raw, width, height, bpp)
    return Image(width, height, _to_rgb(px, color, palette, trns, width * height))


def _over_black(rgb: bytes, alpha: bytes) -> bytes:
    if alpha.count(0xFF) == len(alpha):  # opaque, as screenshots are
        return bytes(rgb)
    return bytes((c * a + 127) // 255 for c, a in zip(rgb, alpha))


def _grey_to_rgb(grey: bytes | bytearray, count: int) -> bytes:
    """Each grey sample as an RGB pixel of three equal channels."""
    out = bytearray(count * 3)
    for ch in range(3):
        out[ch::3] = grey
    return bytes(out)


def _to_rgb(px: bytearray, color: int, palette: bytes, trns: bytes, count: int) -> bytes:
    if color == 2:
        return bytes(px)
    if color == 0:
        return _grey_to_rgb(px, count)
    if color == 4:
        return _grey_to_rgb(_over_black(px[0::2], px[1::2]), count)
    if color == 6:
        alpha = px[3::4]
        out = bytearray(count * 3)
        for ch in range(3):
            out[ch::3] = _over_black(px[ch::4], alpha)
        return bytes(out)
    # Palette: each entry's colour, scaled by its tRNS alpha when there is one.
    entries = len(palette) // 3
    table = []
    for i in range(256):
        if i < entries:
            r, g, b = palette[3 * i : 3 * i + 3]
        else:
            r = g = b = 0
        a = trns[i] if i < len(trns) else 255
        table.append(bytes(((r * a + 127) // 255, (g * a + 127) // 255, (b * a + 127) // 255)))
    return b"".join(table[i] for i in px)


def resize_nearest(img: Image, width: int, height: int) -> Image:
    """Nearest-neighbour resize (pixel centres) to ``width`` x ``height``."""
    if (width, height) == (img.width, img.height):
        return img
    xs = [min(img.width - 1, (2 * x + 1) * img.width // (2 * width)) * 3 for x in range(width)]
    src = img.pixels
    out = bytearray()
    for y in range(height):
        sy = min(img.height - 1, (2 * y + 1) * img.height // (2 * height))
        row = src[sy * img.width * 3 : (sy + 1) * img.width * 3]
        out += b"".join(row[x : x + 3] for x in xs)
    return Image(width, height, bytes(out))


# The comparison grid's longer side: enough to see layout and colour, and quick in Python.
COMPARE_SIDE = 256


@dataclass
class Comparison:
    score: float
    mean_abs_diff: float
    width: int
    height: int
    preview_size: tuple
    reference_size: tuple


def compare(preview: Image, reference: Image, side: int = COMPARE_SIDE) -> Comparison:
    """Both images resized (nearest neighbour) onto the preview's aspect ratio, at most
    ``side`` pixels on the longer side; the mean absolute difference of their RGB channels,
    over 255, is the difference, and ``score = 1 - difference`` (1 is identical, 0 is black
    against white everywhere)."""
    scale = min(1.0, side / max(preview.width, preview.height))
    w = max(1, round(preview.width * scale))
    h = max(1, round(preview.height * scale))
    a = resize_nearest(preview, w, h).pixels
    b = resize_nearest(reference, w, h).pixels
    total = sum(abs(x - y) for x, y in zip(a, b))
    mad = total / (len(a) * 255.0)
    return Comparison(1.0 - mad, mad, w, h, (preview.width, preview.height),
                      (reference.width, reference.height))


def encode_rgb(width: int, height: int, pixels: bytes) -> bytes:
    """A plain RGB PNG (filter 0 on every row); used by tests and for fixtures."""
    stride = width * 3
    raw = b"".join(b"\x00" + pixels[y * stride : (y + 1) * stride] for y in range(height))

    def chunk(kind: bytes, body: bytes) -> bytes:
        return (struct.pack(">I", len(body)) + kind + body
                + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF))

    return (SIGNATURE + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))
