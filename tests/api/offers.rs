//! The offer pipeline through the real SDK surface: every level and fall-through, the
//! contract's step order, holdout, guardrails, kill switch, modes, approvals, experiments.

use offer_domain::holdout::is_holdout;
use reqwest::StatusCode;
use serde_json::{Value, json};
use uuid::Uuid;

use super::helpers::{TestApp, expect_error, item, pack, spawn_app};

/// A game plus an SDK key, ready to open sessions.
struct Sdk {
    game: String,
    key: String,
}

async fn game_with(app: &TestApp, items: Value) -> Sdk {
    let game = app.create_game().await;
    if items.as_array().is_some_and(|a| !a.is_empty()) {
        assert_eq!(app.bulk(&game, items).await.status(), StatusCode::OK);
    }
    let key = app.sdk_key(&game, "production").await;
    Sdk { game, key }
}

/// A player id in (or out of) the holdout of `game`.
fn player(game: &str, holdout: bool) -> String {
    let id: Uuid = game.parse().expect("uuid");
    (0..)
        .map(|i| format!("player_{i}"))
        .find(|p| is_holdout(p, id) == holdout)
        .expect("some player")
}

async fn session(app: &TestApp, sdk: &Sdk, player_id: &str, attributes: Value) -> String {
    let sid = Uuid::new_v4().to_string();
    let r = app
        .post(
            "/v1/sdk/sessions",
            &sdk.key,
            json!({"session_id": sid, "player_id": player_id, "attributes": attributes}),
        )
        .await;
    assert_eq!(
        r.status(),
        StatusCode::CREATED,
        "{}",
        r.text().await.unwrap_or_default()
    );
    sid
}

/// A featured, treated player's session.
async fn featured(app: &TestApp, sdk: &Sdk) -> String {
    session(
        app,
        sdk,
        &player(&sdk.game, false),
        json!({"country": "US", "platform": "android"}),
    )
    .await
}

async fn offer(
    app: &TestApp,
    sdk: &Sdk,
    sid: &str,
    event: &str,
) -> (StatusCode, Value, Option<String>) {
    let r = app
        .post(
            "/v1/sdk/offers/next",
            &sdk.key,
            json!({"session_id": sid, "trigger_context": {"event_type": event}}),
        )
        .await;
    let status = r.status();
    let outcome = r
        .headers()
        .get("offer-outcome")
        .map(|v| v.to_str().expect("ascii").to_owned());
    let body = if status == StatusCode::OK {
        r.json().await.expect("json")
    } else {
        Value::Null
    };
    (status, body, outcome)
}

async fn set_mode(app: &TestApp, game: &str, mode: &str) -> reqwest::Response {
    app.post(
        &format!("/v1/games/{game}/mode"),
        &app.admin,
        json!({"mode": mode}),
    )
    .await
}

/// Shadow -> Assisted -> Autonomous with a price ceiling.
async fn autonomous(app: &TestApp, game: &str) {
    let r = app
        .patch(
            &format!("/v1/games/{game}/guardrails"),
            &app.admin,
            json!({"max_price_cents": 100_000}),
        )
        .await;
    assert_eq!(r.status(), StatusCode::OK);
    assert_eq!(
        set_mode(app, game, "assisted").await.status(),
        StatusCode::OK
    );
    assert_eq!(
        set_mode(app, game, "autonomous").await.status(),
        StatusCode::OK
    );
}

async fn kill(app: &TestApp, game: &str, level: u8) {
    let r = app
        .send(
            reqwest::Method::PUT,
            &format!("/v1/games/{game}/kill-switch"),
            &app.admin,
            json!({"level": level, "reason": "test"}),
        )
        .await;
    assert_eq!(r.status(), StatusCode::OK);
}

