//! Player inventories through the real surfaces: a purchase's non-currency items enter the
//! inventory and the socket gets `inventory`; `item_used` takes consumables out, refused
//! above what is held; replays change nothing; `ready` and the player record show it; a
//! currency pack purchase adds nothing and credits no wallet.

use reqwest::StatusCode;
use serde_json::{Value, json};
use uuid::Uuid;

use super::fixtures::{Sdk, earned, item, store_shelf, with};
use super::helpers::{TestApp, shared_backend, spawn_app, spawn_app_on};
use super::ws_client::{Client, Fmt, assert_fields, connect, event, fresh};

/// The store shelf plus a stack of 3 potions (a consumable sold with a `quantity`).
fn shelf_with_potions() -> Value {
    let mut items = store_shelf();
    items.as_array_mut().expect("a list").push(with(
        item("potion", "consumable", 0.99),
        json!({"quantity": 3}),
    ));
    items
}

fn purchase(item_ids: &[&str], tx_id: &str) -> Value {
    json!({"type": "purchase", "item_ids": item_ids, "price_cents": 99, "tx_id": tx_id})
}

fn item_used(item_id: &str, quantity: i64, tx_id: &str) -> Value {
    json!({"type": "item_used", "item_id": item_id, "quantity": quantity, "tx_id": tx_id})
}

/// A game with potions and a JSON client whose fresh session got its `ready`; the session.
async fn ready_client(app: &TestApp) -> (Sdk, Client, Uuid) {
    let sdk = app.game_with(shelf_with_potions()).await;
    let mut c = connect(app, &sdk.key, Fmt::Json).await;
    let session = fresh(&sdk.game);
    let ready = c.hello(session, None).await;
    assert_fields(&ready, json!({"type": "ready", "inventory": []}));
    (sdk, c, session)
}

/// The player record of the socket's player (`p-{session}`).
async fn record(app: &TestApp, sdk: &Sdk, session: Uuid) -> Value {
    app.get_json(format!("/v1/games/{}/players/p-{session}", sdk.game))
        .await
}

#[tokio::test]
async fn a_purchase_puts_its_items_in_the_inventory_once() {
    let app = spawn_app().await;
    let (sdk, mut c, session) = ready_client(&app).await;
    c.send(event(purchase(&["sword"], "b1"))).await;
    let pushed = c.recv_answer().await;
    assert_fields(
        &pushed,
        json!({"type": "inventory", "items": [{"item_id": "sword", "quantity": 1}]}),
    );
    assert!(pushed["seq"].as_u64().is_some(), "{pushed}");
    // The same tx_id again adds nothing, and answers the inventory as it is.
    c.send(event(purchase(&["sword"], "b1"))).await;
    assert_fields(
        &c.recv_answer().await,
        json!({"type": "inventory", "items": [{"item_id": "sword", "quantity": 1}]}),
    );
    // The same tx_id with other items is refused and adds nothing.
    c.send(event(purchase(&["potion"], "b1"))).await;
    assert_fields(
        &c.recv_answer().await,
        json!({"type": "error", "code": "tx_id_reused"}),
    );
    // A consumable with a quantity adds that many units.
    c.send(event(purchase(&["potion", "sword"], "b2"))).await;
    assert_fields(
        &c.recv_answer().await,
        json!({"type": "inventory", "items": [
            {"item_id": "potion", "quantity": 3}, {"item_id": "sword", "quantity": 2}]}),
    );
    let player = record(&app, &sdk, session).await;
    assert_eq!(
        player["inventory"],
        json!([{"item_id": "potion", "quantity": 3}, {"item_id": "sword", "quantity": 2}])
    );
    assert_eq!(player["lifetime_spend_cents"], 198);
}

