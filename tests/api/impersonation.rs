//! No player can act as another in a game that requires player identity: on two engine
//! nodes sharing one store, an attacker holding the game's SDK key and a valid token of its
//! own tries every kind of event, and an offer, against a victim's open session, over REST
//! (naming the victim's session id) and over the WebSocket (a `hello` for the victim's
//! session); every attempt is refused with its code and the victim's wallet, inventory and
//! ledger stay as they were. The victim's own token, on the other node, still works: the
//! refusals come from the identity check, not from a session the other node cannot see.

use jsonwebtoken::{Algorithm, EncodingKey, Header, encode};
use reqwest::StatusCode;
use serde_json::{Value, json};
use uuid::Uuid;

use super::fixtures::{earned, spent, store_shelf};
use super::helpers::{TestApp, shared_backend, spawn_app_on};
use super::ws_client::{Fmt, assert_fields, connect, event, offer_request};

const ES256_A: &str = include_str!("../keys/player-es256-a.pem");
const ES256_A_PUB: &str = include_str!("../keys/player-es256-a.pub.pem");

/// A token of `sub` for game `aud`, valid for ten minutes, signed by the game's key.
fn token(sub: &str, aud: &str) -> String {
    let now = chrono::Utc::now().timestamp();
    let key = EncodingKey::from_ec_pem(ES256_A.as_bytes()).expect("a test private key");
    let claims = json!({"sub": sub, "aud": aud, "exp": now + 600, "iat": now});
    encode(&Header::new(Algorithm::ES256), &claims, &key).expect("signed")
}

/// One event of every kind the SDK sends, each with a fresh `tx_id` where it needs one.
fn every_kind(offer_id: &str) -> Vec<Value> {
    let tx = || Uuid::new_v4().to_string();
    vec![
        json!({"type": "session_start"}),
        json!({"type": "currency_low", "currency_id": "gems", "balance": 1}),
        json!({"type": "first_loss"}),
        json!({"type": "boss_raid"}),
        earned("gems", 1_000, tx()),
        spent("gems", 500, tx()),
        json!({"type": "purchase", "item_ids": ["sword"], "price_cents": 0, "tx_id": tx()}),
        json!({"type": "item_used", "item_id": "sword", "quantity": 1, "tx_id": tx()}),
        json!({"type": "offer_shown", "offer_id": offer_id}),
        json!({"type": "offer_dismissed", "offer_id": offer_id}),
    ]
}

/// What the victim's record shows of its wallet, inventory and ledger.
async fn holdings(app: &TestApp, game: &str, player: &str) -> Value {
    let record = app
        .get_json(format!("/v1/games/{game}/players/{player}"))
        .await;
    json!({
        "balances": record["balances"],
        "inventory": record["inventory"],
        "ledger_total": record["ledger_total"],
        "spend": record["lifetime_spend_cents"],
    })
}

/// `POST /v1/sdk/events` of one event for `session` with `player_token`; status and body.
async fn post_event(
    app: &TestApp,
    key: &str,
    session: &str,
    player_token: Option<&str>,
    ev: &Value,
) -> (StatusCode, Value) {
    let mut body = json!({"session_id": session, "events": [ev]});
    if let Some(t) = player_token {
        body["player_token"] = json!(t);
    }
    let r = app.post("/v1/sdk/events", body).token(key).send().await;
    let status = r.status();
    (status, r.json().await.unwrap_or(Value::Null))
}

