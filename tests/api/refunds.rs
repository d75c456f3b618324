//! Store refunds through the notification routes, as the stores call them: the tests bring
//! their own Apple-shaped certificate authority (its root configured as an extra App Store
//! root) and Google licensing key, buy with real signed receipts, then post signed App Store
//! Server Notifications and Pub/Sub pushes.
//!
//! A refund takes the purchase's revenue back (the player's lifetime spend goes down, the
//! ledger shows a `refund`) and the items the player still holds (pushed to its socket);
//! what was used stays recorded as unrecovered. Each notification counts once, and so does
//! each transaction. A refund of a purchase not seen yet waits for it. A reversal restores.
//! A notification that proves nothing is a 401 and changes nothing. A refund of a purchase of
//! an earlier month is an adjustment line of this month, on the live revenue-share standing
//! as the month's close will list it.

use chrono::{DateTime, Months, Utc};
use offer_domain::holdout::is_holdout;
use offer_engine::service::economy::adjustments;
use offer_engine::store::Collection;
use offer_receipts::test_support::{
    TEST_APP_APPLE_ID, TestAppleCa, TestGoogleKey, notification, pubsub_test_notification,
    pubsub_voided,
};
use reqwest::StatusCode;
use serde_json::{Value, json};
use uuid::Uuid;

use super::fixtures::{Sdk, item, spent, with};
use super::helpers::{TestApp, default_backend};
use super::receipt_fixtures::{
    self, BUNDLE_ID, PACKAGE, apple_jws, apple_receipt, google_receipt, potion, sword,
};
use super::ws_client::{Fmt, assert_fields, connect, event, fresh};

/// A server on the default backend trusting `ca`'s root as an App Store root.
async fn server(ca: &TestAppleCa) -> TestApp {
    receipt_fixtures::server(ca, default_backend()).await
}

/// A game enforcing receipts, selling a sword (both stores, 4.99) and a stack of 3 potions
/// (App Store, 0.99), with both stores configured; its Google Play notification token.
async fn game(app: &TestApp, google: &TestGoogleKey) -> (Sdk, String) {
    let (sword, potion) = (sword(), potion());
    let sdk = app.game_with(json!([sword, potion])).await;
    let stores = app
        .put(
            format!("/v1/games/{}/stores", sdk.game),
            json!({
                "verification": "enforce",
                "app_store": {"bundle_id": BUNDLE_ID, "app_apple_id": TEST_APP_APPLE_ID},
                "google_play": {"package_name": PACKAGE, "public_key": google.public_base64()},
            }),
        )
        .expect(StatusCode::OK)
        .await;
    let url = stores["notification_urls"]["google_play"]
        .as_str()
        .expect("the admin sees the Google Play URL");
    let token = url
        .split_once("?token=")
        .expect("the URL carries its token")
        .1
        .to_owned();
    (sdk, token)
}

/// A signed StoreKit 2 transaction of one unit of `product`, in production.
fn apple_transaction(ca: &TestAppleCa, product: &str, transaction_id: &str) -> String {
    apple_jws(ca, product, transaction_id, 1)
}

/// A purchase event proven by `receipt`.
fn purchase(tx_id: &str, receipt: Value) -> Value {
    json!({"type": "purchase", "item_ids": [], "price_cents": 0, "tx_id": tx_id, "receipt": receipt})
}

/// A purchase of `product` on the App Store.
fn apple_purchase(ca: &TestAppleCa, product: &str, transaction_id: &str, tx_id: &str) -> Value {
    purchase(tx_id, apple_receipt(ca, product, transaction_id, 1))
}

/// A purchase of `product` on Google Play.
fn google_purchase(key: &TestGoogleKey, product: &str, token: &str, tx_id: &str) -> Value {
    purchase(tx_id, google_receipt(key, product, token))
}

/// An App Store notification of type `kind` about a transaction of `product`, signed by
/// `ca`.
fn apple_notice(
    ca: &TestAppleCa,
    kind: &str,
    uuid: &str,
    product: &str,
    transaction_id: &str,
) -> Value {
    let inner = apple_transaction(ca, product, transaction_id);
    json!({"signedPayload": ca.sign(&notification(kind, uuid, &inner, BUNDLE_ID))})
}

