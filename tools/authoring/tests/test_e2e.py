"""End to end: the tool, run as a user runs it, against a real engine (tests/engine.py).

A game with one item is created over REST with an admin token; then the tool signs in through
device sign-in (approved here with a developer token, as a person would in the dashboard),
validates the shipped example page and a broken one, saves drafts, refuses an export that
holds a key, and explains a revoked key.
"""

import json
import os
import re
import shutil
import stat
import tempfile
import threading
import unittest
import zlib
from pathlib import Path

from offer_author import png
from offer_author.keys import _base62_fixed

from tests.engine import REPO_ROOT, Engine, run_tool, start_tool

FIXTURE = REPO_ROOT / "domain" / "tests" / "fixtures" / "offer_page.dart"
# The preview renderer's golden image of the same page (500 Gems, the art of gem_art()).
GOLDEN = REPO_ROOT / "preview" / "tests" / "golden" / "offer_page_1080x1920.png"
BINDINGS = {"items": ["gems_100"], "title": "Spring sale", "discount": 40}


def gem_art(side=64) -> bytes:
    """The golden image's item art: a purple square with a gold disc (radius 20 of 64),
    its edge smoothed by 4x4 supersampling."""
    purple, gold = (120, 40, 200), (255, 200, 40)
    pixels = bytearray()
    for y in range(side):
        for x in range(side):
            inside = sum(((x + (i + 0.5) / 4 - 32) ** 2 + (y + (j + 0.5) / 4 - 32) ** 2) <= 400
                         for i in range(4) for j in range(4)) / 16
            pixels += bytes(round(p + (g - p) * inside) for p, g in zip(purple, gold))
    return png.encode_rgb(side, side, bytes(pixels))


