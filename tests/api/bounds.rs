//! Per-event bounds a studio sets on its currencies: a `currency_earned` or `currency_spent`
//! above the currency's `max_per_event` is refused alone (`amount_out_of_bounds`) and changes
//! nothing, the events around it apply; the bound's own range is checked where it is set.

use reqwest::StatusCode;
use serde_json::{Value, json};

use super::fixtures::{earned, spent, store_shelf};
use super::helpers::{shared_backend, spawn_app, spawn_app_on};

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

#[tokio::test]
async fn refused_events_add_up_by_code_from_every_node() {
    let app = spawn_app_on(shared_backend()).await;
    let peer = app.spawn_peer().await;
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
    let report = format!("{game}/economy/refused-events");
    let empty = app.get_json(&report).await;
    assert_eq!(empty, json!({"days": 7, "total": 0, "by_code": {}}));

    // Two events above the bound on one node, a spend above the balance on the other; the
    // events accepted beside them are no refusal.
    for (node, events) in [
        (
            &app,
            json!([earned("gems", 5000, "a"), spent("gems", 2000, "b")]),
        ),
        (
            &peer,
            json!([earned("gold", 10, "c"), spent("gold", 50, "d")]),
        ),
    ] {
        let sid = node.open_session(&sdk, "player", json!({})).await;
        node.post(
            "/v1/sdk/events",
            json!({"session_id": sid, "events": events}),
        )
        .token(&sdk.key)
        .expect(StatusCode::ACCEPTED)
        .await;
    }
    let expected = json!({"days": 7, "total": 3,
        "by_code": {"amount_out_of_bounds": 2, "insufficient_funds": 1}});
    // Each node adds its tally to the store every two seconds: wait for both, at most 20 s.
    let mut seen = Value::Null;
    for _ in 0..80 {
        seen = peer.get_json(&report).await;
        if seen == expected {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
    }
    assert_eq!(seen, expected);
    // The sandbox counts apart; a period outside 1 to 90 days is refused.
    let sandbox = app
        .get_json(format!("{report}?environment=sandbox&days=1"))
        .await;
    assert_eq!(sandbox["total"], 0, "{sandbox}");
    for bad in ["days=0", "days=91", "days=x"] {
        let answer = app.get(format!("{report}?{bad}")).send().await;
        assert!(
            answer.status().is_client_error(),
            "{bad}: {}",
            answer.status()
        );
    }
    app.get(&report)
        .token(&app.token("studio-b", super::helpers::Role::Admin))
        .expect_error(StatusCode::NOT_FOUND, "not_found")
        .await;
}
