//! The `offer-engine` binary as an operator runs it: configuration errors, the token
//! command, the development token, graceful SIGTERM, a restart that keeps the data, one
//! engine per SQLite file; and Redis going away under a running service.

use std::io::{BufRead, BufReader, Lines};
use std::path::Path;
use std::process::{ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use offer_engine::auth::JwtCodec;
use reqwest::StatusCode;
use serde_json::json;

use super::fixtures::{game_body, item};
use super::helpers::{Backend, Role, SECRET, spawn_tuned};

pub const BIN: &str = env!("CARGO_BIN_EXE_offer-engine");

/// The built `offer-engine` binary, run from the package root without the caller's
/// `OFFER__` variables, its development secret kept at `dev_secret` and its store in
/// `offer-engine.db` beside it.
pub fn engine_with(dev_secret: &std::path::Path) -> Command {
    let mut c = Command::new(BIN);
    for (k, _) in std::env::vars() {
        if k.starts_with("OFFER__") {
            c.env_remove(k);
        }
    }
    c.current_dir(env!("CARGO_MANIFEST_DIR"));
    c.env("OFFER__AUTH__DEV_SECRET_FILE", dev_secret);
    c.env(
        "OFFER__STORE__PATH",
        dev_secret.with_file_name("offer-engine.db"),
    );
    c
}

/// The binary with a development secret path of its own that no server has written yet.
pub(super) fn engine() -> Command {
    engine_with(&fresh_secret_path())
}

/// A path in a new temporary folder, for a development secret.
pub fn fresh_secret_path() -> std::path::PathBuf {
    std::env::temp_dir()
        .join(format!("offer-engine-test-{}", uuid::Uuid::new_v4()))
        .join("dev-jwt-secret")
}

/// The token of `alice`, admin of `studio-a`, valid for an hour, for an engine process
/// started with `OFFER__AUTH__JWT_SECRET` set to [`SECRET`] and the default issuer and audience.
pub fn process_admin_token() -> String {
    JwtCodec::new(SECRET.as_bytes(), "offer-engine", "offer-engine-dashboard")
        .mint("alice", "studio-a", Role::Admin, chrono::Duration::hours(1))
        .expect("mint")
}

/// A POST of `body`, as JSON, with `token` to `path` of the engine process at `base`.
pub fn post_json(
    client: &reqwest::Client,
    base: &str,
    path: &str,
    token: &str,
    body: &serde_json::Value,
) -> impl Future<Output = reqwest::Result<reqwest::Response>> + use<> {
    client
        .post(format!("{base}{path}"))
        .bearer_auth(token)
        .json(body)
        .send()
}

/// A spawned engine process, killed when the test ends on any path, so a failing test
/// never leaves a server running.
pub struct Spawned(pub std::process::Child);

impl Drop for Spawned {
    fn drop(&mut self) {
        if matches!(self.0.try_wait(), Ok(None)) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

impl Spawned {
    /// Sends SIGTERM, as an orchestrator stopping the service does.
    pub(super) fn terminate(&self) {
        let pid = nix::unistd::Pid::from_raw(i32::try_from(self.0.id()).expect("pid fits"));
        nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).expect("SIGTERM");
    }

    /// Sends SIGTERM, waits for the exit and removes the folder of `dev_secret`.
    fn stop_and_remove(mut self, dev_secret: &Path) {
        self.terminate();
        let _ = self.0.wait();
        if let Some(dir) = dev_secret.parent() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// The engine of `dev_secret` serving on a free loopback port, and its standard output line
/// by line.
fn serve(dev_secret: &Path) -> (Spawned, Lines<BufReader<ChildStdout>>) {
    let mut child = Spawned(
        engine_with(dev_secret)
            .args(["--bind", "127.0.0.1:0"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn"),
    );
    let lines = BufReader::new(child.0.stdout.take().expect("stdout")).lines();
    (child, lines)
}

/// The `host:port` the engine's start-up line says it listens on.
fn listening_addr(listening: &str) -> String {
    listening
        .rsplit("http://")
        .next()
        .and_then(|rest| rest.split_whitespace().next())
        .expect("addr")
        .to_owned()
}

#[test]
fn bad_configuration_stops_the_start_with_one_line() {
    for (key, value, needle) in [
        ("OFFER__SERVER__BINDD", "127.0.0.1:1", "configuration error"),
        (
            "OFFER__SERVER__BIND",
            "not-an-address",
            "configuration error",
        ),
        ("OFFER__AUTH__KEY_PREFIX", "UPPER", "key_prefix"),
        ("OFFER__STORE__REDIS_URL", "redis://127.0.0.1:1", "store"),
        (
            "OFFER__STORE__REDIS_URL",
            "redis+cluster://a:1,,b:2",
            "seed 2",
        ),
        ("OFFER__STORE__KEY_PREFIX", "a{b}", "key_prefix"),
        ("OFFER__STORE__SYNC", "sometimes", "configuration error"),
        (
            "OFFER__STORE__IDEMPOTENCY_RETENTION_DAYS",
            "7",
            "idempotency_retention_days",
        ),
        (
            "OFFER__STORE__LEDGER_RETENTION_DAYS",
            "30",
            "ledger_retention_days",
        ),
    ] {
        let out = engine().arg("serve").env(key, value).output().expect("run");
        assert!(!out.status.success(), "{key}={value} must fail");
        let stderr = String::from_utf8_lossy(&out.stderr);
        let lines: Vec<_> = stderr
            .lines()
            .filter(|l| l.starts_with("offer-engine:"))
            .collect();
        assert_eq!(lines.len(), 1, "{stderr}");
        assert!(lines[0].contains(needle), "{key}: {stderr}");
    }
}

#[test]
fn token_command_prints_a_jwt_or_refuses_without_a_secret() {
    let out = engine()
        .args(["token", "--studio", "s1", "--role", "admin"])
        .output()
        .expect("run");
    assert!(!out.status.success());
    let out = engine()
        .args([
            "token", "--studio", "s1", "--role", "viewer", "--ttl", "30m",
        ])
        .env("OFFER__AUTH__JWT_SECRET", SECRET)
        .output()
        .expect("run");
    assert!(out.status.success());
    let token = String::from_utf8(out.stdout).expect("utf8");
    assert_eq!(token.trim().split('.').count(), 3);
    let codec = JwtCodec::new(SECRET.as_bytes(), "offer-engine", "offer-engine-dashboard");
    let claims = codec.verify(token.trim()).expect("valid token");
    assert_eq!(claims.studio_id, "s1");
    assert_eq!(claims.role, Role::Viewer);
}

#[test]
fn a_ttl_without_a_unit_is_refused() {
    let out = engine()
        .args(["token", "--studio", "s1", "--role", "admin", "--ttl", "90"])
        .env("OFFER__AUTH__JWT_SECRET", SECRET)
        .output()
        .expect("run");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("needs a unit"));
}

#[tokio::test]
async fn serve_prints_a_dev_token_the_cli_can_match_and_drains_on_sigterm() {
    let secret = fresh_secret_path();
    // `serve`'s options work without naming `serve`.
    let (mut child, mut lines) = serve(&secret);
    let mut next = || lines.next().expect("line").expect("read");
    let listening = next();
    assert!(listening.contains("store: embedded SQLite"), "{listening}");
    // The start-up line says where the data lives.
    let db = secret.with_file_name("offer-engine.db");
    assert!(listening.contains(&db.display().to_string()), "{listening}");
    let addr = listening_addr(&listening);
    // The next line names the dashboard's address.
    let dashboard = next();
    assert!(
        dashboard.contains(&format!("http://{addr}/dashboard")),
        "{dashboard}"
    );
    assert!(next().contains("Development mode"));
    assert!(next().contains("Development admin token"));
    let token = next();
    let client = reqwest::Client::new();
    let create = |token: String| {
        client
            .post(format!("http://{addr}/v1/games"))
            .bearer_auth(token)
            .json(&game_body("rpg"))
            .send()
    };
    assert_eq!(
        create(token).await.expect("request").status(),
        StatusCode::CREATED
    );
    // The CLI, run in the same folder, signs with the server's development secret.
    let out = engine_with(&secret)
        .args([
            "token",
            "--studio",
            "dev-studio",
            "--role",
            "admin",
            "--ttl",
            "10m",
        ])
        .output()
        .expect("run");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let minted = String::from_utf8(out.stdout)
        .expect("utf8")
        .trim()
        .to_owned();
    assert_eq!(
        create(minted).await.expect("request").status(),
        StatusCode::CREATED
    );
    child.terminate();
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        if let Some(status) = child.0.try_wait().expect("wait") {
            assert!(status.success(), "clean exit on SIGTERM, got {status}");
            break;
        }
        assert!(Instant::now() < deadline, "did not exit after SIGTERM");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Started again on the same file, the engine still has both games.
    let (again, mut lines) = serve(&secret);
    let listening = lines.next().expect("line").expect("read");
    let addr = listening_addr(&listening);
    // After the dashboard line and the development-mode lines comes the token.
    let token = lines.nth(3).expect("token line").expect("read");
    let games: serde_json::Value = client
        .get(format!("http://{addr}/v1/games"))
        .bearer_auth(token)
        .send()
        .await
        .expect("request")
        .json()
        .await
        .expect("json");
    assert_eq!(games["games"].as_array().map(Vec::len), Some(2), "{games}");
    again.stop_and_remove(&secret);
}

#[test]
fn a_second_engine_on_the_same_file_refuses_to_start() {
    let secret = fresh_secret_path();
    let (first, mut lines) = serve(&secret);
    let listening = lines.next().expect("line").expect("read");
    assert!(listening.contains("listening"), "{listening}");
    let out = engine_with(&secret)
        .args(["--bind", "127.0.0.1:0"])
        .output()
        .expect("run");
    assert!(
        !out.status.success(),
        "a second engine on the file must not start"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    let refusal: Vec<_> = stderr
        .lines()
        .filter(|l| l.starts_with("offer-engine:"))
        .collect();
    assert_eq!(refusal.len(), 1, "{stderr}");
    assert!(
        refusal[0].contains("in use by another engine process"),
        "{stderr}"
    );
    first.stop_and_remove(&secret);
}

#[tokio::test]
async fn redis_going_away_answers_503_never_500_and_never_hangs() {
    let (mut redis, port) = super::redis_harness::start_private();
    let app = spawn_tuned(Backend::Redis, |s| {
        s.store.redis_url = format!("redis://127.0.0.1:{port}");
    })
    .await;
    let game = app.create_game().await;
    app.bulk(&game, json!([item("sword", "equipment", 1.0)]))
        .expect(StatusCode::OK)
        .await;
    redis.kill().expect("kill redis");
    let _ = redis.wait();
    let started = Instant::now();
    let body = app
        .bulk(&game, json!([item("axe", "equipment", 1.0)]))
        .expect_error(StatusCode::SERVICE_UNAVAILABLE, "unavailable")
        .await;
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "answered within 2 s"
    );
    assert!(
        !body["error"]["message"]
            .as_str()
            .expect("msg")
            .contains("redis")
    );
    let r = app.get("/readyz").no_token().send().await;
    assert_eq!(r.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert!(r.headers().contains_key("retry-after"));
    app.post("/v1/games", game_body("rpg"))
        .expect_error(StatusCode::SERVICE_UNAVAILABLE, "unavailable")
        .await;
    // Reads of a loaded game keep serving from memory.
    assert_eq!(app.items(&game).await.len(), 1);
}