/// A `tx_id` is the player's own: another player who guesses it and sends it first spoils
/// nothing, for money and items alike.
#[tokio::test]
async fn another_player_sending_a_guessed_tx_id_first_spoils_nothing() {
    let app = spawn_app().await;
    let (sdk, mut victim, session) = ready_client(&app).await;
    let mut guesser = connect(&app, &sdk.key, Fmt::Json).await;
    guesser.hello(fresh(&sdk.game), None).await;
    guesser.send(event(purchase(&["potion"], "b1"))).await;
    guesser.recv_type("inventory").await;
    guesser.send(event(earned("gems", 5, "e1"))).await;
    guesser.recv_answer().await;
    victim.send(event(purchase(&["sword"], "b1"))).await;
    assert_fields(
        &victim.recv_answer().await,
        json!({"type": "inventory", "items": [{"item_id": "sword", "quantity": 1}]}),
    );
    victim.send(event(earned("gems", 40, "e1"))).await;
    assert_fields(
        &victim.recv_answer().await,
        json!({"type": "balance", "currency_id": "gems", "balance": 40}),
    );
    let player = record(&app, &sdk, session).await;
    assert_eq!(player["lifetime_spend_cents"], 99, "{player}");
    assert_eq!(player["balances"]["gems"], 40, "{player}");
}

#[tokio::test]
async fn item_used_takes_consumables_out_and_never_below_zero() {
    let app = spawn_app().await;
    let (sdk, mut c, session) = ready_client(&app).await;
    c.send(event(purchase(&["potion"], "b1"))).await;
    c.recv_type("inventory").await;
    c.send(event(item_used("potion", 2, "u1"))).await;
    assert_fields(
        &c.recv_answer().await,
        json!({"type": "inventory", "items": [{"item_id": "potion", "quantity": 1}]}),
    );
    // A replay answers the same and takes nothing more.
    c.send(event(item_used("potion", 2, "u1"))).await;
    assert_fields(
        &c.recv_answer().await,
        json!({"type": "inventory", "items": [{"item_id": "potion", "quantity": 1}]}),
    );
    // Above what is held: refused, nothing changes.
    c.send(event(item_used("potion", 2, "u2"))).await;
    assert_fields(
        &c.recv_answer().await,
        json!({"type": "error", "code": "insufficient_items"}),
    );
    // A tx_id of another use is refused too.
    c.send(event(item_used("potion", 1, "u1"))).await;
    assert_fields(
        &c.recv_answer().await,
        json!({"type": "error", "code": "tx_id_reused"}),
    );
    // Unknown items and currency packs are not items a player holds.
    for (item_id, quantity) in [("shield", 1), ("gems_100", 1), ("potion", 0)] {
        c.send(event(item_used(item_id, quantity, "u3"))).await;
        assert_fields(
            &c.recv_answer().await,
            json!({"type": "error", "code": "validation_failed"}),
        );
    }
    assert_eq!(
        record(&app, &sdk, session).await["inventory"],
        json!([{"item_id": "potion", "quantity": 1}])
    );
    // The last unit goes, and the item with it.
    c.send(event(item_used("potion", 1, "u2"))).await;
    assert_fields(
        &c.recv_answer().await,
        json!({"type": "inventory", "items": []}),
    );
    assert_eq!(record(&app, &sdk, session).await["inventory"], json!([]));
}

#[tokio::test]
async fn ready_after_a_reconnect_carries_the_inventory() {
    let app = spawn_app().await;
    let (sdk, mut c, session) = ready_client(&app).await;
    c.send(event(purchase(&["sword"], "b1"))).await;
    c.recv_type("inventory").await;
    drop(c);
    let mut again = connect(&app, &sdk.key, Fmt::MsgPack).await;
    let ready = again.hello(session, None).await;
    assert_fields(
        &ready,
        json!({"type": "ready", "inventory": [{"item_id": "sword", "quantity": 1}]}),
    );
}

#[tokio::test]
async fn a_currency_pack_purchase_adds_no_item_and_credits_no_wallet() {
    let app = spawn_app().await;
    let (sdk, mut c, session) = ready_client(&app).await;
    c.send(event(purchase(&["gems_100"], "b1"))).await;
    // The pack's gems arrive only through currency_earned: the next answer is its balance,
    // with nothing before it.
    c.send(event(earned("gems", 100, "e1"))).await;
    assert_fields(
        &c.recv_answer().await,
        json!({"type": "balance", "currency_id": "gems", "balance": 100}),
    );
    let player = record(&app, &sdk, session).await;
    assert_eq!(player["inventory"], json!([]));
    assert_eq!(player["balances"]["gems"], 100);
    assert_eq!(player["lifetime_spend_cents"], 99);
}

