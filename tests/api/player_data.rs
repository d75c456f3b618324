//! A player's data request through the real HTTP surface: the export holds every kind of
//! data the engine keeps about the player (group, experiment variant, days of play, sessions
//! with their attributes, balances, inventory, spend, ledger lines with their proof, redeemed
//! store transactions, the decision records of its sessions, per environment), a player the
//! game holds nothing about is a 404, and
//! only the game's own studio's admins may ask.

use offer_receipts::test_support::{TestAppleCa, TestGoogleKey};
use reqwest::StatusCode;
use serde_json::{Value, json};

use super::fixtures::{Sdk, earned, spent};
use super::helpers::{Role, default_backend};
use super::receipt_fixtures::{PACKAGE, google_receipt, server, sword};

#[tokio::test]
async fn the_export_holds_every_kind_of_data_and_only_admins_of_the_studio_read_it() {
    let ca = TestAppleCa::new();
    let key = TestGoogleKey::new();
    let app = server(&ca, default_backend()).await;
    let sdk = app.game_with(json!([sword()])).await;
    app.put(
        format!("/v1/games/{}/stores", sdk.game),
        json!({"verification": "enforce",
            "google_play": {"package_name": PACKAGE, "public_key": key.public_base64()}}),
    )
    .expect(StatusCode::OK)
    .await;
    let experiment = app
        .post(
            format!("/v1/games/{}/experiments", sdk.game),
            json!({"variants": [{"name": "cheap", "weight": 1, "price_usd": 1.23}]}),
        )
        .expect(StatusCode::CREATED)
        .await;
    let attributes = json!({"country": "FR", "platform": "android", "level": 12});
    let sid = app.open_session(&sdk, "ana", attributes.clone()).await;
    let outcome = app
        .post(
            "/v1/sdk/events",
            json!({"session_id": sid, "events": [
                earned("gold", 300, "e1"),
                spent("gold", 120, "s1"),
                {"type": "purchase", "item_ids": ["sword"], "price_cents": 499, "tx_id": "p1",
                 "receipt": google_receipt(&key, "sword", "token-ana")},
            ]}),
        )
        .token(&sdk.key)
        .expect(StatusCode::ACCEPTED)
        .await;
    assert_eq!(outcome["accepted"], 3, "{outcome}");
    // A decision for the session (an offer, or silence for a held-out player): its record.
    let asked = app
        .post(
            "/v1/sdk/offers/next",
            json!({"session_id": sid, "trigger_context": {"event_type": "session_start"}}),
        )
        .token(&sdk.key)
        .send()
        .await;
    let decision_id = asked
        .headers()
        .get("decision-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let decision_id = match asked.status() {
        StatusCode::OK => asked.json::<Value>().await.expect("json")["offer_id"]
            .as_str()
            .expect("offer id")
            .to_owned(),
        StatusCode::NO_CONTENT => decision_id.expect("a Decision-Id"),
        other => panic!("offers/next answered {other}"),
    };
    // The same player in the sandbox.
    let sandbox = Sdk {
        game: sdk.game.clone(),
        key: app.sdk_key(&sdk.game, "sandbox").await,
    };
    app.send_events(&sandbox, "ana", json!([earned("gold", 7, "sb1")]))
        .await;

    let path = format!("/v1/games/{}/players/ana/export", sdk.game);
    let export = app.get_json(&path).await;
    assert_eq!(export["player_id"], "ana");
    assert_eq!(export["game_id"], sdk.game);
    assert!(
        ["holdout", "treatment"].contains(&export["group"].as_str().unwrap_or("")),
        "{export}"
    );
    assert_eq!(
        export["experiments"],
        json!([{"experiment_id": experiment["experiment_id"], "variant": "cheap"}])
    );
    let prod = &export["environments"][0];
    assert_eq!(prod["environment"], "production");
    let today = chrono::Utc::now().date_naive().to_string();
    assert_eq!(prod["install_day"], today.as_str(), "{prod}");
    assert_eq!(prod["last_seen"], today.as_str());
    assert_eq!(prod["platform"], "android");
    let sessions = prod["sessions"].as_array().expect("sessions");
    assert_eq!(sessions.len(), 1, "{prod}");
    assert_eq!(sessions[0]["session_id"], sid.as_str());
    assert_eq!(sessions[0]["attributes"], attributes);
    assert_eq!(prod["balances"], json!({"gems": 0, "gold": 180}));
    assert_eq!(
        prod["inventory"],
        json!([{"item_id": "sword", "quantity": 1}])
    );
    assert_eq!(prod["lifetime_spend_cents"], 499);
    let ledger: Vec<(&str, &str, i64)> = prod["ledger"]
        .as_array()
        .expect("ledger")
        .iter()
        .map(|l| {
            (
                l["tx_id"].as_str().unwrap_or(""),
                l["kind"].as_str().unwrap_or(""),
                l["amount"].as_i64().unwrap_or(-1),
            )
        })
        .collect();
    assert_eq!(
        ledger,
        [
            ("e1", "currency_earned", 300),
            ("s1", "currency_spent", 120),
            ("p1", "purchase", 499)
        ]
    );
    assert_eq!(prod["ledger"][2]["proof"], "verified");
    let decisions = prod["decisions"].as_array().expect("decisions");
    assert_eq!(decisions.len(), 1, "{prod}");
    assert_eq!(decisions[0]["offer_id"], decision_id.as_str());
    assert_eq!(decisions[0]["session_id"], sid.as_str());
    assert_eq!(prod["purchases"]["verified_cents"], 499);
    assert_eq!(
        prod["store_transactions"],
        json!([{"transaction": "google_play:token-ana", "tx_id": "p1", "amount_cents": 499,
            "quantity": 1, "granted": [{"item_id": "sword", "quantity": 1}]}])
    );
    let sb = &export["environments"][1];
    assert_eq!(sb["environment"], "sandbox");
    assert_eq!(sb["balances"]["gold"], 7, "{sb}");
    assert_eq!(sb["ledger"].as_array().map(Vec::len), Some(1));
    assert_eq!(sb["store_transactions"], json!([]));
    assert_eq!(sb["decisions"], json!([]));

    // Nothing held: 404; a viewer: 403; another studio: 404.
    app.get(format!("/v1/games/{}/players/nobody/export", sdk.game))
        .expect_error(StatusCode::NOT_FOUND, "not_found")
        .await;
    app.get(&path)
        .token(&app.token("studio-a", Role::Viewer))
        .expect_error(StatusCode::FORBIDDEN, "forbidden")
        .await;
    let foreign: Value = app
        .get(&path)
        .token(&app.token("studio-b", Role::Admin))
        .expect_error(StatusCode::NOT_FOUND, "not_found")
        .await;
    assert!(!foreign.to_string().contains("ana"), "{foreign}");
}
