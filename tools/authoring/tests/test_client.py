"""The client against a scripted server: error mapping, the sign-in's polling rules, the
preview's wait and download, and the comparison report."""

import io
import json
import os
import tempfile
import unittest
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from unittest import mock

from offer_author import cli, config, png, signin
from offer_author.client import ApiError, Client, EngineUnreachable, error_from_http, explain

from tests.keyutil import make_key
from tests.stub import Stub, error

GAME = "0b5c8a52-3a43-4c1e-9a57-6d0c2f6f1a11"


class ErrorMappingTest(unittest.TestCase):
    def test_the_engine_error_shape_is_read(self):
        e = error_from_http(422, json.dumps(error("validation_failed", "validation failed", {
            "errors": [{"field": "bindings", "reason": "must be an object", "index": 2}]})).encode())
        self.assertEqual((e.status, e.code), (422, "validation_failed"))
        self.assertIn("bindings[2]: must be an object", explain(e))

    def test_a_body_of_another_shape_keeps_its_status(self):
        e = error_from_http(502, b"<html>Bad gateway</html>")
        self.assertEqual(e.code, "http_502")
        self.assertIn("502", explain(e))

    def test_expired_and_revoked_keys_say_what_to_do(self):
        expired = explain(ApiError(401, "authoring_key_expired", "authoring key expired"))
        self.assertIn("expired", expired)
        self.assertIn("offer-author login", expired)
        revoked = explain(ApiError(401, "unauthorized", "unauthorized"))
        self.assertIn("revoked", revoked)
        self.assertIn("offer-author login", revoked)
        self.assertIn("authoring key may", explain(ApiError(403, "wrong_credential", "")))

    def test_rate_limited_names_the_wait(self):
        e = error_from_http(429, json.dumps(error("rate_limited", "", {"retry_after": 7})).encode())
        self.assertEqual(e.retry_after, 7.0)
        self.assertIn("7 s", explain(e))

    def test_an_engine_that_is_not_there(self):
        with self.assertRaises(EngineUnreachable) as ctx:
            Client("http://127.0.0.1:9", timeout=2).request("GET", "/healthz")
        self.assertIn("OFFER_BASE_URL", str(ctx.exception))


class StubTestCase(unittest.TestCase):
    def setUp(self):
        self.stub = Stub()
        self.addCleanup(self.stub.close)
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        patcher = mock.patch.dict(os.environ, {"XDG_CONFIG_HOME": self.tmp.name,
                                               "OFFER_BASE_URL": self.stub.url})
        patcher.start()
        self.addCleanup(patcher.stop)

    def run_cli(self, *argv):
        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            code = cli.main(list(argv))
        return code, out.getvalue(), err.getvalue()

    def sign_in(self):
        self.key = make_key(seed=7)
        config.save_credentials({"authoring_key": self.key, "game_id": GAME})


class SignInPollTest(StubTestCase):
    STARTED = {"device_code": "dc", "user_code": "BCDF-GHJK", "verification_uri": "u",
               "interval": 5, "expires_in": 600}

    def poll(self, clock=None):
        slept = []
        now = [0.0]

        def sleep(s):
            slept.append(s)
            now[0] += s

        result = signin.poll(Client(self.stub.url), self.STARTED, sleep=sleep,
                             clock=clock or (lambda: now[0]))
        return result, slept

    def test_pending_then_slow_down_then_the_key(self):
        path = "/v1/auth/device/token"
        self.stub.answer("POST", path, 400, error("authorization_pending"))
        self.stub.answer("POST", path, 400, error("slow_down", "", {"interval": 10}))
        self.stub.answer("POST", path, 400, error("slow_down"))  # no details: 5 more
        self.stub.answer("POST", path, 400, error("authorization_pending"))
        self.stub.answer("POST", path, 200, {"key_id": "k", "authoring_key": "a",
                                             "expires_at": "t"})
        result, slept = self.poll()
        self.assertEqual(result["authoring_key"], "a")
        self.assertEqual(slept, [5, 5, 10, 15, 15])
        bodies = [json.loads(r[3]) for r in self.stub.requests]
        self.assertEqual(bodies, [{"device_code": "dc"}] * 5)
        self.assertTrue(all("Authorization" not in r[2] for r in self.stub.requests))

    def test_denied_and_expired_end_the_sign_in(self):
        for code, words in (("access_denied", "denied"), ("expired_token", "expired"),
                            ("invalid_grant", "again")):
            stub = Stub()
            try:
                stub.answer("POST", "/v1/auth/device/token", 400, error(code))
                with self.assertRaisesRegex(signin.SignInFailed, words):
                    signin.poll(Client(stub.url), self.STARTED, sleep=lambda s: None)
            finally:
                stub.close()

    def test_the_code_runs_out_while_pending(self):
        self.stub.answer("POST", "/v1/auth/device/token", 400, error("authorization_pending"))
        with self.assertRaisesRegex(signin.SignInFailed, "expired"):
            self.poll()
        # 600 s at 5 s a poll: 120 polls, then it stops by itself.
        self.assertEqual(len(self.stub.requests), 120)

    def test_login_stores_the_key_with_mode_0600(self):
        key = make_key(seed=9)
        self.stub.answer("POST", "/v1/auth/device", 200, dict(self.STARTED, interval=1))
        self.stub.answer("POST", "/v1/auth/device/token", 200,
                         {"key_id": "k1", "authoring_key": key, "expires_at": "2027-01-01T00:00:00Z"})
        code, out, _ = self.run_cli("login", "--game", GAME)
        self.assertEqual(code, 0)
        self.assertIn("BCDF-GHJK", out)
        self.assertNotIn(key, out)
        record = config.load_credentials()
        self.assertEqual((record["authoring_key"], record["key_id"], record["game_id"]),
                         (key, "k1", GAME))
        self.assertEqual(os.stat(config.credentials_path()).st_mode & 0o777, 0o600)