#[tokio::test]
async fn over_rest_item_used_is_refused_in_the_batch_answer() {
    let app = spawn_app().await;
    let sdk = app.game_with(shelf_with_potions()).await;
    let sid = app.open_session(&sdk, "rest-player", json!({})).await;
    let send = |events: Value| {
        app.post(
            "/v1/sdk/events",
            json!({"session_id": sid, "events": events}),
        )
        .token(&sdk.key)
    };
    let answer = send(json!([
        purchase(&["potion", "gems_500"], "b1"),
        purchase(&["potion"], "b1"),
        item_used("potion", 1, "u1"),
        item_used("potion", 5, "u2")
    ]))
    .expect(StatusCode::ACCEPTED)
    .await;
    assert_eq!(answer["accepted"], 3);
    assert_fields(
        &answer["rejected"][0],
        json!({"index": 3, "code": "insufficient_items"}),
    );
    // An unknown item refuses the whole batch, before anything is applied.
    send(json!([
        item_used("potion", 1, "u3"),
        item_used("shield", 1, "u4")
    ]))
    .expect_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_failed")
    .await;
    let player = app
        .get_json(format!("/v1/games/{}/players/rest-player", sdk.game))
        .await;
    assert_eq!(
        player["inventory"],
        json!([{"item_id": "potion", "quantity": 2}])
    );
    assert_eq!(player["balances"]["gems"], 0);
}

#[tokio::test]
async fn every_session_of_the_player_hears_of_a_change_from_either_surface() {
    let app = spawn_app().await;
    let (sdk, mut first, session) = ready_client(&app).await;
    // A second session of the same player (another device).
    let mut second = connect(&app, &sdk.key, Fmt::MsgPack).await;
    second
        .send(json!({"type": "hello", "session_id": Uuid::new_v4(), "player_id": format!("p-{session}")}))
        .await;
    assert_fields(
        &second.recv().await,
        json!({"type": "ready", "inventory": []}),
    );
    // A purchase sent over REST reaches both sockets.
    app.post(
        "/v1/sdk/events",
        json!({"session_id": session, "events": [purchase(&["sword"], "b1")]}),
    )
    .token(&sdk.key)
    .expect(StatusCode::ACCEPTED)
    .await;
    let sword = json!({"type": "inventory", "items": [{"item_id": "sword", "quantity": 1}]});
    assert_fields(&first.recv_type("inventory").await, sword.clone());
    assert_fields(&second.recv_type("inventory").await, sword);
    // A use on one socket is its answer there and a push on the other.
    first.send(event(item_used("sword", 1, "u1"))).await;
    let empty = json!({"type": "inventory", "items": []});
    assert_fields(&first.recv_answer().await, empty.clone());
    assert_fields(&second.recv_type("inventory").await, empty);
}

#[tokio::test]
async fn a_change_on_one_node_reaches_the_players_socket_on_another() {
    let a = spawn_app_on(shared_backend()).await;
    let b = a.spawn_peer().await;
    let sdk = a.game_with(shelf_with_potions()).await;
    let session = fresh(&sdk.game);
    let mut on_b = connect(&b, &sdk.key, Fmt::Json).await;
    assert_fields(
        &on_b.hello(session, None).await,
        json!({"type": "ready", "inventory": []}),
    );
    // The same player on node A (another device) buys potions.
    let mut on_a = connect(&a, &sdk.key, Fmt::Json).await;
    on_a.send(
        json!({"type": "hello", "session_id": Uuid::new_v4(), "player_id": format!("p-{session}")}),
    )
    .await;
    on_a.recv_type("ready").await;
    on_a.send(event(purchase(&["potion"], "b1"))).await;
    let potions = json!({"type": "inventory", "items": [{"item_id": "potion", "quantity": 3}]});
    assert_fields(&on_a.recv_answer().await, potions.clone());
    assert_fields(&on_b.recv_type("inventory").await, potions);
}
