//! Purchases proven by store receipts, through the REST and WebSocket surfaces: the tests
//! bring their own Apple-shaped certificate authority (its root configured as an extra App
//! Store root) and their own Google licensing key, and sign real StoreKit 2 transactions
//! and Google Play purchase data with them.
//!
//! In `enforce` a verified receipt grants its product (never the client's items) and counts
//! its catalogue price times its quantity; a bare, forged, foreign or shared receipt grants
//! nothing; the same player's replay answers the first purchase again. In `report` a purchase
//! without a valid receipt is kept, granted and flagged, and its revenue stays out of the
//! player's spend.

use offer_receipts::AppleEnvironment;
use offer_receipts::GooglePurchaseState;
use offer_receipts::test_support::{
    TestAppleCa, TestGoogleKey, purchase_json, transaction_payload, unity_apple, unity_google,
};
use reqwest::StatusCode;
use serde_json::{Value, json};
use uuid::Uuid;

use super::economy::players_of;
use super::fixtures::{Sdk, bundle, item, with};
use super::helpers::{TestApp, default_backend, shared_backend};
use super::offers::{decision, offer};
use super::receipt_fixtures::{
    BUNDLE_ID, PACKAGE, apple_receipt, google_receipt, potion, server, sword,
};
use super::ws_client::{Fmt, assert_fields, connect, event, fresh};

/// A game selling a sword (App Store and Google Play), a stack of 3 potions (App Store) and
/// a shield without products, plus a bundle of sword and shield on Google Play; its
/// verification set to `mode` with both stores configured.
async fn game(app: &TestApp, google: &TestGoogleKey, mode: &str) -> Sdk {
    let (sword, potion) = (sword(), potion());
    let shield = item("shield", "equipment", 2.99);
    let sdk = app.game_with(json!([sword, potion, shield])).await;
    app.add_bundle(
        &sdk.game,
        with(
            bundle("Knight set", &["sword", "shield"], 6.49),
            json!({"store_products": {"google_play": "knight_set"}}),
        ),
    )
    .expect(StatusCode::CREATED)
    .await;
    app.put(
        format!("/v1/games/{}/stores", sdk.game),
        json!({
            "verification": mode,
            "app_store": {"bundle_id": BUNDLE_ID},
            "google_play": {"package_name": PACKAGE, "public_key": google.public_base64()},
        }),
    )
    .expect(StatusCode::OK)
    .await;
    sdk
}

/// A purchase claiming a potion for nothing, with `receipt` (if any).
fn purchase(tx_id: &str, receipt: Option<Value>) -> Value {
    let mut event =
        json!({"type": "purchase", "item_ids": ["potion"], "price_cents": 0, "tx_id": tx_id});
    if let Some(receipt) = receipt {
        event["receipt"] = receipt;
    }
    event
}

/// Sends `events` in session `sid` over REST; the batch outcome.
async fn send(app: &TestApp, sdk: &Sdk, sid: &str, events: Value) -> Value {
    app.post(
        "/v1/sdk/events",
        json!({"session_id": sid, "events": events}),
    )
    .token(&sdk.key)
    .expect(StatusCode::ACCEPTED)
    .await
}

/// The codes of a batch's refused events, by index.
fn rejected(outcome: &Value) -> Vec<(u64, String)> {
    outcome["rejected"]
        .as_array()
        .expect("rejected")
        .iter()
        .map(|r| {
            (
                r["index"].as_u64().expect("index"),
                r["code"].as_str().expect("code").to_owned(),
            )
        })
        .collect()
}

/// A player's record.
async fn record(app: &TestApp, sdk: &Sdk, player: &str) -> Value {
    app.get_json(format!("/v1/games/{}/players/{player}", sdk.game))
        .await
}

/// The inventory of a record as (item, quantity) pairs.
fn inventory(record: &Value) -> Vec<(String, i64)> {
    record["inventory"]
        .as_array()
        .expect("inventory")
        .iter()
        .map(|i| {
            (
                i["item_id"].as_str().expect("id").to_owned(),
                i["quantity"].as_i64().expect("quantity"),
            )
        })
        .collect()
}