/// Posts an App Store notification for `game`; the answer's body.
async fn post_apple(app: &TestApp, game: &str, body: Value, status: StatusCode) -> Value {
    app.post(format!("/v1/stores/app-store/notifications/{game}"), body)
        .no_token()
        .expect(status)
        .await
}

/// Posts a Pub/Sub push for `game` with `token` (none when `None`).
async fn post_google(
    app: &TestApp,
    game: &str,
    token: Option<&str>,
    push: Vec<u8>,
    status: StatusCode,
) -> Value {
    let path = match token {
        Some(token) => format!("/v1/stores/google-play/notifications/{game}?token={token}"),
        None => format!("/v1/stores/google-play/notifications/{game}"),
    };
    app.post(path, json!({}))
        .raw("application/json", push)
        .no_token()
        .expect(status)
        .await
}

/// A player's record.
async fn record(app: &TestApp, sdk: &Sdk, player: &str) -> Value {
    app.get_json(format!("/v1/games/{}/players/{player}", sdk.game))
        .await
}

/// Sends `events` in a new REST session of `player`.
async fn send(app: &TestApp, sdk: &Sdk, player: &str, events: Value) {
    app.send_events(sdk, player, events).await;
}

#[tokio::test]
async fn an_app_store_refund_takes_back_what_is_held_once_and_a_reversal_restores_it() {
    let ca = TestAppleCa::new();
    let key = TestGoogleKey::new();
    let app = server(&ca).await;
    let (sdk, _) = game(&app, &key).await;
    let session = fresh(&sdk.game);
    let player = format!("p-{session}");
    let mut c = connect(&app, &sdk.key, Fmt::Json).await;
    c.hello(session, None).await;

    // Three potions bought for 99 cents; one used.
    c.send(event(apple_purchase(
        &ca,
        "com.studio.game.potion",
        "3000000000000001",
        "b1",
    )))
    .await;
    c.recv_type("inventory").await;
    c.send(event(
        json!({"type": "item_used", "item_id": "potion", "quantity": 1, "tx_id": "u1"}),
    ))
    .await;
    assert_fields(
        &c.recv_answer().await,
        json!({"type": "inventory", "items": [{"item_id": "potion", "quantity": 2}]}),
    );
    assert_eq!(
        record(&app, &sdk, &player).await["lifetime_spend_cents"],
        99
    );

    // Apple refunds it: the two potions held go, the used one is unrecovered, the revenue
    // comes off the player's spend, and the socket hears of the new inventory.
    let refund = apple_notice(
        &ca,
        "REFUND",
        "n-1",
        "com.studio.game.potion",
        "3000000000000001",
    );
    let answer = post_apple(&app, &sdk.game, refund.clone(), StatusCode::OK).await;
    assert_eq!(
        answer,
        json!({"outcome": "refunded", "cents": 99, "items": {"potion": 2}, "unrecovered": {"potion": 1}})
    );
    assert_fields(
        &c.recv_type("inventory").await,
        json!({"type": "inventory", "items": []}),
    );
    let refunded = record(&app, &sdk, &player).await;
    assert_eq!(refunded["lifetime_spend_cents"], 0, "{refunded}");
    // The economy shows what the store took back beside the net revenue.
    let revenue_path = format!("/v1/games/{}/economy/revenue", sdk.game);
    let revenue = app.get_json(&revenue_path).await;
    assert_eq!(
        (&revenue["counted_cents"], &revenue["refunded_cents"]),
        (&json!(0), &json!(99)),
        "{revenue}"
    );
    assert_eq!(refunded["inventory"], json!([]));
    assert_eq!(refunded["ledger_total"], 2);
    assert_eq!(refunded["ledger"][0]["kind"], "refund");
    assert_eq!(refunded["ledger"][0]["amount"], 99);
    assert_eq!(
        refunded["ledger"][0]["tx_id"],
        "refund:app_store:3000000000000001"
    );

    // Apple retries the same notification; then sends another refund of the same
    // transaction: neither changes anything.
    let again = post_apple(&app, &sdk.game, refund, StatusCode::OK).await;
    assert_eq!(again["outcome"], "duplicate");
    let second = apple_notice(
        &ca,
        "REFUND",
        "n-2",
        "com.studio.game.potion",
        "3000000000000001",
    );
    let again = post_apple(&app, &sdk.game, second, StatusCode::OK).await;
    assert_eq!(again["outcome"], "unchanged");
    assert_eq!(record(&app, &sdk, &player).await, refunded);

    // The refund is reversed: the revenue and the two potions taken come back.
    let reversed = apple_notice(
        &ca,
        "REFUND_REVERSED",
        "n-3",
        "com.studio.game.potion",
        "3000000000000001",
    );
    let answer = post_apple(&app, &sdk.game, reversed, StatusCode::OK).await;
    assert_eq!(
        answer,
        json!({"outcome": "restored", "cents": 99, "items": {"potion": 2}, "unrecovered": {}})
    );
    assert_fields(
        &c.recv_type("inventory").await,
        json!({"type": "inventory", "items": [{"item_id": "potion", "quantity": 2}]}),
    );
    let restored = record(&app, &sdk, &player).await;
    assert_eq!(restored["lifetime_spend_cents"], 99, "{restored}");
    // The reversal counts as revenue again; the refund stays shown as one.
    let revenue = app.get_json(&revenue_path).await;
    assert_eq!(
        (&revenue["counted_cents"], &revenue["refunded_cents"]),
        (&json!(99), &json!(99)),
        "{revenue}"
    );
    assert_eq!(restored["ledger"][0]["kind"], "purchase");

    // A notification of another type is answered and ignored.
    let other = apple_notice(
        &ca,
        "CONSUMPTION_REQUEST",
        "n-4",
        "com.studio.game.potion",
        "3000000000000001",
    );
    let answer = post_apple(&app, &sdk.game, other, StatusCode::OK).await;
    assert_eq!(answer["outcome"], "ignored");
    assert_eq!(record(&app, &sdk, &player).await, restored);
}

