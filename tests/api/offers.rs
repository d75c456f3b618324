//! The offer pipeline through the real SDK surface: every level and fall-through, the
//! contract's step order, holdout, guardrails, kill switch, modes, approvals, experiments,
//! SDK key scoping and money events over REST.

use reqwest::StatusCode;
use serde_json::{Value, json};
use uuid::Uuid;

use super::fixtures::{Sdk, bundle, earned, item, mixed_catalogue, player, spent, template, with};
use super::helpers::{Role, TestApp, default_backend, shared_backend, spawn_app, spawn_tuned};

/// A featured, treated player's session.
pub async fn featured(app: &TestApp, sdk: &Sdk) -> String {
    app.open_session(
        sdk,
        &player(&sdk.game, false),
        json!({"country": "US", "platform": "android"}),
    )
    .await
}

/// Asks for the next offer on `event`: the status, the offer (`Null` unless 200) and the
/// `offer-outcome` header.
pub async fn offer(
    app: &TestApp,
    sdk: &Sdk,
    sid: &str,
    event: &str,
) -> (StatusCode, Value, Option<String>) {
    let r = app
        .post(
            "/v1/sdk/offers/next",
            json!({"session_id": sid, "trigger_context": {"event_type": event}}),
        )
        .token(&sdk.key)
        .send()
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

/// The dashboard's record of the decision behind `offer`.
pub async fn decision(app: &TestApp, sdk: &Sdk, offer: &Value) -> Value {
    let offer_id = offer["offer_id"].as_str().expect("offer id");
    app.get_json(format!("/v1/games/{}/offers/{offer_id}", sdk.game))
        .await
}

/// Shadow -> Assisted -> Autonomous with a price ceiling.
async fn autonomous(app: &TestApp, game: &str) {
    autonomous_capped(app, game, 100_000).await;
}

/// Shadow -> Assisted -> Autonomous with a price ceiling of `cap` cents.
pub async fn autonomous_capped(app: &TestApp, game: &str, cap: i64) {
    app.set_guardrails(game, json!({"max_price_cents": cap}))
        .await;
    for mode in ["assisted", "autonomous"] {
        app.set_mode(game, mode).expect(StatusCode::OK).await;
    }
}

/// An autonomous game with the mixed catalogue and a featured session, checked to be served
/// an L1 offer on `boss_raid` before the test changes anything.
async fn serving_l1(app: &TestApp) -> (Sdk, String) {
    let sdk = app.game_with(mixed_catalogue()).await;
    autonomous(app, &sdk.game).await;
    let sid = featured(app, &sdk).await;
    let (_, body, _) = offer(app, &sdk, &sid, "boss_raid").await;
    assert_eq!(body["fallback_level"], 1);
    (sdk, sid)
}

/// A server and a game with the mixed catalogue.
async fn mixed_game() -> (TestApp, Sdk) {
    let app = spawn_app().await;
    let sdk = app.game_with(mixed_catalogue()).await;
    (app, sdk)
}

/// The item ids of an offer, in order.
fn ids(offer: &Value) -> Vec<String> {
    offer["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|i| i["item_id"].as_str().expect("id").to_owned())
        .collect()
}

#[tokio::test]
async fn l1_serves_in_autonomous_mode_with_full_item_records() {
    let (app, sdk) = mixed_game().await;
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
    let record = decision(&app, &sdk, &body).await;
    assert_eq!(record["fallback_level"], 1);
    assert_eq!(record["outcome"], "offer");
}

#[tokio::test]
async fn each_level_falls_through_to_the_next() {
    let app = spawn_app().await;
    // Only cosmetics and bundles: L1 (currency, consumable, equipment) has nothing.
    let crate_item = json!({"item_id": "crate", "item_name": "Crate", "category": "bundle",
                            "price_usd": 9.99, "fallback_eligible": false});
    let sdk = app
        .game_with(json!([item("hat", "cosmetic", 2.99), crate_item]))
        .await;
    autonomous(&app, &sdk.game).await;
    app.set_templates(&sdk.game, json!([template("boss_raid", &["cosmetic"])]))
        .await;
    let raid_pack = bundle("Raid pack", &["crate"], 7.99);
    app.add_bundle(
        &sdk.game,
        with(raid_pack, json!({"triggers": ["level_up"]})),
    )
    .expect(StatusCode::CREATED)
    .await;
    let sid = featured(&app, &sdk).await;
    // L1 empty -> L2 (template for boss_raid).
    let (_, body, _) = offer(&app, &sdk, &sid, "boss_raid").await;
    assert_eq!(body["fallback_level"], 2);
    assert_eq!(ids(&body), ["hat"]);
    let record = decision(&app, &sdk, &body).await;
    assert_eq!(
        record["trace"][0]["level"], 1,
        "the trace says why L1 passed: {record}"
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
    app.delete_item(&sdk.game, "hat")
        .expect(StatusCode::NO_CONTENT)
        .await;
    let (status, _, outcome) = offer(&app, &sdk, &sid, "victory").await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    assert_eq!(outcome.as_deref(), Some("suppressed"));
}

#[tokio::test]
async fn empty_features_go_straight_to_the_shelf_best_value_first() {
    let (app, sdk) = mixed_game().await;
    autonomous(&app, &sdk.game).await;
    let sid = app
        .open_session(&sdk, &player(&sdk.game, false), json!({}))
        .await;
    let (status, body, _) = offer(&app, &sdk, &sid, "session_start").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["fallback_level"], 4);
    // gems_500 ($3.99, worth $4.95) is the best value per dollar of the shelf.
    assert_eq!(ids(&body), ["gems_500"]);
}

#[tokio::test]
async fn kill_switch_comes_before_holdout_which_comes_before_levels() {
    let (app, sdk) = mixed_game().await;
    let held = app
        .open_session(&sdk, &player(&sdk.game, true), json!({"country": "US"}))
        .await;
    let treated = featured(&app, &sdk).await;
    let (status, _, outcome) = offer(&app, &sdk, &held, "currency_low").await;
    assert_eq!(
        (status, outcome.as_deref()),
        (StatusCode::NO_CONTENT, Some("holdout"))
    );
    let (status, _, _) = offer(&app, &sdk, &treated, "currency_low").await;
    assert_eq!(status, StatusCode::OK);
    app.set_kill_switch(&sdk.game, 2).await;
    let (status, _, outcome) = offer(&app, &sdk, &held, "currency_low").await;
    assert_eq!(
        (status, outcome.as_deref()),
        (StatusCode::NO_CONTENT, Some("kill_switch"))
    );
}

#[tokio::test]
async fn kill_switch_levels() {
    let app = spawn_app().await;
    let (sdk, sid) = serving_l1(&app).await;
    // Level 1: AI off, L1 and L2 never serve.
    app.set_kill_switch(&sdk.game, 1).await;
    for _ in 0..10 {
        let (_, body, _) = offer(&app, &sdk, &sid, "boss_raid").await;
        assert!(
            body["fallback_level"].as_u64().expect("level") >= 3,
            "{body}"
        );
    }
    // Level 2: no offers.
    app.set_kill_switch(&sdk.game, 2).await;
    let (status, _, outcome) = offer(&app, &sdk, &sid, "boss_raid").await;
    assert_eq!(
        (status, outcome.as_deref()),
        (StatusCode::NO_CONTENT, Some("kill_switch"))
    );
    let events = json!({"session_id": sid, "events": [{"type": "first_loss"}]});
    app.post("/v1/sdk/events", events.clone())
        .token(&sdk.key)
        .expect(StatusCode::ACCEPTED)
        .await;
    // Level 3: SDK off: no offers, events and new sessions refused with sdk_disabled.
    app.set_kill_switch(&sdk.game, 3).await;
    let (status, _, outcome) = offer(&app, &sdk, &sid, "boss_raid").await;
    assert_eq!(
        (status, outcome.as_deref()),
        (StatusCode::NO_CONTENT, Some("kill_switch"))
    );
    for refused in [
        app.post("/v1/sdk/events", events),
        app.post(
            "/v1/sdk/sessions",
            json!({"session_id": Uuid::new_v4(), "player_id": "p"}),
        ),
    ] {
        refused
            .token(&sdk.key)
            .expect_error(StatusCode::FORBIDDEN, "sdk_disabled")
            .await;
    }
    let status = app
        .get(format!("/v1/sdk/status/{}", sdk.game))
        .token(&sdk.key)
        .expect(StatusCode::OK)
        .await;
    assert_eq!(status["kill_switch"]["level"], 3);
}

#[tokio::test]
async fn max_price_guardrail_bounds_offer_and_items() {
    let (app, sdk) = mixed_game().await;
    autonomous(&app, &sdk.game).await;
    app.set_guardrails(&sdk.game, json!({"max_price_cents": 200}))
        .await;
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
    let lootbox = with(
        item("mystery_chest", "consumable", 1.99),
        json!({"is_loot_box": true}),
    );
    let sdk = app.game_with(json!([lootbox])).await;
    for (country, expected) in [
        ("BE", StatusCode::NO_CONTENT),
        ("nl", StatusCode::NO_CONTENT),
        ("US", StatusCode::OK),
    ] {
        let sid = app
            .open_session(&sdk, &player(&sdk.game, false), json!({"country": country}))
            .await;
        let (status, _, _) = offer(&app, &sdk, &sid, "first_loss").await;
        assert_eq!(status, expected, "country {country}");
    }
}

#[tokio::test]
async fn shadow_mode_computes_ai_picks_silently() {
    // Every decision's silent pick recorded (the default samples one in ten).
    let app = spawn_tuned(default_backend(), |s| {
        s.offers.shadow_every = std::num::NonZeroU32::MIN;
    })
    .await;
    let sdk = app.game_with(mixed_catalogue()).await;
    let game = app.get_json(format!("/v1/games/{}", sdk.game)).await;
    assert_eq!(game["mode"], "shadow");
    let sid = featured(&app, &sdk).await;
    for _ in 0..5 {
        let (status, body, _) = offer(&app, &sdk, &sid, "boss_raid").await;
        assert_eq!(status, StatusCode::OK);
        assert!(body["fallback_level"].as_u64().expect("level") >= 3);
    }
    let report = app
        .get_json(format!("/v1/games/{}/shadow-decisions", sdk.game))
        .await;
    assert_eq!(
        report["level_1"].as_u64().expect("n") + report["level_2"].as_u64().expect("n"),
        5
    );
    assert_eq!(report["recent"].as_array().expect("recent").len(), 5);
}

#[tokio::test]
async fn shadow_mode_skips_the_ai_levels_of_unsampled_decisions() {
    // One decision in u32::MAX sampled: none of these few.
    let app = spawn_tuned(default_backend(), |s| {
        s.offers.shadow_every = std::num::NonZeroU32::MAX;
    })
    .await;
    let sdk = app.game_with(mixed_catalogue()).await;
    let sid = featured(&app, &sdk).await;
    for _ in 0..5 {
        let (status, body, _) = offer(&app, &sdk, &sid, "boss_raid").await;
        assert_eq!(status, StatusCode::OK);
        assert!(body["fallback_level"].as_u64().expect("level") >= 3);
        let id = body["offer_id"].as_str().expect("offer id");
        let record = app
            .get_json(format!("/v1/games/{}/offers/{id}", sdk.game))
            .await;
        assert_eq!(record["shadow"], Value::Null, "{record}");
        assert_eq!(record["trace"][0]["note"], "shadow_unsampled", "{record}");
        assert_eq!(record["trace"][1]["note"], "shadow_unsampled", "{record}");
    }
    let report = app
        .get_json(format!("/v1/games/{}/shadow-decisions", sdk.game))
        .await;
    assert_eq!(report["level_1"], 0);
    assert_eq!(report["level_2"], 0);
    assert_eq!(report["recent"].as_array().expect("recent").len(), 0);
}

/// An Assisted game selling one hat, whose only AI candidate is the L2 template of
/// `boss_raid` (L1 has nothing here: deterministic), and a featured player's session.
async fn assisted_hat_game(app: &TestApp) -> (Sdk, String) {
    let sdk = app.game_with(json!([item("hat", "cosmetic", 2.99)])).await;
    app.set_templates(&sdk.game, json!([template("boss_raid", &["cosmetic"])]))
        .await;
    app.set_mode(&sdk.game, "assisted")
        .expect(StatusCode::OK)
        .await;
    let sid = featured(app, &sdk).await;
    (sdk, sid)
}

#[tokio::test]
async fn assisted_mode_queues_approvals_and_serves_approved_definitions() {
    let app = spawn_app().await;
    let (sdk, sid) = assisted_hat_game(&app).await;
    // Not approved yet: falls through to the shelf.
    let (_, body, _) = offer(&app, &sdk, &sid, "boss_raid").await;
    assert_eq!(body["fallback_level"], 4);
    // The candidate is queued once, however often it comes up.
    let pending = queued_approvals(&app, &sdk, &sid, "boss_raid").await;
    assert_eq!(pending.len(), 1);
    offer(&app, &sdk, &sid, "boss_raid").await;
    let list = app
        .get_json(format!("/v1/games/{}/approvals", sdk.game))
        .await;
    assert_eq!(list["approvals"].as_array().expect("list").len(), 1);
    let approval_id = pending[0]["approval_id"].as_str().expect("id").to_owned();
    assert_eq!(pending[0]["offer"]["fallback_level"], 2);
    // A viewer cannot decide; another studio cannot see it.
    let approval = format!("/v1/approvals/{approval_id}");
    let approve = || app.post(format!("{approval}/approve"), json!({}));
    let viewer = app.token("studio-a", Role::Viewer);
    approve()
        .token(&viewer)
        .expect_error(StatusCode::FORBIDDEN, "forbidden")
        .await;
    let other = app.token("studio-b", Role::Admin);
    app.get(&approval)
        .token(&other)
        .expect_error(StatusCode::NOT_FOUND, "not_found")
        .await;
    // Approve: it serves at once; a second decision is a conflict.
    approve().expect(StatusCode::OK).await;
    let (_, body, _) = offer(&app, &sdk, &sid, "boss_raid").await;
    assert_eq!(body["fallback_level"], 2);
    for again in [
        app.post(format!("{approval}/reject"), json!({"reason": "late"})),
        approve(),
    ] {
        again.expect_error(StatusCode::CONFLICT, "conflict").await;
    }
}

/// Asks for offers on `event` until the game lists a pending approval; the pending list.
pub async fn queued_approvals(app: &TestApp, sdk: &Sdk, sid: &str, event: &str) -> Vec<Value> {
    for _ in 0..50 {
        offer(app, sdk, sid, event).await;
        let list = app
            .get_json(format!("/v1/games/{}/approvals?status=pending", sdk.game))
            .await;
        let pending = list["approvals"].as_array().expect("list").clone();
        if !pending.is_empty() {
            return pending;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    panic!("no approval was queued");
}

#[tokio::test]
async fn a_pending_approval_expires_and_can_no_longer_be_decided() {
    let app = spawn_tuned(default_backend(), |s| s.offers.approval_expiry_s = 1).await;
    let (sdk, sid) = assisted_hat_game(&app).await;
    let pending = queued_approvals(&app, &sdk, &sid, "boss_raid").await;
    let approval = format!(
        "/v1/approvals/{}",
        pending[0]["approval_id"].as_str().expect("id")
    );
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    let record = app.get_json(&approval).await;
    assert_eq!(record["status"], "expired");
    assert!(record["decided_at"].is_string(), "{record}");
    app.post(format!("{approval}/approve"), json!({}))
        .expect_error(StatusCode::CONFLICT, "conflict")
        .await;
    let list = |status: &'static str| {
        app.get_json(format!("/v1/games/{}/approvals?status={status}", sdk.game))
    };
    assert_eq!(
        list("expired").await["approvals"]
            .as_array()
            .expect("list")
            .len(),
        1
    );
    assert!(
        list("pending").await["approvals"]
            .as_array()
            .expect("list")
            .is_empty()
    );
    // The definition stays unserved: the shelf answers.
    let (_, body, _) = offer(&app, &sdk, &sid, "boss_raid").await;
    assert_eq!(body["fallback_level"], 4);
}

#[tokio::test]
async fn mode_changes_follow_the_promotion_rules() {
    let (app, sdk) = mixed_game().await;
    app.set_mode(&sdk.game, "autonomous")
        .expect_error(StatusCode::CONFLICT, "conflict")
        .await;
    app.set_mode(&sdk.game, "assisted")
        .expect(StatusCode::OK)
        .await;
    app.set_mode(&sdk.game, "autonomous")
        .expect_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_failed")
        .await;
    let dev = app.token("studio-a", Role::Developer);
    app.set_mode(&sdk.game, "shadow")
        .token(&dev)
        .expect_error(StatusCode::FORBIDDEN, "forbidden")
        .await;
    app.set_mode(&sdk.game, "shadow")
        .expect(StatusCode::OK)
        .await;
}

/// Polls the SDK status (and the game record) until the game's quadrant is `quadrant`, for
/// at most about ten seconds.
async fn wait_for_quadrant(app: &TestApp, sdk: &Sdk, quadrant: &str) {
    for _ in 0..200 {
        let status = app
            .get(format!("/v1/sdk/status/{}", sdk.game))
            .token(&sdk.key)
            .expect(StatusCode::OK)
            .await;
        if status["quadrant"] == quadrant {
            let record = app.get_json(format!("/v1/games/{}", sdk.game)).await;
            assert_eq!(record["quadrant"], quadrant, "{record}");
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("the quadrant never became {quadrant}");
}

#[tokio::test]
async fn hyper_inflation_from_the_economy_suppresses_ai_offers_until_it_is_healthy() {
    let app = spawn_tuned(default_backend(), |s| {
        s.economy.quadrant_interval_ms = 100;
    })
    .await;
    let (sdk, sid) = serving_l1(&app).await;
    wait_for_quadrant(&app, &sdk, "HEALTHY").await;
    // Currency earned and none spent in the production window: hyper-inflation.
    app.send_events(&sdk, "economy_1", json!([earned("gold", 1000, "e1")]))
        .await;
    wait_for_quadrant(&app, &sdk, "HYPER_INFL").await;
    for _ in 0..3 {
        let (status, body, _) = offer(&app, &sdk, &sid, "boss_raid").await;
        assert_eq!(status, StatusCode::OK, "L3/L4 still serve");
        assert!(
            body["fallback_level"].as_u64().expect("level") >= 3,
            "{body}"
        );
    }
    // Spending brings the window's ratio to 1000 / 600, inside the RPG range 0.8 to 2.0.
    app.send_events(&sdk, "economy_1", json!([spent("gold", 600, "s1")]))
        .await;
    wait_for_quadrant(&app, &sdk, "HEALTHY").await;
    let (_, body, _) = offer(&app, &sdk, &sid, "boss_raid").await;
    assert_eq!(body["fallback_level"], 1, "{body}");
}

#[tokio::test]
async fn every_node_follows_the_quadrant_of_the_shared_economy() {
    let a = spawn_tuned(shared_backend(), |s| {
        s.economy.quadrant_interval_ms = 100;
    })
    .await;
    let b = a.spawn_peer().await;
    let sdk = a.game_with(json!([])).await;
    wait_for_quadrant(&b, &sdk, "HEALTHY").await;
    // Events taken by A move the economy B serves the game in.
    a.send_events(&sdk, "economy_1", json!([earned("gold", 1000, "e1")]))
        .await;
    wait_for_quadrant(&b, &sdk, "HYPER_INFL").await;
    a.send_events(&sdk, "economy_1", json!([spent("gold", 600, "s1")]))
        .await;
    wait_for_quadrant(&b, &sdk, "HEALTHY").await;
}

/// Creates an experiment with one variant priced $1.23 at `experiments`; returns it.
async fn cheap_experiment(app: &TestApp, experiments: &str) -> Value {
    app.post(
        experiments,
        json!({"variants": [{"name": "cheap", "weight": 1, "price_usd": 1.23}]}),
    )
    .expect(StatusCode::CREATED)
    .await
}

#[tokio::test]
async fn experiments_change_the_price_never_the_items() {
    let (app, sdk) = mixed_game().await;
    let sid = app
        .open_session(&sdk, &player(&sdk.game, false), json!({}))
        .await;
    let (_, before, _) = offer(&app, &sdk, &sid, "session_start").await;
    let experiments = format!("/v1/games/{}/experiments", sdk.game);
    let exp = cheap_experiment(&app, &experiments).await;
    let (_, after, _) = offer(&app, &sdk, &sid, "session_start").await;
    assert_eq!(ids(&after), ids(&before));
    assert_eq!(after["price_cents"], 123);
    assert_eq!(after["experiment"]["experiment_id"], exp["experiment_id"]);
    assert_eq!(after["experiment"]["variant"], "cheap");
    app.post(&experiments,
        json!({"variants": [{"name": "x", "weight": 1, "price_usd": 1.0, "price_multiplier": 2.0}]}))
    .expect_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_failed")
    .await;
}

#[tokio::test]
async fn an_experiment_is_deleted_by_a_developer_of_its_studio_only() {
    let (app, sdk) = mixed_game().await;
    let experiments = format!("/v1/games/{}/experiments", sdk.game);
    let exp = cheap_experiment(&app, &experiments).await;
    let one = format!(
        "{experiments}/{}",
        exp["experiment_id"].as_str().expect("id")
    );
    app.delete(&one)
        .token(&app.token("studio-a", Role::Viewer))
        .expect_error(StatusCode::FORBIDDEN, "forbidden")
        .await;
    app.delete(&one)
        .token(&app.token("studio-b", Role::Admin))
        .expect_error(StatusCode::NOT_FOUND, "not_found")
        .await;
    app.delete(format!("{experiments}/{}", Uuid::new_v4()))
        .expect_error(StatusCode::NOT_FOUND, "not_found")
        .await;
    let listed = app.get_json(&experiments).await;
    assert_eq!(listed["experiments"].as_array().map(Vec::len), Some(1));
    app.delete(&one)
        .token(&app.token("studio-a", Role::Developer))
        .expect(StatusCode::NO_CONTENT)
        .await;
    let listed = app.get_json(&experiments).await;
    assert_eq!(listed["experiments"], json!([]));
    app.delete(&one)
        .expect_error(StatusCode::NOT_FOUND, "not_found")
        .await;
}

#[tokio::test]
async fn deleted_items_are_never_served() {
    let app = spawn_app().await;
    let sdk = app
        .game_with(json!([
            item("potion", "consumable", 0.99),
            item("elixir", "consumable", 0.99)
        ]))
        .await;
    app.delete_item(&sdk.game, "potion")
        .expect(StatusCode::NO_CONTENT)
        .await;
    let sid = featured(&app, &sdk).await;
    for event in ["first_loss", "session_start", "currency_low"] {
        let (_, body, _) = offer(&app, &sdk, &sid, event).await;
        assert!(!ids(&body).contains(&"potion".to_owned()));
    }
    // A bundle cannot name a deleted item.
    app.add_bundle(&sdk.game, bundle("B", &["potion"], 1.0))
        .expect_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_failed")
        .await;
}

#[tokio::test]
async fn frequency_caps_hold() {
    let (app, sdk) = mixed_game().await;
    app.set_guardrails(&sdk.game, json!({"max_offers_per_session": 2}))
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
    let a = app.game_with(mixed_catalogue()).await;
    let b = app.game_with(mixed_catalogue()).await;
    app.get(format!("/v1/sdk/status/{}", b.game))
        .token(&a.key)
        .expect_error(StatusCode::NOT_FOUND, "not_found")
        .await;
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
    app.get(format!("/v1/sdk/status/{}", a.game))
        .expect_error(StatusCode::FORBIDDEN, "wrong_credential")
        .await;
    // A session id cannot be taken over by another player.
    app.post(
        "/v1/sdk/sessions",
        json!({"session_id": sid_a, "player_id": "intruder"}),
    )
    .token(&a.key)
    .expect_error(StatusCode::CONFLICT, "conflict")
    .await;
}

#[tokio::test]
async fn money_events_over_rest_are_exact_and_idempotent() {
    let (app, sdk) = mixed_game().await;
    let sid = featured(&app, &sdk).await;
    let events = |events: Value| {
        app.post(
            "/v1/sdk/events",
            json!({"session_id": sid, "events": events}),
        )
        .token(&sdk.key)
    };
    let body = events(json!([
        earned("gems", 100, "t1"),
        earned("gems", 100, "t1"),
        spent("gems", 60, "t2"),
        spent("gems", 60, "t3")
    ]))
    .expect(StatusCode::ACCEPTED)
    .await;
    assert_eq!(body["accepted"], 3);
    assert_eq!(body["rejected"][0]["index"], 3);
    assert_eq!(body["rejected"][0]["code"], "insufficient_funds");
    // One bad event rejects the batch before anything is applied.
    let long_ago = with(
        earned("gems", 5, "t6"),
        json!({"ts": "2020-01-01T00:00:00Z"}),
    );
    for refused in [
        json!([earned("gems", 5, "t4"), earned("diamonds", 5, "t5")]),
        // A client clock far from the server's is refused: history goes through the import.
        json!([long_ago]),
    ] {
        events(refused)
            .expect_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_failed")
            .await;
    }
    let game_id: Uuid = sdk.game.parse().expect("uuid");
    let player = player(&sdk.game, false);
    let balance = app
        .running
        .state
        .services
        .store
        .balance(
            game_id,
            offer_domain::environment::Environment::Production,
            &player,
            "gems",
        )
        .await
        .expect("balance");
    assert_eq!(balance, 40);
}

/// The offers shown that a game's L1 learner counted.
async fn model_shown(app: &TestApp, game: &str) -> u64 {
    let report = app.get_json(format!("/v1/games/{game}/model")).await;
    report["offers"].as_u64().expect("offers")
}

/// The offers a game's learner remembers, per arm, rounded to a thousandth.
async fn remembered(app: &TestApp, game: &str) -> Vec<(Value, i64)> {
    let report = app.get_json(format!("/v1/games/{game}/model")).await;
    report["arms"]
        .as_array()
        .expect("arms")
        .iter()
        .map(|a| {
            let w = a["effective_observations"].as_f64().expect("observations");
            (a["arm"].clone(), (w * 1000.0).round() as i64)
        })
        .collect()
}

/// Polls `app` until its learner of `game` counts `shown` offers shown; the last count.
async fn model_reaches(app: &TestApp, game: &str, shown: u64) -> u64 {
    let mut last = 0;
    for _ in 0..200 {
        last = model_shown(app, game).await;
        if last == shown {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    last
}

#[tokio::test]
async fn the_l1_model_learns_from_every_node_and_a_new_node_starts_with_it() {
    let a = spawn_tuned(shared_backend(), |s| s.offers.model_sync_ms = 100).await;
    let b = a.spawn_peer().await;
    let (sdk, sid) = serving_l1(&a).await;
    // B serves the game too (its model starts from the store's totals: none yet).
    assert_eq!(model_shown(&b, &sdk.game).await, 0);
    let mut shown = 0;
    for _ in 0..40 {
        let (_, body, _) = offer(&a, &sdk, &sid, "boss_raid").await;
        if body["fallback_level"] != 1 {
            continue;
        }
        let event = json!({"type": "offer_shown", "offer_id": body["offer_id"]});
        a.post(
            "/v1/sdk/events",
            json!({"session_id": sid, "events": [event]}),
        )
        .token(&sdk.key)
        .expect(StatusCode::ACCEPTED)
        .await;
        shown += 1;
    }
    assert!(shown > 0, "no L1 offer was served");
    // What A learned reaches B through the store, and A keeps serving the same totals.
    assert_eq!(model_reaches(&b, &sdk.game, shown).await, shown);
    assert_eq!(model_reaches(&a, &sdk.game, shown).await, shown);
    // Both serve one model: the same evidence for every arm.
    let on_a = remembered(&a, &sdk.game).await;
    assert!(on_a.iter().any(|(_, w)| *w > 0), "{on_a:?}");
    assert_eq!(remembered(&b, &sdk.game).await, on_a);
    // A node started afterwards (a restart) serves the totals without having seen anything.
    let c = a.spawn_peer().await;
    assert_eq!(model_reaches(&c, &sdk.game, shown).await, shown);
    assert_eq!(remembered(&c, &sdk.game).await, on_a);
    // Another studio cannot read the model.
    a.get(format!("/v1/games/{}/model", sdk.game))
        .token(&a.token("studio-b", Role::Admin))
        .expect_error(StatusCode::NOT_FOUND, "not_found")
        .await;
}

#[tokio::test]
async fn an_offer_shown_reported_to_another_node_still_teaches_the_model() {
    let a = spawn_tuned(shared_backend(), |s| s.offers.model_sync_ms = 100).await;
    let b = a.spawn_peer().await;
    let (sdk, sid) = serving_l1(&a).await;
    let (_, body, _) = offer(&a, &sdk, &sid, "boss_raid").await;
    assert_eq!(body["fallback_level"], 1, "{body}");
    let offer_id = body["offer_id"].as_str().expect("offer id").to_owned();
    // Once the decision reached the store, B knows what it teaches.
    let path = format!("/v1/games/{}/offers/{offer_id}", sdk.game);
    let mut record = Value::Null;
    for _ in 0..200 {
        let r = b.get(&path).send().await;
        if r.status() == StatusCode::OK {
            record = r.json().await.expect("json");
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(record["learning"]["arm"].is_object(), "{record}");
    assert_eq!(record["learning"]["source"], "ai", "{record}");
    assert!(
        record["learning"]["features"]
            .as_array()
            .is_some_and(|f| f.iter().any(|l| l == "trigger=boss_raid")),
        "{record}"
    );
    // The client reports the show to B (its session moved there).
    let event = json!({"type": "offer_shown", "offer_id": offer_id});
    b.post(
        "/v1/sdk/events",
        json!({"session_id": sid, "events": [event]}),
    )
    .token(&sdk.key)
    .expect(StatusCode::ACCEPTED)
    .await;
    assert_eq!(model_reaches(&a, &sdk.game, 1).await, 1);
    assert_eq!(model_reaches(&b, &sdk.game, 1).await, 1);
}