#[tokio::test]
async fn enforce_grants_the_signed_product_once_and_nothing_else() {
    let ca = TestAppleCa::new();
    let key = TestGoogleKey::new();
    let app = server(&ca, default_backend()).await;
    let sdk = game(&app, &key, "enforce").await;
    let sid = app.open_session(&sdk, "buyer", json!({})).await;

    // Two swords bought on the App Store; the client claims a potion at 0 cents.
    let swords = apple_receipt(&ca, "com.studio.game.sword", "2000000000000001", 2);
    let outcome = send(
        &app,
        &sdk,
        &sid,
        json!([purchase("b1", Some(swords.clone()))]),
    )
    .await;
    assert_eq!(outcome["accepted"], 1, "{outcome}");
    let buyer = record(&app, &sdk, "buyer").await;
    assert_eq!(inventory(&buyer), [("sword".to_owned(), 2)]);
    assert_eq!(buyer["lifetime_spend_cents"], 998, "{buyer}");
    assert_eq!(buyer["ledger"][0]["amount"], 998);
    assert_eq!(buyer["ledger"][0]["proof"], "verified");

    // The same receipt again, under another tx_id: the first purchase answered again.
    let outcome = send(
        &app,
        &sdk,
        &sid,
        json!([purchase("b2", Some(swords.clone()))]),
    )
    .await;
    assert_eq!(outcome["accepted"], 1, "{outcome}");
    let buyer = record(&app, &sdk, "buyer").await;
    assert_eq!(inventory(&buyer), [("sword".to_owned(), 2)]);
    assert_eq!(buyer["lifetime_spend_cents"], 998);
    assert_eq!(buyer["ledger_total"], 1);

    // A potion stack bought three times over grants 3 x 3 potions.
    let potions = apple_receipt(&ca, "com.studio.game.potion", "2000000000000002", 3);
    send(&app, &sdk, &sid, json!([purchase("b3", Some(potions))])).await;
    let buyer = record(&app, &sdk, "buyer").await;
    assert_eq!(
        inventory(&buyer),
        [("potion".to_owned(), 9), ("sword".to_owned(), 2)]
    );
    assert_eq!(buyer["lifetime_spend_cents"], 998 + 297);

    // Refused, each alone, in one batch: no receipt; a receipt shared by another player
    // (below); a tampered payload; a product that is nothing of this game; a sandbox
    // transaction on a live key; a receipt signed by an unknown root; a Google signature by
    // another key; a pending Google purchase; a Unity App Store receipt that is not a
    // StoreKit 2 transaction.
    let mut tampered = apple_receipt(&ca, "com.studio.game.sword", "2000000000000003", 1);
    let jws = tampered["signed_transaction"]
        .as_str()
        .expect("jws")
        .to_owned();
    let parts: Vec<&str> = jws.split('.').collect();
    let forged_payload = transaction_payload(
        BUNDLE_ID,
        "com.studio.game.sword",
        "2000000000000003",
        AppleEnvironment::Production,
        50,
    );
    let forged = ca.sign(&forged_payload);
    let forged_body = forged.split('.').nth(1).expect("payload");
    tampered["signed_transaction"] = json!(format!("{}.{forged_body}.{}", parts[0], parts[2]));
    let unknown = apple_receipt(&ca, "com.studio.game.dragon", "2000000000000004", 1);
    let sandbox = json!({"store": "app_store", "signed_transaction": ca.sign(&transaction_payload(
        BUNDLE_ID, "com.studio.game.sword", "2000000000000005", AppleEnvironment::Sandbox, 1))});
    let stranger = TestAppleCa::new();
    let foreign_root = apple_receipt(&stranger, "com.studio.game.sword", "2000000000000006", 1);
    let other_key = google_receipt(&TestGoogleKey::other(), "sword", "token-other-key");
    let pending_data = purchase_json(
        PACKAGE,
        "sword",
        "token-pending",
        GooglePurchaseState::Pending,
    );
    let pending = json!({"store": "google_play", "purchase_data": pending_data, "signature": key.sign(&pending_data)});
    let pkcs7 = json!({"store": "unity", "receipt": unity_apple("MIIT0gYJKoZIhvcNAQcCoIITwzCCE78CAQExCzAJ")});
    let outcome = send(
        &app,
        &sdk,
        &sid,
        json!([
            purchase("r0", None),
            purchase("r1", Some(tampered)),
            purchase("r2", Some(unknown)),
            purchase("r3", Some(sandbox)),
            purchase("r4", Some(foreign_root)),
            purchase("r5", Some(other_key)),
            purchase("r6", Some(pending)),
            purchase("r7", Some(pkcs7)),
        ]),
    )
    .await;
    assert_eq!(outcome["accepted"], 0, "{outcome}");
    let mut expected = vec![(0, "receipt_required".to_owned())];
    expected.extend((1..8).map(|i| (i, "receipt_invalid".to_owned())));
    assert_eq!(rejected(&outcome), expected, "{outcome}");
    let messages: Vec<&str> = outcome["rejected"]
        .as_array()
        .expect("rejected")
        .iter()
        .map(|r| r["message"].as_str().expect("message"))
        .collect();
    for (i, reason) in [
        (1, "signature"),
        (2, "unknown_product"),
        (3, "environment"),
        (4, "untrusted_root"),
        (5, "signature"),
        (6, "not_purchased"),
        (7, "unsupported_receipt"),
    ] {
        assert!(messages[i].contains(reason), "{i}: {}", messages[i]);
    }
    let buyer = record(&app, &sdk, "buyer").await;
    assert_eq!(buyer["lifetime_spend_cents"], 998 + 297, "nothing counted");
    assert_eq!(buyer["ledger_total"], 2);

    // Receipt sharing: another player presenting the buyer's receipt gains nothing.
    let thief = app.open_session(&sdk, "thief", json!({})).await;
    let outcome = send(&app, &sdk, &thief, json!([purchase("t1", Some(swords))])).await;
    assert_eq!(
        rejected(&outcome),
        [(0, "receipt_already_redeemed".to_owned())]
    );
    // With its one event refused the thief never played: it has no record at all, so no
    // item, no spend and no ledger line.
    app.get(format!("/v1/games/{}/players/thief", sdk.game))
        .expect_error(StatusCode::NOT_FOUND, "not_found")
        .await;
}