#[tokio::test]
async fn a_refunded_currency_pack_takes_back_what_the_wallet_holds_and_a_reversal_gives_it() {
    let ca = TestAppleCa::new();
    let key = TestGoogleKey::new();
    let app = server(&ca).await;
    let (sdk, _) = game(&app, &key).await;
    let pack = with(
        item("gems_500", "currency", 4.99),
        json!({"quantity": 500, "currency_id": "gems",
               "store_products": {"app_store": "com.studio.game.gems500"}}),
    );
    app.post(format!("/v1/games/{}/items", sdk.game), pack)
        .expect(StatusCode::CREATED)
        .await;
    let product = "com.studio.game.gems500";
    send(
        &app,
        &sdk,
        "whale",
        json!([apple_purchase(&ca, product, "3000000000000050", "g1")]),
    )
    .await;
    // 500 gems credited; 120 spent since.
    send(&app, &sdk, "whale", json!([spent("gems", 120, "s1")])).await;
    assert_eq!(record(&app, &sdk, "whale").await["balances"]["gems"], 380);

    let refund = apple_notice(&ca, "REFUND", "n-g1", product, "3000000000000050");
    let answer = post_apple(&app, &sdk.game, refund.clone(), StatusCode::OK).await;
    assert_eq!(
        answer,
        json!({"outcome": "refunded", "cents": 499, "items": {"currency:gems": 380},
               "unrecovered": {"currency:gems": 120}})
    );
    let whale = record(&app, &sdk, "whale").await;
    assert_eq!(whale["balances"]["gems"], 0, "{whale}");
    assert_eq!(whale["lifetime_spend_cents"], 0, "{whale}");
    // Again: a duplicate, nothing more taken.
    let again = post_apple(&app, &sdk.game, refund, StatusCode::OK).await;
    assert_eq!(again["outcome"], "duplicate");
    assert_eq!(record(&app, &sdk, "whale").await["balances"]["gems"], 0);

    // Reversed: what was taken comes back, not what the player spent.
    let reversed = apple_notice(&ca, "REFUND_REVERSED", "n-g2", product, "3000000000000050");
    let answer = post_apple(&app, &sdk.game, reversed, StatusCode::OK).await;
    assert_eq!(
        answer,
        json!({"outcome": "restored", "cents": 499, "items": {"currency:gems": 380}, "unrecovered": {}})
    );
    let whale = record(&app, &sdk, "whale").await;
    assert_eq!(whale["balances"]["gems"], 380, "{whale}");
    assert_eq!(whale["lifetime_spend_cents"], 499, "{whale}");
}

