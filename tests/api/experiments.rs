//! Price experiment results through the real SDK surface: shows and purchases counted per
//! variant, the sample-ratio flag when only one variant is exposed, the same answer from a
//! second node, and another studio's game answered 404.

use reqwest::StatusCode;
use serde_json::{Value, json};

use super::fixtures::{Sdk, mixed_catalogue};
use super::helpers::{Role, TestApp, shared_backend, spawn_app_on};
use super::offers::offer;

/// Serves each of `players` one offer; shows it (and buys it, for the first `buyers`) only
/// when the experiment put the player in `exposed`. Returns how many were exposed.
async fn play(app: &TestApp, sdk: &Sdk, players: usize, exposed: &str, buyers: usize) -> usize {
    let mut shown = 0;
    for i in 0..players {
        let player = format!("exp_player_{i}");
        let sid = app.open_session(sdk, &player, json!({})).await;
        let (status, o, _) = offer(app, sdk, &sid, "session_start").await;
        if status != StatusCode::OK || o["experiment"]["variant"] != exposed {
            continue;
        }
        let mut events = vec![json!({"type": "offer_shown", "offer_id": o["offer_id"]})];
        if shown < buyers {
            let items: Vec<Value> = o["items"]
                .as_array()
                .expect("items")
                .iter()
                .map(|item| item["item_id"].clone())
                .collect();
            events.push(json!({"type": "purchase", "offer_id": o["offer_id"],
                "item_ids": items, "price_cents": o["price_cents"], "tx_id": format!("t{i}")}));
        }
        app.post(
            "/v1/sdk/events",
            json!({"session_id": sid, "events": events}),
        )
        .token(&sdk.key)
        .expect(StatusCode::ACCEPTED)
        .await;
        shown += 1;
    }
    shown
}

#[tokio::test]
async fn results_count_shows_and_purchases_and_flag_a_skewed_split() {
    let app = spawn_app_on(shared_backend()).await;
    let sdk = app.game_with(mixed_catalogue()).await;
    let exp: Value = app
        .post(
            format!("/v1/games/{}/experiments", sdk.game),
            json!({"variants": [{"name": "control", "weight": 1},
                {"name": "cheap", "weight": 1, "price_usd": 1.23}], "min_sample": 2}),
        )
        .expect(StatusCode::CREATED)
        .await;
    let path = format!(
        "/v1/games/{}/experiments/{}/results",
        sdk.game,
        exp["experiment_id"].as_str().expect("id")
    );
    let exposed = play(&app, &sdk, 60, "cheap", 2).await;
    assert!(exposed >= 12, "{exposed} players in cheap");
    let r = app.get_json(&path).await;
    assert_eq!(r["control"], "control");
    assert_eq!(r["revenue_basis"], "reported");
    assert_eq!(r["provisional"], true, "{r}");
    let cheap = &r["variants"][1];
    assert_eq!(cheap["exposed_players"], exposed as u64, "{r}");
    assert_eq!(cheap["offers_shown"], exposed as u64);
    assert_eq!(cheap["buyers"], 2);
    assert_eq!(cheap["purchases"], 2);
    assert_eq!(cheap["revenue_usd"], 2.46);
    assert_eq!(r["variants"][0]["exposed_players"], 0);
    // Players split 50/50 but only one variant was exposed: the split is flagged.
    assert_eq!(r["sample_ratio"]["mismatch"], true, "{r}");
    assert!(r["sample_ratio"]["p_value"].as_f64().expect("p") < 0.001);
    // Another node answers the same; sandbox has nothing.
    let peer = app.spawn_peer().await;
    assert_eq!(peer.get_json(&path).await, r);
    let sandbox = app.get_json(format!("{path}?environment=sandbox")).await;
    assert_eq!(sandbox["variants"][1]["exposed_players"], 0);
    // Another studio's member, and an unknown experiment, get 404.
    app.get(&path)
        .token(&app.token("studio-b", Role::Admin))
        .expect_error(StatusCode::NOT_FOUND, "not_found")
        .await;
    app.get(format!(
        "/v1/games/{}/experiments/{}/results",
        sdk.game,
        uuid::Uuid::new_v4()
    ))
    .expect_error(StatusCode::NOT_FOUND, "not_found")
    .await;
    app.post(
        format!("/v1/games/{}/experiments", sdk.game),
        json!({"variants": [{"name": "a", "weight": 1}], "min_sample": 0}),
    )
    .expect_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_failed")
    .await;
}
