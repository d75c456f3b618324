//! Per-event bounds a studio sets on its currencies: a `currency_earned` or `currency_spent`
//! above the currency's `max_per_event` is refused alone (`amount_out_of_bounds`) and changes
//! nothing, the events around it apply; the bound's own range is checked where it is set.

use reqwest::StatusCode;
use serde_json::json;

use super::fixtures::{earned, spent, store_shelf};
use super::helpers::spawn_app;

#[tokio::test]
async fn an_event_above_its_currencys_bound_is_refused_alone() {
    let app = spawn_app().await;
    let sdk = app.game_with(store_shelf()).await;
    let game = format!("/v1/games/{}", sdk.game);
    app.patch(
        &game,
        json!({"currencies": [
            {"currency_id": "gems", "kind": "hard", "max_per_event": 1000},
            {"currency_id": "gold", "kind": "earned"}]}),
    )
    .expect(StatusCode::OK)
    .await;
    let sid = app.open_session(&sdk, "player", json!({})).await;
    let outcome = app
        .post(
            "/v1/sdk/events",
            json!({"session_id": sid, "events": [
                earned("gems", 1000, "at-the-bound"),
                earned("gems", 1_000_000_000, "absurd"),
                spent("gems", 1001, "absurd-spend"),
                earned("gold", 1_000_000, "unbounded-currency"),
            ]}),
        )
        .token(&sdk.key)
        .expect(StatusCode::ACCEPTED)
        .await;
    assert_eq!(outcome["accepted"], 2, "{outcome}");
    let refused: Vec<(u64, &str)> = outcome["rejected"]
        .as_array()
        .expect("rejected")
        .iter()
        .map(|r| {
            (
                r["index"].as_u64().expect("index"),
                r["code"].as_str().expect("code"),
            )
        })
        .collect();
    assert_eq!(
        refused,
        [(1, "amount_out_of_bounds"), (2, "amount_out_of_bounds")]
    );
    let player = app.get_json(format!("{game}/players/player")).await;
    assert_eq!(player["balances"]["gems"], 1000, "{player}");
    assert_eq!(player["balances"]["gold"], 1_000_000, "{player}");
    assert_eq!(player["ledger_total"], 2, "{player}");

    for bad in [0, 1_000_000_001_i64] {
        app.patch(
            &game,
            json!({"currencies": [{"currency_id": "gems", "kind": "hard", "max_per_event": bad}]}),
        )
        .expect_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_failed")
        .await;
    }
}
