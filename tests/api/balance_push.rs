//! A money event sent over REST (`POST /v1/sdk/events`, the SDK's telemetry path) pushes the
//! new balance to every socket of the player, on every node; one sent on a socket is answered
//! with its balance there.

use reqwest::StatusCode;
use serde_json::json;
use uuid::Uuid;

use super::fixtures::{earned, spent, store_shelf};
use super::helpers::{shared_backend, spawn_app_on};
use super::ws_client::{Fmt, assert_fields, connect, event, fresh};

#[tokio::test]
async fn a_rest_money_event_pushes_the_balance_to_the_players_sockets_on_every_node() {
    let a = spawn_app_on(shared_backend()).await;
    let b = a.spawn_peer().await;
    let sdk = a.game_with(store_shelf()).await;
    let session = fresh(&sdk.game);
    let player = format!("p-{session}");
    let mut on_a = connect(&a, &sdk.key, Fmt::Json).await;
    on_a.hello(session, None).await;
    // The same player on node B (another device).
    let mut on_b = connect(&b, &sdk.key, Fmt::MsgPack).await;
    on_b.send(json!({"type": "hello", "session_id": Uuid::new_v4(), "player_id": player}))
        .await;
    on_b.recv_type("ready").await;

    // Earns 70 gems over REST under the idempotency key `e1`.
    let earn_70 = async || {
        a.post(
            "/v1/sdk/events",
            json!({"session_id": session, "events": [earned("gems", 70, "e1")]}),
        )
        .token(&sdk.key)
        .expect(StatusCode::ACCEPTED)
        .await
    };
    earn_70().await;
    let seventy = json!({"type": "balance", "currency_id": "gems", "balance": 70});
    assert_fields(&on_a.recv_type("balance").await, seventy.clone());
    assert_fields(&on_b.recv_type("balance").await, seventy);

    // A replay moves nothing and pushes nothing; a spend on a socket is answered there.
    earn_70().await;
    on_a.send(event(spent("gems", 20, "s1"))).await;
    assert_fields(
        &on_a.recv_answer().await,
        json!({"type": "balance", "currency_id": "gems", "balance": 50}),
    );
}
