import unittest

from offer_author.keys import check_authoring_key, key_prefix

from tests.keyutil import make_key


class KeyShapeTest(unittest.TestCase):
    def test_a_well_formed_key_passes(self):
        key = make_key()
        self.assertIsNone(check_authoring_key(key))
        self.assertTrue(key_prefix(key).startswith("ofr_auth_"))
        self.assertEqual(key_prefix(key), key[:13] + "...")

    def test_a_typo_fails_the_checksum(self):
        key = make_key()
        typo = key[:12] + ("A" if key[12] != "A" else "B") + key[13:]
        self.assertIn("checksum", check_authoring_key(typo))

    def test_other_shapes_are_refused(self):
        key = make_key()
        self.assertIn("SDK key", check_authoring_key(key.replace("_auth_", "_live_sk_")))
        for bad in ("", "ofr_auth_short", key[:-1], "OFR" + key[3:], key + "x", "x_" + key[4:]):
            self.assertIsNotNone(check_authoring_key(bad), bad)
