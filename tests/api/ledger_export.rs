//! `offer-engine export-ledger` as an operator runs it, beside a running engine: a game's
//! raw ledger lines as NDJSON, from the embedded store's file (which the engine keeps
//! owning) and from the shared Redis.

use std::process::{Command, Output};

use reqwest::StatusCode;
use serde_json::{Value, json};

use super::fixtures::{earned, player, spent, store_shelf};
use super::helpers::{Backend, TestApp, shared_backend, spawn_app_on};
use super::process::BIN;

/// Runs the export for `game` from `since` against `app`'s store.
fn export(app: &TestApp, game: &str, since: &str) -> Output {
    let store = &app.running.state.services.settings.store;
    let mut command = Command::new(BIN);
    for (k, _) in std::env::vars() {
        if k.starts_with("OFFER__") {
            command.env_remove(k);
        }
    }
    command
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["export-ledger", "--game", game, "--since", since])
        .env("OFFER__STORE__PATH", &store.path)
        .env("OFFER__STORE__REDIS_URL", &store.redis_url)
        .env("OFFER__STORE__KEY_PREFIX", &store.key_prefix);
    command.output().expect("run the export")
}

/// The NDJSON lines of a successful export.
fn lines(out: &Output) -> Vec<Value> {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone())
        .expect("utf8")
        .lines()
        .map(|line| serde_json::from_str(line).expect("one JSON entry per line"))
        .collect()
}

async fn exports_the_ledger(backend: Backend) {
    let app = spawn_app_on(backend).await;
    let sdk = app.game_with(store_shelf()).await;
    let sid = app
        .open_session(&sdk, &player(&sdk.game, false), json!({}))
        .await;
    app.post(
        "/v1/sdk/events",
        json!({"session_id": sid, "events": [earned("gems", 100, "t1"), spent("gems", 30, "t2")]}),
    )
    .token(&sdk.key)
    .expect(StatusCode::ACCEPTED)
    .await;

    let exported = lines(&export(&app, &sdk.game, "2000-01-01"));
    let summary: Vec<(&str, &str, i64, i64)> = exported
        .iter()
        .map(|e| {
            (
                e["tx_id"].as_str().expect("tx_id"),
                e["kind"].as_str().expect("kind"),
                e["amount"].as_i64().expect("amount"),
                e["balance_after"].as_i64().expect("balance"),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            ("t1", "currency_earned", 100, 100),
            ("t2", "currency_spent", 30, 70)
        ]
    );
    // Nothing happened from tomorrow on; another game has no lines.
    let tomorrow = (chrono::Utc::now() + chrono::Duration::days(1))
        .format("%Y-%m-%d")
        .to_string();
    assert!(lines(&export(&app, &sdk.game, &tomorrow)).is_empty());
    let other = app.create_game().await;
    assert!(lines(&export(&app, &other, "2000-01-01")).is_empty());
    // A date that is no date is refused with a clear line, and nothing on stdout.
    let refused = export(&app, &sdk.game, "2024-13-01");
    assert!(!refused.status.success());
    assert!(refused.stdout.is_empty());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("--since"));
}

#[tokio::test]
async fn export_ledger_reads_the_embedded_file_beside_its_engine() {
    exports_the_ledger(Backend::Embedded).await;
}

#[tokio::test]
async fn export_ledger_reads_redis() {
    exports_the_ledger(shared_backend()).await;
}