#[tokio::test]
async fn google_play_receipts_grant_items_and_bundles_directly_or_through_unity() {
    let ca = TestAppleCa::new();
    let key = TestGoogleKey::new();
    let app = server(&ca, default_backend()).await;
    let sdk = game(&app, &key, "enforce").await;
    let sid = app.open_session(&sdk, "player", json!({})).await;
    let data = purchase_json(
        PACKAGE,
        "sword",
        "token-unity",
        GooglePurchaseState::Purchased,
    );
    let unity = json!({"store": "unity", "receipt": unity_google(&data, &key.sign(&data))});
    let outcome = send(
        &app,
        &sdk,
        &sid,
        json!([
            purchase(
                "g1",
                Some(google_receipt(&key, "knight_set", "token-bundle"))
            ),
            purchase("g2", Some(unity)),
        ]),
    )
    .await;
    assert_eq!(outcome["accepted"], 2, "{outcome}");
    let player = record(&app, &sdk, "player").await;
    assert_eq!(
        inventory(&player),
        [("shield".to_owned(), 1), ("sword".to_owned(), 2)]
    );
    // The bundle's price and the sword's, whatever the client claimed.
    assert_eq!(player["lifetime_spend_cents"], 649 + 499, "{player}");
}

#[tokio::test]
async fn a_verified_currency_pack_credits_its_currency_once() {
    let ca = TestAppleCa::new();
    let key = TestGoogleKey::new();
    let app = server(&ca, default_backend()).await;
    let sdk = game(&app, &key, "enforce").await;
    let pack = with(
        item("gems_500", "currency", 4.99),
        json!({"quantity": 500, "currency_id": "gems",
               "store_products": {"app_store": "com.studio.game.gems500"}}),
    );
    app.post(format!("/v1/games/{}/items", sdk.game), pack)
        .expect(StatusCode::CREATED)
        .await;
    let sid = app.open_session(&sdk, "buyer", json!({})).await;
    // Two packs in one App Store transaction; the client claims a potion at 0 cents.
    let receipt = apple_receipt(&ca, "com.studio.game.gems500", "2000000000000077", 2);
    let outcome = send(
        &app,
        &sdk,
        &sid,
        json!([purchase("gems1", Some(receipt.clone()))]),
    )
    .await;
    assert_eq!(outcome["accepted"], 1, "{outcome}");
    let buyer = record(&app, &sdk, "buyer").await;
    assert_eq!(buyer["balances"]["gems"], 1_000, "{buyer}");
    assert_eq!(inventory(&buyer), Vec::<(String, i64)>::new());
    assert_eq!(buyer["lifetime_spend_cents"], 998, "{buyer}");
    // The credit is a `currency_earned` line under the purchase's tx_id and the currency.
    let credit = buyer["ledger"]
        .as_array()
        .expect("ledger")
        .iter()
        .find(|l| l["kind"] == "currency_earned")
        .expect("a credit line")
        .clone();
    assert_eq!(
        (&credit["tx_id"], &credit["amount"], &credit["currency_id"]),
        (&json!("gems1:gems"), &json!(1_000), &json!("gems")),
        "{credit}"
    );
    // A replay of the purchase credits nothing more.
    let again = send(&app, &sdk, &sid, json!([purchase("gems1", Some(receipt))])).await;
    assert_eq!(again["accepted"], 1, "{again}");
    let buyer = record(&app, &sdk, "buyer").await;
    assert_eq!(buyer["balances"]["gems"], 1_000, "{buyer}");
    assert_eq!(buyer["lifetime_spend_cents"], 998, "{buyer}");
}