#[tokio::test]
async fn a_google_refund_of_a_purchase_not_seen_yet_waits_for_it() {
    let ca = TestAppleCa::new();
    let key = TestGoogleKey::new();
    let app = server(&ca).await;
    let (sdk, token) = game(&app, &key).await;

    // Google voids a purchase the engine never saw, and Pub/Sub delivers it twice.
    let push = pubsub_voided(PACKAGE, "tok-early", "m-1", 1);
    for _ in 0..2 {
        let answer = post_google(&app, &sdk.game, Some(&token), push.clone(), StatusCode::OK).await;
        assert_eq!(answer["outcome"], "waiting", "{answer}");
    }

    // The purchase arrives: it is granted and recorded, then refunded at once.
    send(
        &app,
        &sdk,
        "late",
        json!([google_purchase(&key, "sword", "tok-early", "g1")]),
    )
    .await;
    let late = record(&app, &sdk, "late").await;
    assert_eq!(late["inventory"], json!([]), "{late}");
    assert_eq!(late["lifetime_spend_cents"], 0);
    assert_eq!(late["ledger_total"], 2);
    assert_eq!(late["ledger"][0]["kind"], "refund");
    assert_eq!(late["ledger"][0]["amount"], 499);
    assert_eq!(late["ledger"][1]["kind"], "purchase");

    // The push again, now applied: a duplicate.
    let answer = post_google(&app, &sdk.game, Some(&token), push, StatusCode::OK).await;
    assert_eq!(answer["outcome"], "duplicate");
    assert_eq!(record(&app, &sdk, "late").await, late);
}

#[tokio::test]
async fn a_google_refund_after_the_purchase_takes_it_back_once() {
    let ca = TestAppleCa::new();
    let key = TestGoogleKey::new();
    let app = server(&ca).await;
    let (sdk, token) = game(&app, &key).await;
    send(
        &app,
        &sdk,
        "buyer",
        json!([google_purchase(&key, "sword", "tok-1", "g1")]),
    )
    .await;
    assert_eq!(
        record(&app, &sdk, "buyer").await["lifetime_spend_cents"],
        499
    );

    // The game's SDK is switched off: the store's refund is applied all the same (a 503
    // would only make the store send it again).
    app.set_kill_switch(&sdk.game, 3).await;
    // A quantity-based partial refund of a purchase of one unit refunds it whole.
    let push = pubsub_voided(PACKAGE, "tok-1", "m-1", 2);
    let answer = post_google(&app, &sdk.game, Some(&token), push.clone(), StatusCode::OK).await;
    assert_eq!(
        answer,
        json!({"outcome": "refunded", "cents": 499, "items": {"sword": 1}, "unrecovered": {}})
    );
    let buyer = record(&app, &sdk, "buyer").await;
    assert_eq!(buyer["lifetime_spend_cents"], 0, "{buyer}");
    assert_eq!(buyer["inventory"], json!([]));

    // Delivered again, and voided again by another message: nothing more.
    let answer = post_google(&app, &sdk.game, Some(&token), push, StatusCode::OK).await;
    assert_eq!(answer["outcome"], "duplicate");
    let other = pubsub_voided(PACKAGE, "tok-1", "m-2", 1);
    let answer = post_google(&app, &sdk.game, Some(&token), other, StatusCode::OK).await;
    assert_eq!(answer["outcome"], "unchanged");
    assert_eq!(record(&app, &sdk, "buyer").await, buyer);

    // A test notification is answered and ignored.
    let test = pubsub_test_notification(PACKAGE, "m-3");
    let answer = post_google(&app, &sdk.game, Some(&token), test, StatusCode::OK).await;
    assert_eq!(answer["outcome"], "ignored");
}

