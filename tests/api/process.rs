//! The `offer-engine` binary as an operator runs it: configuration errors, the token
//! command, the development token, graceful SIGTERM; and Redis going away under a running
//! service.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::json;

use super::helpers::{Backend, SECRET, expect_error, item, settings, spawn_with};

const BIN: &str = env!("CARGO_BIN_EXE_offer-engine");

fn engine() -> Command {
    let mut c = Command::new(BIN);
    // A clean environment: no stray OFFER__ variables from the developer's shell.
    for (k, _) in std::env::vars() {
        if k.starts_with("OFFER__") {
            c.env_remove(k);
        }
    }
    c.current_dir(env!("CARGO_MANIFEST_DIR"));
    c
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
    let codec = offer_engine::auth::JwtCodec::new(
        SECRET.as_bytes(),
        "offer-engine",
        "offer-engine-dashboard",
    );
    let claims = codec.verify(token.trim()).expect("valid token");
    assert_eq!(claims.studio_id, "s1");
    assert_eq!(claims.role, offer_engine::auth::Role::Viewer);
}

#[tokio::test]
async fn serve_prints_a_dev_token_and_drains_on_sigterm() {
    let mut child = engine()
        .args(["serve", "--bind", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let addr = lines
        .next()
        .expect("line")
        .expect("read")
        .rsplit("http://")
        .next()
        .expect("addr")
        .to_owned();
    assert!(
        lines
            .next()
            .expect("line")
            .expect("read")
            .contains("development admin token")
    );
    let token = lines.next().expect("line").expect("read");
    let client = reqwest::Client::new();
    let r = client
        .post(format!("http://{addr}/v1/games"))
        .bearer_auth(&token)
        .json(&json!({"name": "G", "genre": "rpg"}))
        .send()
        .await
        .expect("request");
    assert_eq!(r.status(), StatusCode::CREATED);
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(status.success());
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            assert!(status.success(), "clean exit on SIGTERM, got {status}");
            break;
        }
        assert!(Instant::now() < deadline, "did not exit after SIGTERM");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn redis_going_away_answers_503_never_500_and_never_hangs() {
    let (mut redis, port) = super::redis_harness::start_private();
    let mut s = settings(Backend::Redis, None);
    s.store.redis_url = format!("redis://127.0.0.1:{port}");
    let app = spawn_with(s).await;
    let game = app.create_game().await;
    assert_eq!(
        app.bulk(&game, json!([item("sword", "equipment", 1.0)]))
            .await
            .status(),
        StatusCode::OK
    );
    redis.kill().expect("kill redis");
    let _ = redis.wait();
    let started = Instant::now();
    let r = app
        .bulk(&game, json!([item("axe", "equipment", 1.0)]))
        .await;
    let body = expect_error(r, StatusCode::SERVICE_UNAVAILABLE, "unavailable").await;
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
    let r = app
        .client
        .get(app.url("/readyz"))
        .send()
        .await
        .expect("req");
    assert_eq!(r.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert!(r.headers().contains_key("retry-after"));
    let r = app
        .post(
            "/v1/games",
            &app.admin,
            json!({"name": "G", "genre": "rpg"}),
        )
        .await;
    expect_error(r, StatusCode::SERVICE_UNAVAILABLE, "unavailable").await;
    // Reads of a loaded game keep serving from memory.
    assert_eq!(app.items(&game).await.len(), 1);
}
