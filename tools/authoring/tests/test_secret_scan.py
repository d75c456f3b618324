import json
import unittest
from pathlib import Path

from offer_author.secret_scan import scan

# The engine's scanner is tested against the same list.
NEAR_MISSES = Path(__file__).resolve().parents[3] / "domain/testdata/secret_scan_near_misses.json"
BODY = "Ab3dEf6hIj9kLm2nOp5rSt8vWx1zQw4eRt7y"


class SecretScanTest(unittest.TestCase):
    def test_finds_every_kind_with_any_prefix_and_checksum(self):
        for marker, kind in (("live_sk", "a production SDK key"),
                             ("test_sk", "a sandbox SDK key"), ("auth", "an authoring key")):
            text = f"const k = 'acme42_{marker}_{BODY}';"
            hits = scan(text)
            self.assertEqual(len(hits), 1, text)
            self.assertEqual(hits[0].kind, kind)
            self.assertEqual(hits[0].marker, marker)
            self.assertEqual(hits[0].prefix, "acme42")
            self.assertNotIn(BODY, hits[0].message())

    def test_a_broken_checksum_or_another_prefix_still_matches(self):
        self.assertEqual(len(scan("zz_live_sk_AAAAbbbbCCCCdddd")), 1)
        self.assertEqual(len(scan("url?key=otherstudio_test_sk_0123456789abcdefXYZ&x")), 1)

    def test_a_long_prefix_is_shown_by_its_last_16_characters(self):
        hits = scan(f"abcdefghijklmnopqrstu_auth_{BODY}")
        self.assertEqual(hits[0].prefix, "fghijklmnopqrstu")

    def test_counts_lines(self):
        text = f"a\nb\nc ab_auth_{BODY}\n\nd ab_auth_{BODY}"
        self.assertEqual([h.line for h in scan(text)], [3, 5])

    def test_placeholders_and_near_misses_are_not_keys(self):
        texts = json.loads(NEAR_MISSES.read_text(encoding="utf-8"))
        self.assertGreater(len(texts), 10)
        for text in texts:
            self.assertEqual(scan(text), [], text)

    def test_multibyte_text_and_binary_data_are_safe(self):
        self.assertEqual(scan("é_live_sk_ü…_auth_"), [])
        self.assertEqual(len(scan(f"é ab_auth_{BODY} ü")), 1)
        blob = bytes(range(256)) * 4 + f"tEXtkey\x00ab_live_sk_{BODY}".encode() + b"\xff\x00"
        self.assertEqual(len(scan(blob)), 1)

    def test_the_scan_continues_after_a_hit(self):
        text = f"ab_auth_{BODY}_live_sk_{BODY} cd_test_sk_{BODY}"
        # The first body ends at `_`; the body's last lowercase letters and digits make the
        # next one's prefix, as in the engine's scanner.
        hits = scan(text)
        self.assertEqual([h.marker for h in hits], ["auth", "live_sk", "test_sk"])
        self.assertEqual(hits[1].prefix, "t7y")


if __name__ == "__main__":
    unittest.main()