#[tokio::test]
async fn a_notification_that_proves_nothing_is_refused_and_changes_nothing() {
    let ca = TestAppleCa::new();
    let key = TestGoogleKey::new();
    let app = server(&ca).await;
    let (sdk, token) = game(&app, &key).await;
    send(
        &app,
        &sdk,
        "buyer",
        json!([
            apple_purchase(&ca, "com.studio.game.sword", "3000000000000009", "a1"),
            google_purchase(&key, "sword", "tok-9", "g1"),
        ]),
    )
    .await;
    let before = record(&app, &sdk, "buyer").await;
    assert_eq!(before["lifetime_spend_cents"], 998, "{before}");

    // App Store: signed by another authority; of another app; not even a JWS.
    let forger = TestAppleCa::new();
    let forged = apple_notice(
        &forger,
        "REFUND",
        "f-1",
        "com.studio.game.sword",
        "3000000000000009",
    );
    post_apple(&app, &sdk.game, forged, StatusCode::UNAUTHORIZED).await;
    let inner = apple_transaction(&ca, "com.studio.game.sword", "3000000000000009");
    let foreign =
        json!({"signedPayload": ca.sign(&notification("REFUND", "f-2", &inner, "com.other.app"))});
    let refused = post_apple(&app, &sdk.game, foreign, StatusCode::UNAUTHORIZED).await;
    assert_eq!(
        refused["error"]["code"], "notification_invalid",
        "{refused}"
    );
    post_apple(
        &app,
        &sdk.game,
        json!({"signedPayload": "not.a.jws"}),
        StatusCode::UNAUTHORIZED,
    )
    .await;
    // A body without its payload is the caller's mistake; an unknown game is not found.
    app.post(
        format!("/v1/stores/app-store/notifications/{}", sdk.game),
        json!({"payload": "x"}),
    )
    .no_token()
    .expect_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_failed")
    .await;
    let genuine = apple_notice(
        &ca,
        "REFUND",
        "g-1",
        "com.studio.game.sword",
        "3000000000000009",
    );
    app.post(
        format!("/v1/stores/app-store/notifications/{}", Uuid::new_v4()),
        genuine,
    )
    .no_token()
    .expect_error(StatusCode::NOT_FOUND, "not_found")
    .await;

    // Google Play: no token, another token, another package.
    let push = pubsub_voided(PACKAGE, "tok-9", "m-1", 1);
    let refused = post_google(
        &app,
        &sdk.game,
        None,
        push.clone(),
        StatusCode::UNAUTHORIZED,
    )
    .await;
    assert_eq!(refused["error"]["code"], "notification_invalid");
    assert!(
        !refused.to_string().contains(&token),
        "the answer never shows the token"
    );
    post_google(
        &app,
        &sdk.game,
        Some("not-the-token"),
        push,
        StatusCode::UNAUTHORIZED,
    )
    .await;
    let foreign = pubsub_voided("com.other.app", "tok-9", "m-2", 1);
    post_google(
        &app,
        &sdk.game,
        Some(&token),
        foreign,
        StatusCode::UNAUTHORIZED,
    )
    .await;

    assert_eq!(record(&app, &sdk, "buyer").await, before);

    // A game without App Store settings has nothing to check a notification against.
    let bare = app
        .game_with(json!([item("sword", "equipment", 4.99)]))
        .await;
    let genuine = apple_notice(
        &ca,
        "REFUND",
        "g-2",
        "com.studio.game.sword",
        "3000000000000009",
    );
    let refused = post_apple(&app, &bare.game, genuine, StatusCode::UNAUTHORIZED).await;
    assert_eq!(refused["error"]["code"], "notification_invalid");
}