class CredentialErrorsTest(StubTestCase):
    def test_expired_and_revoked_keys_exit_3_with_the_fix(self):
        self.sign_in()
        page = Path(self.tmp.name) / "p.dart"
        page.write_text("class P {}")
        path = f"/v1/games/{GAME}/custom-pages/validate"
        self.stub.answer("POST", path, 401, error("authoring_key_expired", "authoring key expired"))
        code, _, err = self.run_cli("validate", str(page), "--bindings", "{}")
        self.assertEqual(code, 3)
        self.assertIn("expired", err)
        self.assertIn("offer-author login", err)
        headers = self.stub.requests[-1][2]
        self.assertEqual(headers["Authorization"], f"Bearer {self.key}")

    def test_a_key_in_the_page_is_never_sent(self):
        self.sign_in()
        page = Path(self.tmp.name) / "p.dart"
        page.write_text("// ok\nconst k = 'ofr_live_sk_Ab3dEf6hIj9kLm2nOp5rSt8v';\n")
        code, _, err = self.run_cli("validate", str(page), "--bindings", "{}")
        self.assertEqual(code, 1)
        self.assertIn("secret_pattern_found", err)
        self.assertIn(":2:", err)
        self.assertNotIn("Ab3dEf6hIj9kLm2nOp5rSt8v", err)
        self.assertEqual(self.stub.requests, [])


class PreviewTest(StubTestCase):
    def test_wait_then_download_with_the_key_on_the_engine_only(self):
        self.sign_in()
        other = Stub()  # another origin: a storage host the screenshot may live on
        self.addCleanup(other.close)
        shot = png.encode_rgb(2, 2, bytes(12))
        self.stub.answer("POST", f"/v1/games/{GAME}/custom-pages/preview", 202,
                         {"preview_id": "p1"})
        status = f"/v1/games/{GAME}/custom-pages/preview/p1"
        self.stub.answer("GET", status, 200, {"status": "queued", "screenshots": []})
        self.stub.answer("GET", status, 200, {"status": "building", "screenshots": []})
        self.stub.answer("GET", status, 200, {
            "status": "ready", "expires_at": "2026-11-25T00:00:00Z", "screenshots": [
                {"url": f"/v1/games/{GAME}/custom-pages/preview/p1/screenshots/0.png",
                 "width": 2, "height": 2},
                {"url": f"{other.url}/s/1.png", "width": 2, "height": 2}]})
        self.stub.answer("GET", f"/v1/games/{GAME}/custom-pages/preview/p1/screenshots/0.png",
                         200, shot)
        other.answer("GET", "/s/1.png", 200, shot)
        out_dir = Path(self.tmp.name) / "shots"
        with mock.patch("time.sleep"):
            code, out, err = self.run_cli("preview", "--page-id", "pg", "--version", "2",
                                          "--wait", "--out", str(out_dir))
        self.assertEqual(code, 0, err)
        self.assertEqual(sorted(p.name for p in out_dir.iterdir()),
                         ["p1-1-2x2.png", "p1-2-2x2.png"])
        self.assertEqual(json.loads(self.stub.requests[0][3]), {"page_id": "pg", "version": 2})
        self.assertTrue(all(r[2].get("Authorization") == f"Bearer {self.key}"
                            for r in self.stub.requests))
        self.assertNotIn("Authorization", other.requests[0][2])

    def test_a_full_queue_is_retried_after_its_retry_after(self):
        self.sign_in()
        path = f"/v1/games/{GAME}/custom-pages/preview"
        self.stub.answer("POST", path, 503, error("preview_queue_full", "", {}),
                         {"Retry-After": "3"})
        self.stub.answer("POST", path, 202, {"preview_id": "p3"})
        with mock.patch("time.sleep") as sleep:
            code, out, err = self.run_cli("preview", "--page-id", "pg", "--version", "1")
        self.assertEqual(code, 0, err)
        self.assertEqual(json.loads(out), {"preview_id": "p3"})
        sleep.assert_called_once_with(3.0)

    def test_a_share_in_use_is_retried_after_its_retry_after(self):
        self.sign_in()
        path = f"/v1/games/{GAME}/custom-pages/preview"
        self.stub.answer("POST", path, 429, error("preview_share_full", "", {}),
                         {"Retry-After": "1"})
        self.stub.answer("POST", path, 202, {"preview_id": "p4"})
        with mock.patch("time.sleep") as sleep:
            code, out, err = self.run_cli("preview", "--page-id", "pg", "--version", "1")
        self.assertEqual(code, 0, err)
        self.assertEqual(json.loads(out), {"preview_id": "p4"})
        sleep.assert_called_once_with(1.0)

    def test_a_failed_preview_exits_1_with_its_error(self):
        self.sign_in()
        self.stub.answer("POST", f"/v1/games/{GAME}/custom-pages/preview", 202,
                         {"preview_id": "p2"})
        self.stub.answer("GET", f"/v1/games/{GAME}/custom-pages/preview/p2", 200,
                         {"status": "failed", "screenshots": [], "error": "layout overflow"})
        with mock.patch("time.sleep"):
            code, _, err = self.run_cli("preview", "--page-id", "pg", "--version", "1", "--wait")
        self.assertEqual(code, 1)
        self.assertIn("layout overflow", err)