fn ids(offer: &Value) -> Vec<String> {
    offer["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|i| i["item_id"].as_str().expect("id").to_owned())
        .collect()
}

fn catalogue() -> Value {
    json!([
        pack("gems_100", 100, 0.99),
        pack("gems_500", 500, 3.99),
        item("potion", "consumable", 1.99),
        item("sword", "equipment", 4.99),
        item("hat", "cosmetic", 2.99)
    ])
}

#[tokio::test]
async fn l1_serves_in_autonomous_mode_with_full_item_records() {
    let app = spawn_app().await;
    let sdk = game_with(&app, catalogue()).await;
    autonomous(&app, &sdk.game).await;
    let sid = featured(&app, &sdk).await;
    let (status, body, _) = offer(&app, &sdk, &sid, "boss_raid").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["fallback_level"], 1);
    let first = &body["items"][0];
    for field in [
        "item_id",
        "item_name",
        "category",
        "price_usd",
        "price_cents",
        "value_usd",
        "fallback_eligible",
    ] {
        assert!(!first[field].is_null(), "item record lacks {field}");
    }
    assert!(body["offer_id"].is_string() && body["expires_at"].is_string());
    assert_eq!(
        body["price_cents"].as_i64().expect("cents") as f64 / 100.0,
        body["price_usd"].as_f64().expect("usd")
    );
    // The dashboard sees the decision and its trace.
    let r = app
        .get(
            &format!(
                "/v1/games/{}/offers/{}",
                sdk.game,
                body["offer_id"].as_str().expect("id")
            ),
            &app.admin,
        )
        .await;
    assert_eq!(r.status(), StatusCode::OK);
    let record: Value = r.json().await.expect("json");
    assert_eq!(record["fallback_level"], 1);
    assert_eq!(record["outcome"], "offer");
}

#[tokio::test]
async fn each_level_falls_through_to_the_next() {
    let app = spawn_app().await;
    // Only cosmetics and bundles: L1 (currency, consumable, equipment) has nothing.
    let sdk = game_with(
        &app,
        json!([item("hat", "cosmetic", 2.99), {"item_id": "crate", "item_name": "Crate",
        "category": "bundle", "price_usd": 9.99, "fallback_eligible": false}]),
    )
    .await;
    autonomous(&app, &sdk.game).await;
    let r = app
        .send(
            reqwest::Method::PUT,
            &format!("/v1/games/{}/offer-templates", sdk.game),
            &app.admin,
            json!([{"event_type": "boss_raid", "categories": ["cosmetic"]}]),
        )
        .await;
    assert_eq!(r.status(), StatusCode::OK);
    let r = app.post(&format!("/v1/games/{}/offer-bundles", sdk.game), &app.admin,
        json!({"name": "Raid pack", "item_ids": ["crate"], "price_usd": 7.99, "triggers": ["level_up"]})).await;
    assert_eq!(r.status(), StatusCode::CREATED);
    let sid = featured(&app, &sdk).await;
    // L1 empty -> L2 (template for boss_raid).
    let (_, body, _) = offer(&app, &sdk, &sid, "boss_raid").await;
    assert_eq!(body["fallback_level"], 2);
    assert_eq!(ids(&body), ["hat"]);
    let decision: Value = app
        .get_json(&format!(
            "/v1/games/{}/offers/{}",
            sdk.game,
            body["offer_id"].as_str().expect("id")
        ))
        .await;
    assert_eq!(
        decision["trace"][0]["level"], 1,
        "the trace says why L1 passed: {decision}"
    );
    // L2 empty (no template for level_up) -> L3 bundle with its exact items.
    let (_, body, _) = offer(&app, &sdk, &sid, "level_up").await;
    assert_eq!(body["fallback_level"], 3);
    assert_eq!(ids(&body), ["crate"]);
    assert_eq!(body["price_cents"], 799);
    // L3 empty (no bundle for victory) -> L4 store shelf (fallback-eligible only).
    let (_, body, _) = offer(&app, &sdk, &sid, "victory").await;
    assert_eq!(body["fallback_level"], 4);
    assert_eq!(ids(&body), ["hat"]);
    // L4 empty -> L5 silent suppress.
    let r = app
        .client
        .delete(app.url(&format!("/v1/games/{}/items/hat", sdk.game)))
        .bearer_auth(&app.admin)
        .send()
        .await
        .expect("req");
    assert_eq!(r.status(), StatusCode::NO_CONTENT);
    let (status, _, outcome) = offer(&app, &sdk, &sid, "victory").await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    assert_eq!(outcome.as_deref(), Some("suppressed"));
}