/// Moves the time the purchase of `transaction` (`<store>:<id>`) keeps in its claim back to
/// `at`, as a purchase made then would have written it. The engine refuses a purchase event
/// a day or more off its clock, so a verified purchase of an earlier month can only be put
/// there in the store; the test first checks that the purchase did keep its time.
async fn backdate_claim(app: &TestApp, game: Uuid, transaction: &str, at: DateTime<Utc>) {
    let store = &app.running.state.services.store;
    let coll = Collection::game(game, "redemptions");
    let bytes = store
        .get(coll, transaction)
        .await
        .expect("get")
        .expect("the purchase claimed its transaction");
    let mut claim: Value = serde_json::from_slice(&bytes).expect("a claim");
    let kept: DateTime<Utc> = serde_json::from_value(claim["purchased_at"].clone())
        .expect("the claim keeps the purchase's time");
    assert!((Utc::now() - kept).num_minutes().abs() < 5, "{claim}");
    claim["purchased_at"] = json!(at);
    store
        .put_all(
            coll,
            vec![(
                transaction.to_owned(),
                serde_json::to_vec(&claim).expect("json"),
            )],
        )
        .await
        .expect("put");
}

#[tokio::test]
async fn a_refund_of_an_earlier_months_purchase_is_one_adjustment_line_of_this_month() {
    let ca = TestAppleCa::new();
    let key = TestGoogleKey::new();
    let app = server(&ca).await;
    let (sdk, token) = game(&app, &key).await;
    let game_id: Uuid = sdk.game.parse().expect("uuid");
    let now = Utc::now();
    let this_month = now.format("%Y-%m").to_string();
    let two_months_ago = now.checked_sub_months(Months::new(2)).expect("a date");

    // A sword bought on the App Store two months ago, and one on Google Play today.
    send(
        &app,
        &sdk,
        "old_buyer",
        json!([apple_purchase(
            &ca,
            "com.studio.game.sword",
            "3000000000000077",
            "b1"
        )]),
    )
    .await;
    backdate_claim(&app, game_id, "app_store:3000000000000077", two_months_ago).await;
    send(
        &app,
        &sdk,
        "new_buyer",
        json!([google_purchase(&key, "sword", "tok-now", "g1")]),
    )
    .await;

    // Both are refunded today; Apple retries its notification.
    let refund = apple_notice(
        &ca,
        "REFUND",
        "n-old",
        "com.studio.game.sword",
        "3000000000000077",
    );
    let answer = post_apple(&app, &sdk.game, refund.clone(), StatusCode::OK).await;
    assert_eq!(answer["outcome"], "refunded", "{answer}");
    let again = post_apple(&app, &sdk.game, refund, StatusCode::OK).await;
    assert_eq!(again["outcome"], "duplicate");
    let push = pubsub_voided(PACKAGE, "tok-now", "m-now", 1);
    let answer = post_google(&app, &sdk.game, Some(&token), push, StatusCode::OK).await;
    assert_eq!(answer["outcome"], "refunded", "{answer}");

    // One line, on this month, for the old purchase only; never naming its player.
    let services = &app.running.state.services;
    let lines = adjustments::of_month(services, game_id, &this_month)
        .await
        .expect("lines")
        .lines;
    assert_eq!(lines.len(), 1, "{lines:?}");
    let line = serde_json::to_value(&lines[0]).expect("json");
    let group = if is_holdout("old_buyer", game_id) {
        "holdout"
    } else {
        "treatment"
    };
    assert_fields(
        &line,
        json!({
            "month": this_month,
            "purchase_month": two_months_ago.format("%Y-%m").to_string(),
            "kind": "refund",
            "store": "app_store",
            "transaction_id": "3000000000000077",
            "amount_usd": -4.99,
            "group": group,
        }),
    );
    assert!(!line.to_string().contains("old_buyer"), "{line}");

    // Apple reverses it: a second line, positive.
    let reversed = apple_notice(
        &ca,
        "REFUND_REVERSED",
        "n-back",
        "com.studio.game.sword",
        "3000000000000077",
    );
    let answer = post_apple(&app, &sdk.game, reversed, StatusCode::OK).await;
    assert_eq!(answer["outcome"], "restored", "{answer}");
    let lines = adjustments::of_month(services, game_id, &this_month)
        .await
        .expect("lines")
        .lines;
    let amounts: Vec<(&str, f64)> = lines
        .iter()
        .map(|l| (l.kind.as_str(), l.amount_usd))
        .collect();
    assert_eq!(amounts, [("refund", -4.99), ("reversal", 4.99)]);
}