class EndToEnd(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.engine = Engine()
        try:
            cls.admin = cls.engine.token("admin", sub="alice")
            cls.developer = cls.engine.token("developer", sub="bob")
            status, game = cls.engine.api("POST", "/v1/games", {
                "name": "Dragon Quest", "genre": "rpg",
                "currencies": [{"currency_id": "gems", "kind": "hard"}]}, cls.admin)
            assert status == 201, (status, game)
            cls.game = game["game_id"]
            status, art = cls.engine.upload(f"/v1/games/{cls.game}/assets", gem_art(),
                                            "image/png", cls.admin)
            assert status == 201, (status, art)
            status, body = cls.engine.api("POST", f"/v1/games/{cls.game}/items/bulk", {"items": [{
                "item_id": "gems_100", "item_name": "100 Gems", "category": "currency_pack",
                "currency_id": "gems", "quantity": 100, "price_usd": 0.99,
                "is_consumable": True, "fallback_eligible": True}, {
                "item_id": "gems_500", "item_name": "500 Gems", "category": "currency_pack",
                "currency_id": "gems", "quantity": 500, "price_usd": 4.99,
                "image": art["asset_id"],
                "is_consumable": True, "fallback_eligible": True}]}, cls.admin)
            assert status in (200, 201), (status, body)
        except BaseException:
            cls.engine.stop()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.engine.stop()

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.env = dict(os.environ, XDG_CONFIG_HOME=os.path.join(self.tmp.name, "config"),
                        OFFER_BASE_URL=self.engine.url)
        self.env.pop("OFFER_GAME", None)
        self.page = Path(self.tmp.name) / "offer_page.dart"
        shutil.copy(FIXTURE, self.page)

    def tool(self, *args, **kw):
        return run_tool(list(args), self.env, **kw)

    def credentials(self):
        return Path(self.env["XDG_CONFIG_HOME"]) / "offer-author" / "credentials.json"

    def device_sign_in(self, decide):
        """Runs `login`, reads the code it shows, and lets `decide(user_code)` act on it."""
        proc = start_tool(["login", "--game", self.game], self.env)
        shown = []

        def read():
            for line in proc.stdout:
                shown.append(line)
                m = re.search(r"code: ([A-Z]{4}-[A-Z]{4})", line)
                if m:
                    decide(m.group(1))
        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        try:
            code = proc.wait(60)
        finally:
            if proc.poll() is None:
                proc.kill()
        reader.join(5)
        err = proc.stderr.read()
        proc.stdout.close()
        proc.stderr.close()
        return code, "".join(shown), err

    def approve(self, user_code):
        status, body = self.engine.api("POST", "/v1/auth/device/approve",
                                       {"user_code": user_code, "game_id": self.game},
                                       self.developer)
        self.assertEqual(status, 204, body)

    def issue_key(self):
        status, body = self.engine.api("POST", f"/v1/games/{self.game}/authoring-keys",
                                       None, self.admin)
        self.assertEqual(status, 201, body)
        return body

    def test_device_sign_in_then_validate_and_draft(self):
        code, out, err = self.device_sign_in(self.approve)
        self.assertEqual(code, 0, out + err)
        self.assertIn("/dashboard/device", out)  # the verification_uri, shown to the user
        self.assertIn("Signed in", out)
        path = self.credentials()
        self.assertEqual(stat.S_IMODE(path.stat().st_mode), 0o600)
        self.assertEqual(stat.S_IMODE(path.parent.stat().st_mode), 0o700)
        record = json.loads(path.read_text())
        self.assertRegex(record["authoring_key"], r"^ofr_auth_[A-Za-z0-9]{38}$")
        self.assertNotIn(record["authoring_key"], out + err)
        self.assertEqual(record["game_id"], self.game)

        # The shipped example page, with live bindings: valid.
        r = self.tool("validate", str(self.page), "--bindings", json.dumps(BINDINGS))
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("valid: 0 blocker(s)", r.stdout)

        # Bindings from a file, naming an item the catalogue does not have: invalid.
        bindings = Path(self.tmp.name) / "bindings.json"
        bindings.write_text(json.dumps(dict(BINDINGS, items=["no_such_item"])))
        r = self.tool("validate", str(self.page), "--bindings", f"@{bindings}")
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("invalid", r.stdout)
        self.assertIn("[unknown_item]", r.stdout)

        # A page that imports dart:io: blocked, with its gate and line.
        broken = Path(self.tmp.name) / "broken.dart"
        broken.write_text("import 'dart:io';\n" + self.page.read_text())
        r = self.tool("validate", str(broken), "--bindings", json.dumps(BINDINGS))
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertRegex(r.stdout, r"blocker: \[import_not_allowed\] line 1: ")

        # Drafts: a new page, then a second version of it.
        r = self.tool("draft", str(self.page), "--bindings", json.dumps(BINDINGS))
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        saved = json.loads(r.stdout)
        self.assertEqual(saved["version"], 1)
        r = self.tool("draft", str(broken), "--bindings", json.dumps(BINDINGS),
                      "--page-id", saved["page_id"])
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(json.loads(r.stdout), {"page_id": saved["page_id"], "version": 2})
        status, page = self.engine.api(
            "GET", f"/v1/games/{self.game}/custom-pages/{saved['page_id']}", None, self.developer)
        self.assertEqual(status, 200, page)
        self.assertEqual([v["version"] for v in page["versions"]], [1, 2])
        self.assertEqual(page["versions"][0]["created_by"], f"authoring_key:{record['key_id']}")

    def test_a_denied_sign_in_stores_nothing(self):
        def deny(user_code):
            status, body = self.engine.api("POST", "/v1/auth/device/deny",
                                           {"user_code": user_code}, self.developer)
            self.assertEqual(status, 204, body)

        code, out, err = self.device_sign_in(deny)
        self.assertEqual(code, 1, out + err)
        self.assertIn("denied", err)
        self.assertFalse(self.credentials().exists())

    def test_a_pasted_key_then_revoked(self):
        issued = self.issue_key()
        r = self.tool("login", "--key", "-", "--game", self.game,
                      stdin=issued["authoring_key"] + "\n")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertNotIn(issued["authoring_key"], r.stdout + r.stderr)
        r = self.tool("validate", str(self.page), "--bindings", json.dumps(BINDINGS))
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)

        status, _ = self.engine.api(
            "DELETE", f"/v1/games/{self.game}/authoring-keys/{issued['key_id']}", None,
            self.admin)
        self.assertEqual(status, 204)
        r = self.tool("validate", str(self.page), "--bindings", json.dumps(BINDINGS))
        self.assertEqual(r.returncode, 3, r.stdout + r.stderr)
        self.assertIn("revoked", r.stderr)
        self.assertIn("offer-author login", r.stderr)

    def test_a_key_of_the_right_shape_the_engine_never_issued(self):
        issued = self.issue_key()
        # Same shape and a valid checksum, but not this engine's: refused like a revoked one.
        head = issued["authoring_key"][:-7]
        head += "A" if issued["authoring_key"][-7] != "A" else "B"
        forged = head + _base62_fixed(zlib.crc32(head.encode()))
        r = self.tool("login", "--key", forged, "--game", self.game)
        self.assertEqual(r.returncode, 0, r.stderr)
        r = self.tool("draft", str(self.page), "--bindings", json.dumps(BINDINGS))
        self.assertEqual(r.returncode, 3, r.stdout + r.stderr)
        self.assertIn("refused the authoring key", r.stderr)

    def test_export_aborts_on_a_planted_key(self):
        issued = self.issue_key()
        screen = Path(self.tmp.name) / "screen"
        (screen / "lib").mkdir(parents=True)
        shutil.copy(FIXTURE, screen / "lib" / "offer_page.dart")
        (screen / "svc_config.json").write_text(json.dumps({"api_key": "never read"}))
        r = self.tool("export", str(screen), "--out", str(Path(self.tmp.name) / "ok.zip"))
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("skipped svc_config.json", r.stdout)

        source = (screen / "lib" / "offer_page.dart").read_text().splitlines(keepends=True)
        source.insert(3, f"const key = '{issued['authoring_key']}';\n")
        (screen / "lib" / "offer_page.dart").write_text("".join(source))
        out = Path(self.tmp.name) / "leak.zip"
        r = self.tool("export", str(screen), "--out", str(out))
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("secret_pattern_found: lib/offer_page.dart:4:", r.stderr)
        self.assertNotIn(issued["authoring_key"], r.stdout + r.stderr)
        self.assertFalse(out.exists())

        # validate refuses the same page before sending anything.
        r = self.tool("login", "--key", issued["authoring_key"], "--game", self.game)
        self.assertEqual(r.returncode, 0, r.stderr)
        r = self.tool("validate", str(screen / "lib" / "offer_page.dart"), "--bindings",
                      json.dumps(BINDINGS))
        self.assertEqual(r.returncode, 1)
        self.assertIn("nothing was sent", r.stderr)
    def test_a_run_counts_validations_and_comparisons(self):
        issued = self.issue_key()
        r = self.tool("login", "--key", issued["authoring_key"], "--game", self.game)
        self.assertEqual(r.returncode, 0, r.stderr)
        r = self.tool("run", "open")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        run_id = json.loads(r.stdout)["run_id"]
        bindings = json.dumps(BINDINGS)
        # The first validation and three fix attempts; the fifth is refused.
        for _ in range(4):
            r = self.tool("validate", str(self.page), "--bindings", bindings, "--run", run_id)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        r = self.tool("validate", str(self.page), "--bindings", bindings, "--run", run_id)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("run open", r.stderr)
        # Without the run, validation is not limited.
        r = self.tool("validate", str(self.page), "--bindings", bindings)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)

        a = Path(self.tmp.name) / "a.png"
        b = Path(self.tmp.name) / "b.png"
        a.write_bytes(png.encode_rgb(4, 4, bytes(48)))
        b.write_bytes(png.encode_rgb(4, 4, bytes([255]) * 24 + bytes(24)))
        for taken in (1, 2, 3):
            r = self.tool("compare", str(a), str(b), "--run", run_id)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            self.assertEqual(json.loads(r.stdout.splitlines()[0])["score"], 0.5)
            self.assertEqual(json.loads(r.stdout.splitlines()[1])["comparisons"], taken)
        r = self.tool("compare", str(a), str(b), "--run", run_id)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("all its 3 visual comparisons", r.stderr)

        r = self.tool("run", "show", run_id)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        run = json.loads(r.stdout)
        self.assertEqual((run["validations"], run["comparisons"]), (4, 3))

    def test_a_cloud_run_waits_for_a_second_member(self):
        issued = self.issue_key()  # issued by the admin: the key's approver
        r = self.tool("login", "--key", issued["authoring_key"], "--game", self.game)
        self.assertEqual(r.returncode, 0, r.stderr)
        r = self.tool("run", "open", "--mode", "cloud")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        run_id = json.loads(r.stdout)["run_id"]
        args = ("validate", str(self.page), "--bindings", json.dumps(BINDINGS), "--run", run_id)
        r = self.tool(*args)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("confirm", r.stderr)
        status, body = self.engine.api(
            "POST", f"/v1/games/{self.game}/custom-pages/runs/{run_id}/confirm", None,
            self.engine.token("developer", sub="carol"))
        self.assertEqual(status, 200, body)
        r = self.tool(*args)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)


    def test_draft_preview_download_and_compare(self):
        issued = self.issue_key()
        r = self.tool("login", "--key", issued["authoring_key"], "--game", self.game)
        self.assertEqual(r.returncode, 0, r.stderr)
        bindings = json.dumps(dict(BINDINGS, items=["gems_500"]))
        r = self.tool("draft", str(self.page), "--bindings", bindings)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        saved = json.loads(r.stdout)

        # Queued only: the preview's id.
        r = self.tool("preview", "--page-id", saved["page_id"], "--version", "1")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertRegex(json.loads(r.stdout)["preview_id"], r"^[0-9a-f-]{36}$")

        # Waited for in an authoring run, and its screenshots downloaded with the key.
        r = self.tool("run", "open")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        run_id = json.loads(r.stdout)["run_id"]
        out = Path(self.tmp.name) / "shots"
        r = self.tool("preview", "--page-id", saved["page_id"], "--version", "1", "--wait",
                      "--out", str(out), "--run", run_id, timeout=120)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        shots = sorted(out.iterdir())
        self.assertEqual(len(shots), 2, r.stdout)
        sizes = []
        for shot in shots:
            img = png.decode(shot.read_bytes())
            sizes.append((img.width, img.height))
            self.assertTrue(shot.name.endswith(f"-{img.width}x{img.height}.png"), shot.name)
        self.assertIn((1080, 1920), sizes)
        phone = next(s for s in shots if s.name.endswith("-1080x1920.png"))

        # The rendered page against the renderer's golden image of the same page and art:
        # nearly identical; against a white page: far less alike.
        r = self.tool("compare", str(phone), str(GOLDEN), "--run", run_id)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        alike = json.loads(r.stdout.splitlines()[0])["score"]
        self.assertGreater(alike, 0.98)
        # The run holds the preview and the comparison, which names the preview compared
        # (read from the screenshot's file name).
        r = self.tool("run", "show", run_id)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        calls = json.loads(r.stdout)["calls"]
        self.assertEqual([c["kind"] for c in calls], ["preview", "comparison"])
        preview_id = calls[0]["outcome"]["preview_id"]
        self.assertTrue(phone.name.startswith(preview_id))
        self.assertEqual(calls[1]["outcome"]["preview_id"], preview_id)
        self.assertEqual(calls[1]["outcome"]["score"], alike)
        white = Path(self.tmp.name) / "white.png"
        white.write_bytes(png.encode_rgb(108, 192, b"\xff" * (108 * 192 * 3)))
        r = self.tool("compare", str(phone), str(white))
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertLess(json.loads(r.stdout)["score"], alike - 0.3)

        # A preview of a version that does not exist.
        r = self.tool("preview", "--page-id", saved["page_id"], "--version", "9")
        self.assertEqual(r.returncode, 4, r.stdout + r.stderr)
        self.assertIn("not found", r.stderr)