#[tokio::test]
async fn empty_features_go_straight_to_the_shelf_best_value_first() {
    let app = spawn_app().await;
    let sdk = game_with(&app, catalogue()).await;
    autonomous(&app, &sdk.game).await;
    let sid = session(&app, &sdk, &player(&sdk.game, false), json!({})).await;
    let (status, body, _) = offer(&app, &sdk, &sid, "session_start").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["fallback_level"], 4);
    // gems_500 ($3.99, worth $4.95) is the best value per dollar of the shelf.
    assert_eq!(ids(&body), ["gems_500"]);
}

#[tokio::test]
async fn kill_switch_comes_before_holdout_which_comes_before_levels() {
    let app = spawn_app().await;
    let sdk = game_with(&app, catalogue()).await;
    let held = session(
        &app,
        &sdk,
        &player(&sdk.game, true),
        json!({"country": "US"}),
    )
    .await;
    let treated = featured(&app, &sdk).await;
    let (status, _, outcome) = offer(&app, &sdk, &held, "currency_low").await;
    assert_eq!(
        (status, outcome.as_deref()),
        (StatusCode::NO_CONTENT, Some("holdout"))
    );
    let (status, _, _) = offer(&app, &sdk, &treated, "currency_low").await;
    assert_eq!(status, StatusCode::OK);
    kill(&app, &sdk.game, 2).await;
    let (status, _, outcome) = offer(&app, &sdk, &held, "currency_low").await;
    assert_eq!(
        (status, outcome.as_deref()),
        (StatusCode::NO_CONTENT, Some("kill_switch"))
    );
}

#[tokio::test]
async fn kill_switch_levels() {
    let app = spawn_app().await;
    let sdk = game_with(&app, catalogue()).await;
    autonomous(&app, &sdk.game).await;
    let sid = featured(&app, &sdk).await;
    let (_, body, _) = offer(&app, &sdk, &sid, "boss_raid").await;
    assert_eq!(body["fallback_level"], 1);
    // Level 1: AI off, L1 and L2 never serve.
    kill(&app, &sdk.game, 1).await;
    for _ in 0..10 {
        let (_, body, _) = offer(&app, &sdk, &sid, "boss_raid").await;
        assert!(
            body["fallback_level"].as_u64().expect("level") >= 3,
            "{body}"
        );
    }
    // Level 2: no offers.
    kill(&app, &sdk.game, 2).await;
    let (status, _, outcome) = offer(&app, &sdk, &sid, "boss_raid").await;
    assert_eq!(
        (status, outcome.as_deref()),
        (StatusCode::NO_CONTENT, Some("kill_switch"))
    );
    let events = json!({"session_id": sid, "events": [{"type": "first_loss"}]});
    assert_eq!(
        app.post("/v1/sdk/events", &sdk.key, events.clone())
            .await
            .status(),
        StatusCode::ACCEPTED
    );
    // Level 3: SDK off: no offers, events and new sessions refused with sdk_disabled.
    kill(&app, &sdk.game, 3).await;
    let (status, _, outcome) = offer(&app, &sdk, &sid, "boss_raid").await;
    assert_eq!(
        (status, outcome.as_deref()),
        (StatusCode::NO_CONTENT, Some("kill_switch"))
    );
    expect_error(
        app.post("/v1/sdk/events", &sdk.key, events).await,
        StatusCode::FORBIDDEN,
        "sdk_disabled",
    )
    .await;
    let r = app
        .post(
            "/v1/sdk/sessions",
            &sdk.key,
            json!({"session_id": Uuid::new_v4(), "player_id": "p"}),
        )
        .await;
    expect_error(r, StatusCode::FORBIDDEN, "sdk_disabled").await;
    let status: Value = app
        .get(&format!("/v1/sdk/status/{}", sdk.game), &sdk.key)
        .await
        .json()
        .await
        .expect("json");
    assert_eq!(status["kill_switch"]["level"], 3);
}

