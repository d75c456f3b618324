//! What two engine nodes on one Redis (or Redis Cluster) share beyond the catalogue: the
//! decision records, written by the deciding node behind its answers and shown by any node,
//! and each session's frequency-cap counters, written with them; a player's export lists its
//! decisions on any node.

use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::{Value, json};

use super::fixtures::{player, store_shelf};
use super::helpers::{TestApp, shared_backend, spawn_app_on};

/// How long a record may take to reach the other node (written behind the answers, in
/// batches).
const SHARED_WITHIN: Duration = Duration::from_secs(10);

/// Asks `app` for the next offer of session `sid` on `session_start`.
async fn next_offer(app: &TestApp, key: &str, sid: &str) -> reqwest::Response {
    app.post(
        "/v1/sdk/offers/next",
        json!({"session_id": sid, "trigger_context": {"event_type": "session_start"}}),
    )
    .token(key)
    .send()
    .await
}

/// `path` on `app`, once it answers 200 (polling: another node's write lands a moment later).
async fn once_found(app: &TestApp, path: &str) -> Value {
    let deadline = Instant::now() + SHARED_WITHIN;
    loop {
        let response = app.get(path).send().await;
        if response.status() == StatusCode::OK {
            return response.json().await.expect("json");
        }
        assert_eq!(response.status(), StatusCode::NOT_FOUND, "{path}");
        assert!(Instant::now() < deadline, "{path} never reached this node");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn a_decision_made_on_one_node_is_shown_by_the_other() {
    let a = spawn_app_on(shared_backend()).await;
    let b = a.spawn_peer().await;
    let sdk = a.game_with(store_shelf()).await;
    let sid = a
        .open_session(&sdk, &player(&sdk.game, false), json!({"country": "US"}))
        .await;
    let offer = a
        .post(
            "/v1/sdk/offers/next",
            json!({"session_id": sid, "trigger_context": {"event_type": "session_start"}}),
        )
        .token(&sdk.key)
        .expect(StatusCode::OK)
        .await;
    let offer_id = offer["offer_id"].as_str().expect("offer id");
    let path = format!("/v1/games/{}/offers/{offer_id}", sdk.game);
    let on_a = a.get_json(&path).await;
    assert_eq!(on_a["offer_id"], offer["offer_id"]);
    assert!(on_a["trace"].is_array());
    // Node B never saw the decision, yet shows the same record.
    let on_b = once_found(&b, &path).await;
    assert_eq!(on_b, on_a);
    // Under another game of the studio, the decision is not found on either node.
    let other = b.create_game().await;
    for app in [&a, &b] {
        app.get(format!("/v1/games/{other}/offers/{offer_id}"))
            .expect_error(StatusCode::NOT_FOUND, "not_found")
            .await;
    }
}

#[tokio::test]
async fn a_session_moving_to_another_node_keeps_its_frequency_cap() {
    let a = spawn_app_on(shared_backend()).await;
    let b = a.spawn_peer().await;
    let sdk = a.game_with(store_shelf()).await;
    a.set_guardrails(&sdk.game, json!({"max_offers_per_session": 1}))
        .await;
    let sid = a
        .open_session(&sdk, &player(&sdk.game, false), json!({"country": "US"}))
        .await;
    let served = next_offer(&a, &sdk.key, &sid).await;
    assert_eq!(served.status(), StatusCode::OK);
    let offer: Value = served.json().await.expect("json");
    // Once node B shows the decision, the session's counters are in the store too (they are
    // written first).
    let offer_id = offer["offer_id"].as_str().expect("offer id");
    once_found(&b, &format!("/v1/games/{}/offers/{offer_id}", sdk.game)).await;
    // The session moves to node B: its one offer is already used.
    let moved = next_offer(&b, &sdk.key, &sid).await;
    assert_eq!(moved.status(), StatusCode::NO_CONTENT);
    assert_eq!(
        moved
            .headers()
            .get("offer-outcome")
            .and_then(|v| v.to_str().ok()),
        Some("frequency_capped")
    );
    // A new session of the same player starts afresh: the cap counts per session.
    let fresh = b
        .open_session(&sdk, &player(&sdk.game, false), json!({"country": "US"}))
        .await;
    assert_eq!(
        next_offer(&b, &sdk.key, &fresh).await.status(),
        StatusCode::OK
    );
}

/// The decision records in `app`'s export of `player`'s production data.
async fn exported_decisions(app: &TestApp, game: &str, player: &str) -> Vec<Value> {
    let export = app
        .get_json(format!("/v1/games/{game}/players/{player}/export"))
        .await;
    export["environments"][0]["decisions"]
        .as_array()
        .expect("decisions")
        .clone()
}

#[tokio::test]
async fn a_players_export_lists_its_decisions_on_every_node() {
    let a = spawn_app_on(shared_backend()).await;
    let b = a.spawn_peer().await;
    let sdk = a.game_with(store_shelf()).await;
    let ana = player(&sdk.game, false);
    let sid = a.open_session(&sdk, &ana, json!({"country": "US"})).await;
    // Another (treated) player's decision is never in the export.
    let game_id: uuid::Uuid = sdk.game.parse().expect("game id");
    let other = (0..)
        .map(|i| format!("other_{i}"))
        .find(|p| !offer_domain::holdout::is_holdout(p, game_id))
        .expect("a treated player");
    let bob = a.open_session(&sdk, &other, json!({})).await;
    let mut offers = Vec::new();
    for session in [&sid, &bob, &sid] {
        let offer = a
            .post(
                "/v1/sdk/offers/next",
                json!({"session_id": session, "trigger_context": {"event_type": "session_start"}}),
            )
            .token(&sdk.key)
            .expect(StatusCode::OK)
            .await;
        offers.push(offer["offer_id"].clone());
    }
    let ids = |decisions: &[Value]| -> Vec<Value> {
        decisions.iter().map(|d| d["offer_id"].clone()).collect()
    };
    // The node that decided them (from its ring or the store, each once), oldest first.
    let on_a = exported_decisions(&a, &sdk.game, &ana).await;
    assert_eq!(
        ids(&on_a),
        [offers[0].clone(), offers[2].clone()],
        "{on_a:?}"
    );
    assert_eq!(on_a[0]["session_id"], sid.as_str());
    assert!(on_a[0]["trace"].is_array(), "{}", on_a[0]);
    // Node B never saw them: it finds them in the store once written, the same records.
    let deadline = Instant::now() + SHARED_WITHIN;
    loop {
        let on_b = exported_decisions(&b, &sdk.game, &ana).await;
        if on_b.len() == 2 {
            assert_eq!(on_b, on_a);
            break;
        }
        assert!(
            Instant::now() < deadline,
            "node B never found them: {on_b:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
