import os
import stat
import tempfile
import unittest
from unittest import mock

from offer_author import config
from offer_author.cli import main

from tests.keyutil import make_key


class ConfigTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        patcher = mock.patch.dict(os.environ, {"XDG_CONFIG_HOME": self.tmp.name})
        patcher.start()
        self.addCleanup(patcher.stop)

    def mode(self, path):
        return stat.S_IMODE(os.stat(path).st_mode)

    def test_the_file_is_0600_and_its_folder_0700_whatever_the_umask(self):
        old = os.umask(0)
        try:
            path = config.save_credentials({"authoring_key": make_key()})
        finally:
            os.umask(old)
        self.assertEqual(path, config.credentials_path())
        self.assertEqual(str(path), os.path.join(self.tmp.name, "offer-author", "credentials.json"))
        self.assertEqual(self.mode(path), 0o600)
        self.assertEqual(self.mode(path.parent), 0o700)
        self.assertEqual(config.load_credentials()["authoring_key"], make_key())
        self.assertFalse(config.loose_mode())
        self.assertEqual([p.name for p in path.parent.iterdir()], ["credentials.json"])

    def test_rewriting_a_loose_file_closes_it(self):
        folder = os.path.join(self.tmp.name, "offer-author")
        os.makedirs(folder, mode=0o755)
        os.chmod(folder, 0o755)
        path = os.path.join(folder, "credentials.json")
        with open(path, "w") as f:
            f.write("{}")
        os.chmod(path, 0o644)
        self.assertTrue(config.loose_mode())
        config.save_credentials({"authoring_key": make_key(seed=2)})
        self.assertEqual(self.mode(path), 0o600)
        self.assertEqual(self.mode(folder), 0o700)

    def test_home_config_without_xdg(self):
        with mock.patch.dict(os.environ, {"XDG_CONFIG_HOME": "", "HOME": self.tmp.name}):
            self.assertEqual(str(config.config_dir()),
                             os.path.join(self.tmp.name, ".config", "offer-author"))
        with mock.patch.dict(os.environ, {"XDG_CONFIG_HOME": "relative/dir", "HOME": self.tmp.name}):
            self.assertEqual(str(config.config_dir()),
                             os.path.join(self.tmp.name, ".config", "offer-author"))

    def test_login_with_a_pasted_key(self):
        key = make_key(seed=3)
        with mock.patch("sys.stdout"), mock.patch("sys.stderr"):
            self.assertEqual(main(["login", "--key", key, "--game", "g1"]), 0)
            record = config.load_credentials()
            self.assertEqual(record["authoring_key"], key)
            self.assertEqual(record["game_id"], "g1")
            self.assertEqual(self.mode(config.credentials_path()), 0o600)
            # A typo, an SDK key, or junk: refused, nothing stored over the good key.
            for bad in (key[:-1] + ("A" if key[-1] != "A" else "B"),
                        key.replace("_auth_", "_live_sk_"), "hello"):
                self.assertEqual(main(["login", "--key", bad]), 2)
            self.assertEqual(config.load_credentials()["authoring_key"], key)

    def test_login_key_from_stdin(self):
        key = make_key(seed=4)
        with mock.patch("sys.stdin") as stdin, mock.patch("sys.stdout"):
            stdin.readline.return_value = key + "\n"
            self.assertEqual(main(["login", "--key", "-"]), 0)
        self.assertEqual(config.load_credentials()["authoring_key"], key)

    def test_commands_without_a_key_say_how_to_sign_in(self):
        with mock.patch("sys.stderr") as err:
            self.assertEqual(main(["validate", "x.dart", "--bindings", "{}", "--game", "g"]), 3)
        written = "".join(c.args[0] for c in err.write.call_args_list)
        self.assertIn("offer-author login", written)