#[tokio::test]
async fn max_price_guardrail_bounds_offer_and_items() {
    let app = spawn_app().await;
    let sdk = game_with(&app, catalogue()).await;
    autonomous(&app, &sdk.game).await;
    let r = app
        .patch(
            &format!("/v1/games/{}/guardrails", sdk.game),
            &app.admin,
            json!({"max_price_cents": 200}),
        )
        .await;
    assert_eq!(r.status(), StatusCode::OK);
    let sid = featured(&app, &sdk).await;
    for event in [
        "boss_raid",
        "currency_low",
        "first_loss",
        "session_start",
        "victory",
    ] {
        let (status, body, _) = offer(&app, &sdk, &sid, event).await;
        if status == StatusCode::OK {
            assert!(
                body["price_cents"].as_i64().expect("cents") <= 200,
                "{body}"
            );
            for item in body["items"].as_array().expect("items") {
                assert!(
                    item["price_cents"].as_i64().expect("cents") <= 200,
                    "{item}"
                );
            }
        }
    }
}

#[tokio::test]
async fn loot_boxes_never_reach_belgium_or_the_netherlands() {
    let app = spawn_app().await;
    let mut lootbox = item("mystery_chest", "consumable", 1.99);
    lootbox["is_loot_box"] = json!(true);
    let sdk = game_with(&app, json!([lootbox])).await;
    for (country, expected) in [
        ("BE", StatusCode::NO_CONTENT),
        ("nl", StatusCode::NO_CONTENT),
        ("US", StatusCode::OK),
    ] {
        let sid = session(
            &app,
            &sdk,
            &player(&sdk.game, false),
            json!({"country": country}),
        )
        .await;
        let (status, _, _) = offer(&app, &sdk, &sid, "first_loss").await;
        assert_eq!(status, expected, "country {country}");
    }
}

#[tokio::test]
async fn shadow_mode_computes_ai_picks_silently() {
    let app = spawn_app().await;
    let sdk = game_with(&app, catalogue()).await;
    let game: Value = app.get_json(&format!("/v1/games/{}", sdk.game)).await;
    assert_eq!(game["mode"], "shadow");
    let sid = featured(&app, &sdk).await;
    for _ in 0..5 {
        let (status, body, _) = offer(&app, &sdk, &sid, "boss_raid").await;
        assert_eq!(status, StatusCode::OK);
        assert!(body["fallback_level"].as_u64().expect("level") >= 3);
    }
    let report: Value = app
        .get_json(&format!("/v1/games/{}/shadow-decisions", sdk.game))
        .await;
    assert_eq!(
        report["level_1"].as_u64().expect("n") + report["level_2"].as_u64().expect("n"),
        5
    );
    assert_eq!(report["recent"].as_array().expect("recent").len(), 5);
}