#[tokio::test]
async fn report_keeps_a_purchase_without_a_valid_receipt_flagged_and_uncounted() {
    let ca = TestAppleCa::new();
    let key = TestGoogleKey::new();
    let app = server(&ca, default_backend()).await;
    let sdk = game(&app, &key, "report").await;
    let sid = app.open_session(&sdk, "player", json!({})).await;
    let bare = json!({"type": "purchase", "item_ids": ["shield"], "price_cents": 1_000_000, "tx_id": "u1"});
    let forged = json!({"type": "purchase", "item_ids": ["shield"], "price_cents": 500, "tx_id": "u2",
        "receipt": {"store": "app_store", "signed_transaction": "a.b.c"}});
    let verified = purchase(
        "v1",
        Some(apple_receipt(
            &ca,
            "com.studio.game.sword",
            "2000000000000010",
            1,
        )),
    );
    let outcome = send(&app, &sdk, &sid, json!([bare, forged, verified])).await;
    assert_eq!(outcome["accepted"], 3, "{outcome}");
    let player = record(&app, &sdk, "player").await;
    // The client's items are granted for the unverified ones, the product for the other.
    assert_eq!(
        inventory(&player),
        [("shield".to_owned(), 2), ("sword".to_owned(), 1)]
    );
    // Only the verified purchase counts as the player's spend.
    assert_eq!(player["lifetime_spend_cents"], 499, "{player}");
    let proofs: Vec<(&str, &str, i64)> = player["ledger"]
        .as_array()
        .expect("ledger")
        .iter()
        .map(|l| {
            (
                l["tx_id"].as_str().expect("tx"),
                l["proof"].as_str().expect("proof"),
                l["amount"].as_i64().expect("amount"),
            )
        })
        .collect();
    assert!(
        proofs.contains(&("u1", "unverified", 1_000_000)),
        "{proofs:?}"
    );
    assert!(proofs.contains(&("u2", "unverified", 500)), "{proofs:?}");
    assert!(proofs.contains(&("v1", "verified", 499)), "{proofs:?}");
    assert_eq!(
        player["purchases"],
        json!({"reported_cents": 0, "verified_cents": 499,
               "unverified_cents": 1_000_500, "sandbox_cents": 0, "refunded_cents": 0}),
        "{player}"
    );
    // The economy's revenue shows the same side by side: counted, refunded, unverified.
    let revenue = app
        .get_json(format!("/v1/games/{}/economy/revenue?days=7", sdk.game))
        .await;
    assert_eq!(revenue["revenue_basis"], "verified", "{revenue}");
    assert_eq!(revenue["days"], 7);
    assert_eq!(
        (
            &revenue["counted_cents"],
            &revenue["refunded_cents"],
            &revenue["unverified_cents"]
        ),
        (&json!(499), &json!(0), &json!(1_000_500)),
        "{revenue}"
    );
    // A period out of range is refused.
    app.get(format!("/v1/games/{}/economy/revenue?days=91", sdk.game))
        .expect(StatusCode::UNPROCESSABLE_ENTITY)
        .await;
}

#[tokio::test]
async fn a_receipt_over_16_kib_or_of_an_unknown_store_fails_the_whole_batch() {
    let ca = TestAppleCa::new();
    let key = TestGoogleKey::new();
    let app = server(&ca, default_backend()).await;
    let sdk = game(&app, &key, "enforce").await;
    let sid = app.open_session(&sdk, "player", json!({})).await;
    let good = purchase(
        "ok",
        Some(apple_receipt(
            &ca,
            "com.studio.game.sword",
            "2000000000000020",
            1,
        )),
    );
    for receipt in [
        json!({"store": "app_store", "signed_transaction": "a".repeat(16 * 1024 + 1)}),
        json!({"store": "amazon", "receipt": "x"}),
        json!({"store": "app_store"}),
    ] {
        app.post(
            "/v1/sdk/events",
            json!({"session_id": sid, "events": [good.clone(), purchase("bad", Some(receipt))]}),
        )
        .token(&sdk.key)
        .expect_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_failed")
        .await;
    }
    // Nothing applied: the player never played, so it has no record at all.
    app.get(format!("/v1/games/{}/players/player", sdk.game))
        .expect_error(StatusCode::NOT_FOUND, "not_found")
        .await;
}

