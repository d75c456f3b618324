import io
import json
import os
import tempfile
import unittest
import zipfile
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from unittest import mock

from offer_author import cli, export

BODY = "Ab3dEf6hIj9kLm2nOp5rSt8vWx1zQw4eRt7y"


class ExportTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.root = Path(self.tmp.name) / "screen"
        (self.root / "lib").mkdir(parents=True)
        (self.root / "assets").mkdir()
        (self.root / ".dart_tool").mkdir()
        (self.root / "lib" / "offer_page.dart").write_text(
            "// Replace <KEY> with svc_live_sk_xxxxxxxxxxxxxxxxxxxx in your own build\n"
            "class OfferPage {}\n")
        (self.root / "assets" / "chest.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(64))
        (self.root / ".dart_tool" / "cache.dart").write_text(f"ofr_auth_{BODY}")
        (self.root / "notes.md").write_text(f"ofr_auth_{BODY}")  # not a screen file
        # The SDK configuration: if the tool opened it, reading would fail loudly.
        svc = self.root / "svc_config.json"
        svc.write_text(json.dumps({"api_key": f"ofr_live_sk_{BODY}"}))
        os.chmod(svc, 0)

    def run_cli(self, *argv):
        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            code = cli.main(list(argv))
        return code, out.getvalue(), err.getvalue()

    def test_collects_sources_and_assets_and_never_opens_svc_config(self):
        real_open = Path.read_bytes
        opened = []

        def spy(path):
            opened.append(path.name)
            return real_open(path)

        with mock.patch.object(Path, "read_bytes", spy):
            collected = export.collect(self.root)
        self.assertEqual([rel for rel, _ in collected.files],
                         ["assets/chest.png", "lib/offer_page.dart"])
        self.assertNotIn("svc_config.json", opened)
        self.assertEqual(collected.secrets, [])
        self.assertIn(("svc_config.json", "the game's SDK configuration: never read"),
                      collected.skipped)

    def test_writes_a_bundle_with_a_manifest(self):
        out = Path(self.tmp.name) / "export.zip"
        code, stdout, _ = self.run_cli("export", str(self.root), "--out", str(out))
        self.assertEqual(code, 0)
        self.assertIn("skipped svc_config.json", stdout)
        with zipfile.ZipFile(out) as z:
            names = sorted(z.namelist())
            manifest = json.loads(z.read("manifest.json"))
        self.assertEqual(names, ["files/assets/chest.png", "files/lib/offer_page.dart",
                                 "manifest.json"])
        self.assertEqual([f["kind"] for f in manifest["files"]], ["asset", "source"])

    def test_aborts_naming_the_file_and_line_of_each_key(self):
        (self.root / "lib" / "store.dart").write_text(
            f"import 'x.dart';\n\nconst key = 'acme_test_sk_{BODY}';\n")
        (self.root / "assets" / "strings.json").write_text(f'{{"k": "ofr_auth_{BODY}"}}')
        out = Path(self.tmp.name) / "export.zip"
        code, _, err = self.run_cli("export", str(self.root), "--out", str(out))
        self.assertEqual(code, 1)
        self.assertIn("secret_pattern_found: lib/store.dart:3:", err)
        self.assertIn("a sandbox SDK key", err)
        self.assertIn("secret_pattern_found: assets/strings.json:1:", err)
        self.assertNotIn(BODY, err)
        self.assertFalse(out.exists())

    def test_a_folder_without_dart(self):
        empty = Path(self.tmp.name) / "empty"
        empty.mkdir()
        self.assertEqual(self.run_cli("export", str(empty))[0], 2)
        self.assertEqual(self.run_cli("export", str(empty / "nope"))[0], 2)