#[tokio::test]
async fn assisted_mode_queues_approvals_and_serves_approved_definitions() {
    let app = spawn_app().await;
    // L1 has nothing here, so the L2 template is the only AI candidate: deterministic.
    let sdk = game_with(&app, json!([item("hat", "cosmetic", 2.99)])).await;
    app.send(
        reqwest::Method::PUT,
        &format!("/v1/games/{}/offer-templates", sdk.game),
        &app.admin,
        json!([{"event_type": "boss_raid", "categories": ["cosmetic"]}]),
    )
    .await;
    assert_eq!(
        set_mode(&app, &sdk.game, "assisted").await.status(),
        StatusCode::OK
    );
    let sid = featured(&app, &sdk).await;
    // Not approved yet: falls through to the shelf.
    let (_, body, _) = offer(&app, &sdk, &sid, "boss_raid").await;
    assert_eq!(body["fallback_level"], 4);
    // The candidate is queued once, however often it comes up.
    let mut pending = Vec::new();
    for _ in 0..50 {
        offer(&app, &sdk, &sid, "boss_raid").await;
        let list: Value = app
            .get_json(&format!("/v1/games/{}/approvals?status=pending", sdk.game))
            .await;
        pending = list["approvals"].as_array().expect("list").clone();
        if !pending.is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(pending.len(), 1);
    offer(&app, &sdk, &sid, "boss_raid").await;
    let list: Value = app
        .get_json(&format!("/v1/games/{}/approvals", sdk.game))
        .await;
    assert_eq!(list["approvals"].as_array().expect("list").len(), 1);
    let approval_id = pending[0]["approval_id"].as_str().expect("id").to_owned();
    assert_eq!(pending[0]["offer"]["fallback_level"], 2);
    // A viewer cannot decide; another studio cannot see it.
    let viewer = app.token("studio-a", offer_engine::auth::Role::Viewer);
    let r = app
        .post(
            &format!("/v1/approvals/{approval_id}/approve"),
            &viewer,
            json!({}),
        )
        .await;
    expect_error(r, StatusCode::FORBIDDEN, "forbidden").await;
    let other = app.token("studio-b", offer_engine::auth::Role::Admin);
    expect_error(
        app.get(&format!("/v1/approvals/{approval_id}"), &other)
            .await,
        StatusCode::NOT_FOUND,
        "not_found",
    )
    .await;
    // Approve: it serves at once; a second decision is a conflict.
    let r = app
        .post(
            &format!("/v1/approvals/{approval_id}/approve"),
            &app.admin,
            json!({}),
        )
        .await;
    assert_eq!(r.status(), StatusCode::OK);
    let (_, body, _) = offer(&app, &sdk, &sid, "boss_raid").await;
    assert_eq!(body["fallback_level"], 2);
    let r = app
        .post(
            &format!("/v1/approvals/{approval_id}/reject"),
            &app.admin,
            json!({"reason": "late"}),
        )
        .await;
    expect_error(r, StatusCode::CONFLICT, "conflict").await;
    let r = app
        .post(
            &format!("/v1/approvals/{approval_id}/approve"),
            &app.admin,
            json!({}),
        )
        .await;
    expect_error(r, StatusCode::CONFLICT, "conflict").await;
}

#[tokio::test]
async fn mode_changes_follow_the_contract() {
    let app = spawn_app().await;
    let sdk = game_with(&app, catalogue()).await;
    expect_error(
        set_mode(&app, &sdk.game, "autonomous").await,
        StatusCode::CONFLICT,
        "conflict",
    )
    .await;
    assert_eq!(
        set_mode(&app, &sdk.game, "assisted").await.status(),
        StatusCode::OK
    );
    expect_error(
        set_mode(&app, &sdk.game, "autonomous").await,
        StatusCode::UNPROCESSABLE_ENTITY,
        "validation_failed",
    )
    .await;
    let dev = app.token("studio-a", offer_engine::auth::Role::Developer);
    let r = app
        .post(
            &format!("/v1/games/{}/mode", sdk.game),
            &dev,
            json!({"mode": "shadow"}),
        )
        .await;
    expect_error(r, StatusCode::FORBIDDEN, "forbidden").await;
    assert_eq!(
        set_mode(&app, &sdk.game, "shadow").await.status(),
        StatusCode::OK
    );
}

#[tokio::test]
async fn hyper_inflation_suppresses_ai_offers_only() {
    let app = spawn_app().await;
    let sdk = game_with(&app, catalogue()).await;
    autonomous(&app, &sdk.game).await;
    let sid = featured(&app, &sdk).await;
    let (_, body, _) = offer(&app, &sdk, &sid, "boss_raid").await;
    assert_eq!(body["fallback_level"], 1);
    // The economy figures feed the quadrant; here it is set on the game's actor directly.
    let game_id: Uuid = sdk.game.parse().expect("uuid");
    let handle = app.running.state.actors.game(&game_id).expect("loaded");
    handle
        .change(offer_actors::GameChange::Quadrant(
            offer_domain::economy::Quadrant::HyperInfl,
        ))
        .await
        .expect("actor");
    for _ in 0..10 {
        let (status, body, _) = offer(&app, &sdk, &sid, "boss_raid").await;
        assert_eq!(status, StatusCode::OK, "L3/L4 still serve");
        assert!(
            body["fallback_level"].as_u64().expect("level") >= 3,
            "{body}"
        );
    }
}

#[tokio::test]
async fn experiments_change_the_price_never_the_items() {
    let app = spawn_app().await;
    let sdk = game_with(&app, catalogue()).await;
    let sid = session(&app, &sdk, &player(&sdk.game, false), json!({})).await;
    let (_, before, _) = offer(&app, &sdk, &sid, "session_start").await;
    let r = app
        .post(
            &format!("/v1/games/{}/experiments", sdk.game),
            &app.admin,
            json!({"variants": [{"name": "cheap", "weight": 1, "price_usd": 1.23}]}),
        )
        .await;
    assert_eq!(r.status(), StatusCode::CREATED);
    let exp: Value = r.json().await.expect("json");
    let (_, after, _) = offer(&app, &sdk, &sid, "session_start").await;
    assert_eq!(ids(&after), ids(&before));
    assert_eq!(after["price_cents"], 123);
    assert_eq!(after["experiment"]["experiment_id"], exp["experiment_id"]);
    assert_eq!(after["experiment"]["variant"], "cheap");
    let r = app.post(&format!("/v1/games/{}/experiments", sdk.game), &app.admin,
        json!({"variants": [{"name": "x", "weight": 1, "price_usd": 1.0, "price_multiplier": 2.0}]})).await;
    expect_error(r, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
}

#[tokio::test]
async fn deleted_items_are_never_served() {
    let app = spawn_app().await;
    let sdk = game_with(
        &app,
        json!([
            item("potion", "consumable", 0.99),
            item("elixir", "consumable", 0.99)
        ]),
    )
    .await;
    app.client
        .delete(app.url(&format!("/v1/games/{}/items/potion", sdk.game)))
        .bearer_auth(&app.admin)
        .send()
        .await
        .expect("req");
    let sid = featured(&app, &sdk).await;
    for event in ["first_loss", "session_start", "currency_low"] {
        let (_, body, _) = offer(&app, &sdk, &sid, event).await;
        assert!(!ids(&body).contains(&"potion".to_owned()));
    }
    // A bundle cannot name a deleted item.
    let r = app
        .post(
            &format!("/v1/games/{}/offer-bundles", sdk.game),
            &app.admin,
            json!({"name": "B", "item_ids": ["potion"], "price_usd": 1.0}),
        )
        .await;
    expect_error(r, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
}

#[tokio::test]
async fn frequency_caps_hold() {
    let app = spawn_app().await;
    let sdk = game_with(&app, catalogue()).await;
    app.patch(
        &format!("/v1/games/{}/guardrails", sdk.game),
        &app.admin,
        json!({"max_offers_per_session": 2}),
    )
    .await;
    let sid = featured(&app, &sdk).await;
    let mut served = 0;
    let mut capped = 0;
    for _ in 0..5 {
        match offer(&app, &sdk, &sid, "session_start").await {
            (StatusCode::OK, _, _) => served += 1,
            (_, _, Some(o)) if o == "frequency_capped" => capped += 1,
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!((served, capped), (2, 3));
}

#[tokio::test]
async fn sdk_keys_are_bound_to_their_game_and_environment() {
    let app = spawn_app().await;
    let a = game_with(&app, catalogue()).await;
    let b = game_with(&app, catalogue()).await;
    let r = app.get(&format!("/v1/sdk/status/{}", b.game), &a.key).await;
    expect_error(r, StatusCode::NOT_FOUND, "not_found").await;
    let sid_b = featured(&app, &b).await;
    let (status, _, _) = offer(&app, &a, &sid_b, "session_start").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    // A sandbox key never sees a production session.
    let sandbox = Sdk {
        game: a.game.clone(),
        key: app.sdk_key(&a.game, "sandbox").await,
    };
    let sid_a = featured(&app, &a).await;
    let (status, _, _) = offer(&app, &sandbox, &sid_a, "session_start").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    // A dashboard token is the wrong credential on SDK paths.
    let r = app
        .get(&format!("/v1/sdk/status/{}", a.game), &app.admin)
        .await;
    expect_error(r, StatusCode::FORBIDDEN, "wrong_credential").await;
    // A session id cannot be taken over by another player.
    let r = app
        .post(
            "/v1/sdk/sessions",
            &a.key,
            json!({"session_id": sid_a, "player_id": "intruder"}),
        )
        .await;
    expect_error(r, StatusCode::CONFLICT, "conflict").await;
}

#[tokio::test]
async fn money_events_over_rest_are_exact_and_idempotent() {
    let app = spawn_app().await;
    let sdk = game_with(&app, catalogue()).await;
    let sid = featured(&app, &sdk).await;
    let r = app.post("/v1/sdk/events", &sdk.key, json!({"session_id": sid, "events": [
        {"type": "currency_earned", "currency_id": "gems", "amount": 100, "source": "quest", "tx_id": "t1"},
        {"type": "currency_earned", "currency_id": "gems", "amount": 100, "source": "quest", "tx_id": "t1"},
        {"type": "currency_spent", "currency_id": "gems", "amount": 60, "sink": "shop", "tx_id": "t2"},
        {"type": "currency_spent", "currency_id": "gems", "amount": 60, "sink": "shop", "tx_id": "t3"}]})).await;
    assert_eq!(r.status(), StatusCode::ACCEPTED);
    let body: Value = r.json().await.expect("json");
    assert_eq!(body["accepted"], 3);
    assert_eq!(body["rejected"][0]["index"], 3);
    assert_eq!(body["rejected"][0]["code"], "insufficient_funds");
    // One bad event rejects the batch before anything is applied.
    let r = app
        .post(
            "/v1/sdk/events",
            &sdk.key,
            json!({"session_id": sid, "events": [
        {"type": "currency_earned", "currency_id": "gems", "amount": 5, "tx_id": "t4"},
        {"type": "currency_earned", "currency_id": "diamonds", "amount": 5, "tx_id": "t5"}]}),
        )
        .await;
    expect_error(r, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
    // A client clock far from the server's is refused: history goes through the import.
    let r = app.post("/v1/sdk/events", &sdk.key, json!({"session_id": sid, "events": [
        {"type": "currency_earned", "currency_id": "gems", "amount": 5, "tx_id": "t6", "ts": "2020-01-01T00:00:00Z"}]})).await;
    expect_error(r, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
    let game_id: Uuid = sdk.game.parse().expect("uuid");
    let player = player(&sdk.game, false);
    let balance = app
        .running
        .state
        .store
        .balance(
            game_id,
            offer_engine::store::Environment::Production,
            &player,
            "gems",
        )
        .await
        .expect("balance");
    assert_eq!(balance, 40);
}