#[tokio::test]
async fn a_refused_receipt_on_the_socket_is_an_error_for_that_event() {
    let ca = TestAppleCa::new();
    let key = TestGoogleKey::new();
    let app = server(&ca, default_backend()).await;
    let sdk = game(&app, &key, "enforce").await;
    let mut c = connect(&app, &sdk.key, Fmt::Json).await;
    c.hello(fresh(&sdk.game), None).await;
    c.send(event(purchase("w1", None))).await;
    assert_fields(
        &c.recv_answer().await,
        json!({"type": "error", "code": "receipt_required"}),
    );
    let swords = apple_receipt(&ca, "com.studio.game.sword", "2000000000000030", 1);
    c.send(event(purchase("w2", Some(swords)))).await;
    assert_fields(
        &c.recv_answer().await,
        json!({"type": "inventory", "items": [{"item_id": "sword", "quantity": 1}]}),
    );
}

#[tokio::test]
async fn a_receipt_redeemed_on_one_node_is_shared_on_another() {
    let ca = TestAppleCa::new();
    let key = TestGoogleKey::new();
    let a = server(&ca, shared_backend()).await;
    let b = a.spawn_peer().await;
    let sdk = game(&a, &key, "enforce").await;
    let receipt = google_receipt(&key, "sword", &format!("token-{}", Uuid::new_v4()));
    let on_a = a.open_session(&sdk, "first", json!({})).await;
    let outcome = send(
        &a,
        &sdk,
        &on_a,
        json!([purchase("n1", Some(receipt.clone()))]),
    )
    .await;
    assert_eq!(outcome["accepted"], 1, "{outcome}");
    let on_b = b.open_session(&sdk, "second", json!({})).await;
    let outcome = send(
        &b,
        &sdk,
        &on_b,
        json!([purchase("n2", Some(receipt.clone()))]),
    )
    .await;
    assert_eq!(
        rejected(&outcome),
        [(0, "receipt_already_redeemed".to_owned())]
    );
    // The first player's replay on the other node answers its first purchase.
    let again = b.open_session(&sdk, "first", json!({})).await;
    let outcome = send(&b, &sdk, &again, json!([purchase("n3", Some(receipt))])).await;
    assert_eq!(outcome["accepted"], 1, "{outcome}");
    let first = record(&b, &sdk, "first").await;
    assert_eq!(inventory(&first), [("sword".to_owned(), 1)]);
    assert_eq!(first["ledger_total"], 1);
}

#[tokio::test]
async fn enforce_serves_only_offers_a_store_product_sells_and_the_trace_says_why() {
    let ca = TestAppleCa::new();
    let key = TestGoogleKey::new();
    let app = server(&ca, default_backend()).await;
    let sdk = game(&app, &key, "enforce").await;
    // The bundle (sword and shield, 6.49) sells on Google Play only: an Android player gets
    // it, an iOS player gets a single item one of its App Store products sells.
    // Two treated players: a holdout player gets no offer at all.
    let players = players_of(&sdk.game, false, 2);
    let android = app
        .open_session(&sdk, &players[0], json!({"platform": "android"}))
        .await;
    let (status, served, _) = offer(&app, &sdk, &android, "boss_raid").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(served["fallback_level"], 3, "{served}");
    assert_eq!(served["price_cents"], 649, "{served}");
    let ios = app
        .open_session(&sdk, &players[1], json!({"platform": "ios"}))
        .await;
    let (status, served, _) = offer(&app, &sdk, &ios, "boss_raid").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(served["fallback_level"], 4, "{served}");
    let item = served["items"][0]["item_id"].as_str().expect("an item");
    let catalogue = [("sword", 499), ("potion", 99)];
    assert!(
        catalogue
            .iter()
            .any(|(id, cents)| *id == item && served["price_cents"] == *cents),
        "{served}"
    );
    let record = decision(&app, &sdk, &served).await;
    let notes: Vec<(u64, &str)> = record["trace"]
        .as_array()
        .expect("trace")
        .iter()
        .map(|s| {
            (
                s["level"].as_u64().expect("level"),
                s["note"].as_str().expect("note"),
            )
        })
        .collect();
    assert!(notes.contains(&(3, "no_store_product")), "{record}");
}