#[tokio::test]
async fn no_player_acts_as_another_over_rest_or_socket_on_either_node() {
    let a = spawn_app_on(shared_backend()).await;
    let b = a.spawn_peer().await;
    // The victim is served an offer, so it must be outside the holdout (a hash with the
    // game's id): a game is made until it is.
    let sdk = loop {
        let sdk = a.game_with(store_shelf()).await;
        let id: Uuid = sdk.game.parse().expect("game id");
        if !offer_domain::holdout::is_holdout("victim", id) {
            break sdk;
        }
    };
    let game = sdk.game.as_str();
    a.put(
        format!("/v1/games/{game}/player-auth"),
        json!({"mode": "required", "keys": [ES256_A_PUB]}),
    )
    .expect(StatusCode::OK)
    .await;
    let victim_token = token("victim", game);
    let mallory_token = token("mallory", game);

    // The victim plays on node A: 500 gems and a sword.
    let session = Uuid::new_v4().to_string();
    a.post(
        "/v1/sdk/sessions",
        json!({"session_id": session, "player_id": "victim", "player_token": victim_token}),
    )
    .token(&sdk.key)
    .expect(StatusCode::CREATED)
    .await;
    let setup = json!([
        earned("gems", 500, "v1"),
        {"type": "purchase", "item_ids": ["sword"], "price_cents": 499, "tx_id": "v2"}
    ]);
    let answer = a
        .post(
            "/v1/sdk/events",
            json!({"session_id": session, "events": setup, "player_token": victim_token}),
        )
        .token(&sdk.key)
        .expect(StatusCode::ACCEPTED)
        .await;
    assert_eq!(answer["rejected"], json!([]), "{answer}");
    let offer = a
        .post(
            "/v1/sdk/offers/next",
            json!({"session_id": session, "player_token": victim_token,
                   "trigger_context": {"event_type": "first_loss"}}),
        )
        .token(&sdk.key)
        .expect(StatusCode::OK)
        .await;
    let offer_id = offer["offer_id"].as_str().expect("an offer").to_owned();
    let before = holdings(&a, game, "victim").await;
    assert_eq!(before["balances"]["gems"], 500, "{before}");

    for node in [&a, &b] {
        // REST: the victim's session id, with no token and with the attacker's own.
        for ev in every_kind(&offer_id) {
            for (sent, code) in [
                (None, "player_token_required"),
                (Some(mallory_token.as_str()), "player_token_mismatch"),
            ] {
                let (status, body) = post_event(node, &sdk.key, &session, sent, &ev).await;
                assert_eq!(status, StatusCode::UNAUTHORIZED, "{ev}: {body}");
                assert_eq!(body["error"]["code"], code, "{ev}: {body}");
            }
        }
        for (sent, code) in [
            (json!(null), "player_token_required"),
            (json!(mallory_token), "player_token_mismatch"),
        ] {
            let body = json!({"session_id": session, "player_token": sent,
                              "trigger_context": {"event_type": "first_loss"}});
            node.post("/v1/sdk/offers/next", body)
                .token(&sdk.key)
                .expect_error(StatusCode::UNAUTHORIZED, code)
                .await;
        }

        // The socket: a hello for the victim's session, or a new session in its name,
        // with the attacker's token; an event or offer request after the refusal is
        // answered as on a socket that never said hello (one socket for each, since a
        // socket that keeps sending before `hello` is soon closed).
        for hello_session in [session.clone(), Uuid::new_v4().to_string()] {
            let attempts = every_kind(&offer_id)
                .into_iter()
                .map(event)
                .chain([offer_request("first_loss")]);
            for attempt in attempts {
                let mut c = connect(node, &sdk.key, Fmt::Json).await;
                c.send(json!({"type": "hello", "session_id": hello_session,
                              "player_id": "victim", "player_token": mallory_token}))
                    .await;
                assert_fields(
                    &c.recv().await,
                    json!({"type": "error", "code": "player_token_mismatch"}),
                );
                c.send(&attempt).await;
                assert_fields(
                    &c.recv().await,
                    json!({"type": "error", "code": "bad_message"}),
                );
            }
        }
    }
    assert_eq!(holdings(&b, game, "victim").await, before, "nothing moved");

    // The victim's own token works on node B, over REST and over the socket.
    let (status, body) = post_event(
        &b,
        &sdk.key,
        &session,
        Some(&victim_token),
        &spent("gems", 100, "v3"),
    )
    .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    let mut c = connect(&b, &sdk.key, Fmt::Json).await;
    c.send(json!({"type": "hello", "session_id": session,
                  "player_id": "victim", "player_token": victim_token}))
        .await;
    assert_fields(&c.recv().await, json!({"type": "ready"}));
    c.send(event(spent("gems", 100, "v4"))).await;
    assert_fields(
        &c.recv_type("balance").await,
        json!({"currency_id": "gems", "balance": 300}),
    );
}
