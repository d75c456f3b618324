//! Per-player day caps through the HTTP surface: a few players reporting absurd amounts do
//! not move a healthy game's FSR or quadrant (on the embedded store and on Redis); a
//! studio's `max_per_player_day` caps a player's day, what is above it reaches the wallet
//! and the ledger but is left out of the figures, and the FSR report and the player record
//! show it.

use chrono::{Duration, Utc};
use offer_engine::store::sqlite::SyncMode;
use reqwest::StatusCode;
use serde_json::{Value, json};

use super::economy::{import_path, past};
use super::fixtures::{Sdk, earned, spent};
use super::helpers::{Backend, TestApp, shared_backend, spawn_app, spawn_tuned};

/// Players of the healthy economy, and the days of history before today.
const PLAYERS: usize = 1_000;
const DAYS: i64 = 6;
/// Each player's day: 1,000 gold earned, 800 spent (FSR 1.25, inside the RPG's 0.8 to 2.0).
const EARN: i64 = 1_000;
const SPEND: i64 = 800;
/// What each of the ten absurd players reports today.
const ABSURD: i64 = 1_000_000_000;

fn fsr_path(sdk: &Sdk) -> String {
    format!("/v1/games/{}/economy/fsr", sdk.game)
}

/// The `gold` entry of a report's `day_caps`.
fn gold_caps(report: &Value) -> Value {
    report["day_caps"]
        .as_array()
        .expect("day_caps")
        .iter()
        .find(|c| c["currency_id"] == "gold")
        .cloned()
        .expect("gold has an entry")
}

/// Six days of a thousand players' ordinary days, imported, in two calls.
async fn healthy_history(app: &TestApp, sdk: &Sdk) {
    let mut events = Vec::with_capacity(PLAYERS * DAYS as usize * 2);
    for day in 1..=DAYS {
        let ts = Utc::now() - Duration::days(day);
        for p in 0..PLAYERS {
            let player = format!("player_{p}");
            events.push(past(&player, earned("gold", EARN, format!("e{day}")), ts));
            events.push(past(&player, spent("gold", SPEND, format!("s{day}")), ts));
        }
    }
    for chunk in events.chunks(events.len() / 2 + 1) {
        let outcome = app
            .post(import_path(&sdk.game), json!({ "events": chunk }))
            .expect(StatusCode::OK)
            .await;
        assert_eq!(outcome["imported"], chunk.len(), "{outcome}");
    }
}