#[tokio::test]
async fn figures_count_verified_revenue_from_verified_since_and_show_the_rest_apart() {
    let ca = TestAppleCa::new();
    let key = TestGoogleKey::new();
    let app = server(&ca, default_backend()).await;
    let sdk = game(&app, &key, "off").await;
    let arpu_path = format!("/v1/games/{}/holdout-arpu", sdk.game);
    // Before receipts are checked: a reported purchase of $10.
    let early = app.open_session(&sdk, "early", json!({})).await;
    let reported = json!({"type": "purchase", "item_ids": [], "price_cents": 1000, "tx_id": "r1"});
    send(&app, &sdk, &early, json!([reported])).await;
    let before = app.get_json(&arpu_path).await;
    assert_eq!(before["revenue_basis"], "reported", "{before}");
    assert_eq!(before["verified_since"], Value::Null);
    let total = |figures: &Value| {
        let t = figures["treatment_arpu"].as_f64().expect("t")
            * figures["n_treatment"].as_f64().expect("nt");
        let c = figures["control_arpu"].as_f64().expect("c")
            * figures["n_control"].as_f64().expect("nc");
        ((t + c) * 100.0).round() as i64
    };
    assert_eq!(total(&before), 1000);

    // Checks on (report): a verified sword counts, a forged $10,000 purchase does not, and
    // the reported $10 is shown apart.
    app.put(
        format!("/v1/games/{}/stores", sdk.game),
        json!({
            "verification": "report",
            "app_store": {"bundle_id": BUNDLE_ID},
            "google_play": {"package_name": PACKAGE, "public_key": key.public_base64()},
        }),
    )
    .expect(StatusCode::OK)
    .await;
    let buyer = app.open_session(&sdk, "buyer", json!({})).await;
    let forger = app.open_session(&sdk, "forger", json!({})).await;
    let verified = purchase(
        "v1",
        Some(apple_receipt(
            &ca,
            "com.studio.game.sword",
            "2000000000000040",
            1,
        )),
    );
    send(&app, &sdk, &buyer, json!([verified])).await;
    let forged: Vec<Value> = (0..20)
        .map(|i| json!({"type": "purchase", "item_ids": [], "price_cents": 50_000, "tx_id": format!("f{i}")}))
        .collect();
    send(&app, &sdk, &forger, json!(forged)).await;
    let after = app.get_json(&arpu_path).await;
    assert_eq!(after["revenue_basis"], "verified", "{after}");
    assert!(after["verified_since"].is_string(), "{after}");
    assert_eq!(total(&after), 499, "{after}");
    assert_eq!(after["revenue_before_verified_usd"], 10.0, "{after}");
    let share = app
        .get_json(format!("/v1/games/{}/revenue-share", sdk.game))
        .await;
    assert_eq!(share["revenue_basis"], "verified", "{share}");

    // A studio importing purchases for holdout players (membership is a public hash) moves
    // neither the verified figures nor the verdict.
    let game_id: uuid::Uuid = sdk.game.parse().expect("game id");
    let events: Vec<Value> = (0..)
        .map(|i| format!("imported_{i}"))
        .filter(|p| offer_domain::holdout::is_holdout(p, game_id))
        .take(500)
        .enumerate()
        .map(|(i, player)| {
            json!({"player_id": player, "type": "purchase", "item_ids": [],
                   "price_cents": 10_000, "tx_id": format!("imp{i}"),
                   "ts": chrono::Utc::now().to_rfc3339()})
        })
        .collect();
    app.post(
        format!("/v1/games/{}/events/import", sdk.game),
        json!({"events": events}),
    )
    .expect(StatusCode::OK)
    .await;
    let imported = app.get_json(&arpu_path).await;
    assert_eq!(total(&imported), 499, "{imported}");
    for field in ["treatment_arpu", "control_arpu", "eligible", "p_value"] {
        assert_eq!(imported[field], after[field], "{field}: {imported}");
    }
    let share_now = app
        .get_json(format!("/v1/games/{}/revenue-share", sdk.game))
        .await;
    assert_eq!(share_now["eligible"], share["eligible"], "{share_now}");
}