class RunTest(StubTestCase):
    def test_calls_name_their_run_and_refusals_exit_1(self):
        self.sign_in()
        self.stub.answer("POST", f"/v1/games/{GAME}/custom-pages/runs", 201,
                         {"run_id": "r9", "mode": "local", "expires_at": "t", "calls": []})
        code, out, _ = self.run_cli("run", "open")
        self.assertEqual((code, json.loads(out)["run_id"]), (0, "r9"))
        self.assertEqual(json.loads(self.stub.requests[-1][3]), {"mode": "local"})
        page = Path(self.tmp.name) / "p.dart"
        page.write_text("class P {}")
        path = f"/v1/games/{GAME}/custom-pages/validate"
        self.stub.answer("POST", path, 409, error("run_not_confirmed"))
        with mock.patch.dict(os.environ, {"OFFER_RUN": "r9"}):
            code, _, err = self.run_cli("validate", str(page), "--bindings", "{}")
        self.assertEqual(code, 1)
        self.assertIn("confirm", err)
        self.assertEqual(self.stub.requests[-1][2]["X-Authoring-Run"], "r9")
        code, _, _ = self.run_cli("validate", str(page), "--bindings", "{}")
        self.assertNotIn("X-Authoring-Run", self.stub.requests[-1][2])


class CompareTest(StubTestCase):
    def test_compare_prints_a_score_and_reports_it_to_the_run(self):
        self.sign_in()
        a = Path(self.tmp.name) / "a.png"
        b = Path(self.tmp.name) / "b.png"
        a.write_bytes(png.encode_rgb(2, 1, bytes([0, 0, 0, 255, 255, 255])))
        b.write_bytes(png.encode_rgb(4, 2, bytes([0, 0, 0] * 2 + [255, 255, 255] * 2) * 2))
        code, out, _ = self.run_cli("compare", str(a), str(b))
        self.assertEqual(code, 0)
        self.assertEqual(json.loads(out)["score"], 1.0)
        path = f"/v1/games/{GAME}/custom-pages/runs/r1/comparisons"
        self.stub.answer("POST", path, 201, {"run_id": "r1", "comparisons": 1})
        code, out, _ = self.run_cli("compare", str(a), str(b), "--run", "r1")
        self.assertEqual(code, 0)
        self.assertEqual(json.loads(self.stub.requests[-1][3]), {"score": 1.0})
        self.assertEqual(json.loads(out.splitlines()[-1])["comparisons"], 1)

        # A screenshot saved by `preview --wait` names its preview.
        preview_id = "5f0c6a8e-1b2c-4d3e-8f40-123456789abc"
        saved = Path(self.tmp.name) / f"{preview_id}-1-1080x1920.png"
        saved.write_bytes(a.read_bytes())
        self.stub.answers[("POST", path)].clear()
        self.stub.answer("POST", path, 409, error("run_limit_reached", "run limit reached",
                                                  {"limit": "comparison", "max": 3}))
        code, _, err = self.run_cli("compare", str(saved), str(b), "--run", "r1")
        self.assertEqual(code, 1)
        self.assertEqual(json.loads(self.stub.requests[-1][3]),
                         {"score": 1.0, "preview_id": preview_id})
        self.assertIn("all its 3 visual comparisons", err)
        self.assertIn("run open", err)

    def test_not_a_png(self):
        a = Path(self.tmp.name) / "a.png"
        a.write_text("hello")
        code, _, err = self.run_cli("compare", str(a), str(a))
        self.assertEqual(code, 2)
        self.assertIn("not a PNG", err)
