//! What two engine nodes on one Redis (or Redis Cluster) share beyond the catalogue: the
//! decision records, written by the deciding node behind its answers and shown by any node.

use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::{Value, json};

use super::fixtures::{player, store_shelf};
use super::helpers::{TestApp, shared_backend, spawn_app_on};

/// How long a record may take to reach the other node (written behind the answers, in
/// batches).
const SHARED_WITHIN: Duration = Duration::from_secs(10);

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