#[tokio::test]
async fn the_live_standing_lists_this_months_adjustment_lines_as_the_month_close_will() {
    let ca = TestAppleCa::new();
    let key = TestGoogleKey::new();
    let app = server(&ca).await;
    let (sdk, token) = game(&app, &key).await;
    let game_id: Uuid = sdk.game.parse().expect("uuid");
    let now = Utc::now();
    let this_month = now.format("%Y-%m").to_string();
    let last_month = now.checked_sub_months(Months::new(1)).expect("a date");

    // A sword bought on the App Store last month (a closed month), and one on Google Play
    // this month; both refunded today.
    send(
        &app,
        &sdk,
        "old_buyer",
        json!([apple_purchase(
            &ca,
            "com.studio.game.sword",
            "3000000000000088",
            "b1"
        )]),
    )
    .await;
    backdate_claim(&app, game_id, "app_store:3000000000000088", last_month).await;
    send(
        &app,
        &sdk,
        "new_buyer",
        json!([google_purchase(&key, "sword", "tok-this-month", "g1")]),
    )
    .await;
    let path = format!("/v1/games/{}/revenue-share", sdk.game);
    let before = app.get_json(&path).await;
    assert_eq!(before["adjustments"], json!([]), "{before}");
    assert_eq!(before["adjustments_usd"], 0.0, "{before}");

    let refund = apple_notice(
        &ca,
        "REFUND",
        "n-live",
        "com.studio.game.sword",
        "3000000000000088",
    );
    let answer = post_apple(&app, &sdk.game, refund, StatusCode::OK).await;
    assert_eq!(answer["outcome"], "refunded", "{answer}");
    let push = pubsub_voided(PACKAGE, "tok-this-month", "m-live", 1);
    let answer = post_google(&app, &sdk.game, Some(&token), push, StatusCode::OK).await;
    assert_eq!(answer["outcome"], "refunded", "{answer}");

    // The standing lists the old purchase's refund, and only it: the refund of this month's
    // purchase is in this month's figures like its purchase, no line.
    let share = app.get_json(&path).await;
    let lines = share["adjustments"].as_array().expect("lines");
    assert_eq!(lines.len(), 1, "{share}");
    let group = if is_holdout("old_buyer", game_id) {
        "holdout"
    } else {
        "treatment"
    };
    assert_fields(
        &lines[0],
        json!({
            "month": this_month,
            "purchase_month": last_month.format("%Y-%m").to_string(),
            "kind": "refund",
            "store": "app_store",
            "transaction_id": "3000000000000088",
            "amount_usd": -4.99,
            "group": group,
        }),
    );
    assert_eq!(share["adjustments_usd"], -4.99, "{share}");
    assert!(!share.to_string().contains("tok-this-month"), "{share}");
    // Already counted in the month's figures: the amount due does not add it.
    let due = share["base_fee_usd"].as_f64().expect("fee")
        + share["revenue_share_usd"].as_f64().expect("share");
    assert_eq!(share["amount_due_usd"], due, "{share}");

    // What the month's close will list: the lines it reads for this month, the same ones.
    let closing = adjustments::of_month(&app.running.state.services, game_id, &this_month)
        .await
        .expect("lines");
    assert_eq!(
        share["adjustments"],
        serde_json::to_value(&closing.lines).expect("json")
    );
    assert_eq!(share["adjustments_usd"], closing.total_usd);
}
