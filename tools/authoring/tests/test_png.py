import struct
import unittest
import zlib
from pathlib import Path

from offer_author import png


def _chunk(kind, body):
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def _paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    return a if pa <= pb and pa <= pc else (b if pb <= pc else c)


def encode(width, height, color, rows, filters, palette=b"", trns=b""):
    """An encoder written independently of the decoder: rows of raw samples, each filtered
    with the given filter type."""
    bpp = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}[color]
    prev = bytes(width * bpp)
    out = b""
    for y, row in enumerate(rows):
        f = filters[y % len(filters)]
        enc = bytearray()
        for i, x in enumerate(row):
            a = row[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            pred = (0, a, b, (a + b) // 2, _paeth(a, b, c))[f]
            enc.append((x - pred) & 0xFF)
        out += bytes([f]) + bytes(enc)
        prev = row
    body = png.SIGNATURE + _chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, color, 0, 0, 0))
    if palette:
        body += _chunk(b"PLTE", palette)
    if trns:
        body += _chunk(b"tRNS", trns)
    comp = zlib.compress(out)
    # Split the data over two IDAT chunks, as encoders may.
    return body + _chunk(b"IDAT", comp[:5]) + _chunk(b"IDAT", comp[5:]) + _chunk(b"IEND", b"")


def rgb_rows(width, height):
    return [bytes(((x * 37 + y * 11) % 256, (x * 5 + y * 91) % 256, (x * y * 7) % 256)[k]
                  for x in range(width) for k in range(3)) for y in range(height)]


class DecodeTest(unittest.TestCase):
    def test_every_filter_on_rgb(self):
        rows = rgb_rows(13, 9)
        for f in range(5):
            img = png.decode(encode(13, 9, 2, rows, [f]))
            self.assertEqual((img.width, img.height), (13, 9))
            self.assertEqual(img.pixels, b"".join(rows), f"filter {f}")
        mixed = png.decode(encode(13, 9, 2, rows, [0, 1, 2, 3, 4]))
        self.assertEqual(mixed.pixels, b"".join(rows))

    def test_rgba_is_composited_over_black(self):
        rows = [bytes([200, 100, 50, 255, 200, 100, 50, 0, 200, 100, 50, 128])]
        img = png.decode(encode(3, 1, 6, rows, [4]))
        self.assertEqual(img.pixels, bytes([200, 100, 50, 0, 0, 0, 100, 50, 25]))

    def test_grey_and_grey_alpha(self):
        img = png.decode(encode(2, 2, 0, [bytes([0, 255]), bytes([10, 20])], [1, 3]))
        self.assertEqual(img.pixels, bytes([0] * 3 + [255] * 3 + [10] * 3 + [20] * 3))
        img = png.decode(encode(2, 1, 4, [bytes([255, 255, 255, 0])], [2]))
        self.assertEqual(img.pixels, bytes([255] * 3 + [0] * 3))

    def test_palette_with_transparency(self):
        palette = bytes([255, 0, 0, 0, 255, 0])
        img = png.decode(encode(3, 1, 3, [bytes([0, 1, 0])], [0], palette, bytes([255, 0])))
        self.assertEqual(img.pixels, bytes([255, 0, 0, 0, 0, 0, 255, 0, 0]))

    def test_the_plain_encoder_round_trips(self):
        pixels = b"".join(rgb_rows(7, 5))
        img = png.decode(png.encode_rgb(7, 5, pixels))
        self.assertEqual(img.pixels, pixels)

    def test_broken_and_unsupported_files_are_refused_with_a_reason(self):
        good = encode(4, 4, 2, rgb_rows(4, 4), [0])
        cases = {
            b"GIF89a": "not a PNG",
            good[:-20]: "",
            good[:30] + bytes([good[30] ^ 1]) + good[31:]: "CRC",
            good.replace(struct.pack(">IIBBBBB", 4, 4, 8, 2, 0, 0, 0),
                         struct.pack(">IIBBBBB", 4, 4, 16, 2, 0, 0, 0)): "",
        }
        for data, reason in cases.items():
            with self.assertRaises(png.PngError) as ctx:
                png.decode(data)
            self.assertIn(reason, str(ctx.exception))
        interlaced = png.SIGNATURE + _chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 1))
        with self.assertRaisesRegex(png.PngError, "interlaced"):
            png.decode(interlaced + _chunk(b"IEND", b""))
        bad_filter = png.SIGNATURE + _chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 0))
        bad_filter += _chunk(b"IDAT", zlib.compress(b"\x07\x00")) + _chunk(b"IEND", b"")
        with self.assertRaisesRegex(png.PngError, "filter type 7"):
            png.decode(bad_filter)


GOLDEN = Path(__file__).resolve().parents[3] / "preview" / "tests" / "golden" / "offer_page_1080x1920.png"


class EngineRenderedTest(unittest.TestCase):
    def test_the_preview_renderers_golden_image(self):
        """A PNG of the engine's own renderer (adaptive filters: Sub, Up and Paeth rows)."""
        img = png.decode(GOLDEN.read_bytes())
        self.assertEqual((img.width, img.height), (1080, 1920))
        # The page's background, Color(0xFF1B1035), in a corner.
        self.assertEqual(img.pixels[0:3], bytes([0x1B, 0x10, 0x35]))
        self.assertEqual(png.compare(img, img).score, 1.0)
        darker = png.Image(img.width, img.height, bytes(v // 2 for v in img.pixels))
        self.assertLess(png.compare(img, darker).score, 1.0)


def solid(width, height, rgb):
    return png.Image(width, height, bytes(rgb) * (width * height))


class CompareTest(unittest.TestCase):
    def test_identical_images_score_one(self):
        img = png.Image(8, 6, b"".join(rgb_rows(8, 6)))
        self.assertEqual(png.compare(img, img).score, 1.0)

    def test_black_against_white_scores_zero(self):
        self.assertEqual(png.compare(solid(4, 4, (0, 0, 0)), solid(4, 4, (255, 255, 255))).score, 0.0)

    def test_sizes_differ_nearest_neighbour(self):
        # A 2x2 checker scaled up 3 times is the same picture at another size.
        small = png.Image(2, 2, bytes([255, 0, 0, 0, 0, 255, 0, 0, 255, 255, 0, 0]))
        big = png.resize_nearest(small, 6, 6)
        self.assertEqual(big.pixels[0:3], bytes([255, 0, 0]))
        self.assertEqual(big.pixels[3 * 5:3 * 6], bytes([0, 0, 255]))
        self.assertEqual(png.compare(big, small).score, 1.0)
        self.assertEqual(png.compare(small, big).score, 1.0)

    def test_half_changed_scores_between(self):
        a = solid(10, 10, (100, 100, 100))
        b = png.Image(10, 10, bytes([100] * 150) + bytes([200] * 150))
        r = png.compare(a, b)
        self.assertAlmostEqual(r.mean_abs_diff, 50 / 255, places=6)
        self.assertAlmostEqual(r.score, 1 - 50 / 255, places=6)

    def test_large_images_are_compared_on_a_small_grid(self):
        a = solid(1080, 2340, (10, 20, 30))
        r = png.compare(a, solid(540, 1170, (10, 20, 30)))
        self.assertEqual(max(r.width, r.height), png.COMPARE_SIDE)
        self.assertEqual(r.score, 1.0)