async fn ten_absurd_players_leave_a_healthy_economy_alone(backend: Backend) {
    let app = spawn_tuned(backend, |s| {
        s.economy.day_caps_refresh_ms = 0;
        s.store.sync = SyncMode::Normal;
    })
    .await;
    let sdk = app.game_with(json!([])).await;
    healthy_history(&app, &sdk).await;
    let before = app.get_json(fsr_path(&sdk)).await;
    let fsr_before = before["fsr"].as_f64().expect("a ratio");
    assert!((fsr_before - 1.25).abs() < 1e-9, "{before}");
    assert_eq!(before["quadrant"], "HEALTHY");
    // 3 x the 99th percentile of the players' days.
    let caps = gold_caps(&before);
    assert_eq!(caps["earned_cap"], 3 * EARN, "{caps}");
    assert_eq!(caps["spent_cap"], 3 * SPEND, "{caps}");
    assert_eq!(caps["cap_source"], "derived");
    assert_eq!(caps["earned_left_out"], 0);

    for p in 0..10 {
        app.send_events(
            &sdk,
            &format!("player_{p}"),
            json!([earned("gold", ABSURD, "absurd")]),
        )
        .await;
    }
    let after = app.get_json(fsr_path(&sdk)).await;
    let fsr_after = after["fsr"].as_f64().expect("a ratio");
    let moved = (fsr_after - fsr_before).abs() / fsr_before;
    assert!(moved < 0.01, "moved by {moved}: {after}");
    assert_eq!(after["quadrant"], "HEALTHY", "{after}");
    let caps = gold_caps(&after);
    assert_eq!(caps["earned_left_out"], 10 * (ABSURD - 3 * EARN), "{caps}");
    assert_eq!(caps["earned_players_capped"], 10);
    assert_eq!(caps["spent_left_out"], 0);
    // The quadrant the AI levels follow is unchanged too.
    let status = app
        .get(format!("/v1/sdk/status/{}", sdk.game))
        .token(&sdk.key)
        .expect(StatusCode::OK)
        .await;
    assert_eq!(status["quadrant"], "HEALTHY");
    // The wallet has all of it; the record says what was left out, and when.
    let record = app
        .get_json(format!("/v1/games/{}/players/player_3", sdk.game))
        .await;
    assert_eq!(
        record["balances"]["gold"],
        ABSURD + DAYS * (EARN - SPEND),
        "{record}"
    );
    let today = Utc::now().date_naive().to_string();
    assert_eq!(
        record["capped_days"],
        json!([{"date": today, "kind": "currency_earned", "currency_id": "gold",
                "left_out": ABSURD - 3 * EARN}])
    );
    let ordinary = app
        .get_json(format!("/v1/games/{}/players/player_500", sdk.game))
        .await;
    assert_eq!(ordinary["capped_days"], json!([]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_absurd_players_leave_a_healthy_economy_alone_on_sqlite() {
    ten_absurd_players_leave_a_healthy_economy_alone(Backend::Embedded).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_absurd_players_leave_a_healthy_economy_alone_on_redis() {
    ten_absurd_players_leave_a_healthy_economy_alone(shared_backend()).await;
}

#[tokio::test]
async fn a_studio_cap_leaves_the_rest_of_a_players_day_out_of_the_figures() {
    let app = spawn_app().await;
    let sdk = app.game_with(json!([])).await;
    let game = format!("/v1/games/{}", sdk.game);
    // Out of range: refused, nothing changes.
    for bad in [json!(0), json!(1_000_000_000_000_001_i64), json!("many")] {
        app.patch(
            &game,
            json!({"currencies": [
                {"currency_id": "gems", "kind": "hard"},
                {"currency_id": "gold", "kind": "earned", "max_per_player_day": bad}]}),
        )
        .expect_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_failed")
        .await;
    }
    let record = app.get_json(&game).await;
    assert!(
        record["currencies"][1].get("max_per_player_day").is_none(),
        "{record}"
    );
    app.patch(
        &game,
        json!({"currencies": [
            {"currency_id": "gems", "kind": "hard"},
            {"currency_id": "gold", "kind": "earned", "max_per_player_day": 500}]}),
    )
    .expect(StatusCode::OK)
    .await;
    assert_eq!(
        app.get_json(&game).await["currencies"][1]["max_per_player_day"],
        500
    );
    app.send_events(
        &sdk,
        "grinder",
        json!([
            earned("gold", 400, "e1"),
            earned("gold", 300, "e2"),
            spent("gold", 100, "s1")
        ]),
    )
    .await;
    app.send_events(&sdk, "casual", json!([earned("gold", 50, "e1")]))
        .await;
    let report = app.get_json(fsr_path(&sdk)).await;
    assert_eq!(
        report["currency_summary"],
        json!([{"currency_id": "gold", "earned": 550, "spent": 100, "fsr": 5.5}])
    );
    let caps = gold_caps(&report);
    assert_eq!(
        caps,
        json!({"currency_id": "gold", "earned_cap": 500, "spent_cap": 500,
               "cap_source": "studio", "earned_left_out": 200, "spent_left_out": 0,
               "earned_players_capped": 1, "spent_players_capped": 0})
    );
    // Gems have no cap: too few players to derive one.
    let gems = report["day_caps"]
        .as_array()
        .expect("day_caps")
        .iter()
        .find(|c| c["currency_id"] == "gems")
        .cloned()
        .expect("gems");
    assert_eq!(gems["earned_cap"], Value::Null);
    assert_eq!(gems["cap_source"], Value::Null);
    let record = app.get_json(format!("{game}/players/grinder")).await;
    assert_eq!(record["balances"]["gold"], 600);
    assert_eq!(record["ledger_total"], 3);
    assert_eq!(record["capped_days"][0]["left_out"], 200, "{record}");
    assert_eq!(record["capped_days"][0]["kind"], "currency_earned");
}
