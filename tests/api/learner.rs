//! The AI level's learner through the real SDK and REST surfaces: what a decision's trace
//! explains, what a show and a purchase teach (whatever level served the offer), what the
//! holdout never teaches, the game's learner settings, and the model view.

use reqwest::StatusCode;
use serde_json::{Value, json};

use super::fixtures::{Sdk, bundle, mixed_catalogue, player, template};
use super::helpers::{TestApp, default_backend, spawn_app, spawn_tuned};
use super::offers::{autonomous_capped as autonomous, decision, featured, offer};

/// Reports `offer` shown and, when `bought`, bought.
async fn show(app: &TestApp, sdk: &Sdk, sid: &str, offer: &Value, bought: bool) {
    let mut events = vec![json!({"type": "offer_shown", "offer_id": offer["offer_id"]})];
    if bought {
        let item_ids: Vec<&str> = offer["items"]
            .as_array()
            .expect("items")
            .iter()
            .map(|i| i["item_id"].as_str().expect("id"))
            .collect();
        events.push(json!({"type": "purchase", "offer_id": offer["offer_id"],
            "item_ids": item_ids, "price_cents": offer["price_cents"],
            "tx_id": format!("tx-{}", offer["offer_id"].as_str().expect("id"))}));
    }
    app.post(
        "/v1/sdk/events",
        json!({"session_id": sid, "events": events}),
    )
    .token(&sdk.key)
    .expect(StatusCode::ACCEPTED)
    .await;
}

/// The game's model report.
async fn model(app: &TestApp, sdk: &Sdk) -> Value {
    app.get_json(format!("/v1/games/{}/model", sdk.game)).await
}

/// Polls until the learner counts `offers` shown offers; the last report.
async fn model_counting(app: &TestApp, sdk: &Sdk, offers: u64) -> Value {
    let mut last = Value::Null;
    for _ in 0..200 {
        last = model(app, sdk).await;
        if last["offers"] == offers {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    last
}

#[tokio::test]
async fn an_ai_decision_explains_its_pick_and_teaches_what_was_shown() {
    let app = spawn_app().await;
    let sdk = app.game_with(mixed_catalogue()).await;
    autonomous(&app, &sdk.game, 100_000).await;
    let sid = app
        .open_session(
            &sdk,
            &player(&sdk.game, false),
            json!({"country": "US", "platform": "ios", "level": 40, "guild": "red"}),
        )
        .await;
    let fresh = model(&app, &sdk).await;
    assert_eq!(fresh["offers"], 0, "{fresh}");
    assert_eq!(fresh["effective_observations"], 0.0, "{fresh}");
    assert_eq!(fresh["restarts"], 0, "{fresh}");
    assert_eq!(fresh["learning_since_offer"], 0, "{fresh}");
    assert!(
        fresh["summary"]
            .as_str()
            .is_some_and(|s| s.starts_with("Nothing learned yet")),
        "{fresh}"
    );
    let (status, served, _) = offer(&app, &sdk, &sid, "boss_raid").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(served["fallback_level"], 1, "{served}");
    let record = decision(&app, &sdk, &served).await;
    let why = &record["l1"];
    let features: Vec<&str> = why["features"]
        .as_array()
        .expect("features")
        .iter()
        .map(|f| f.as_str().expect("label"))
        .collect();
    for expected in [
        "trigger=boss_raid",
        "platform=ios",
        "country=US",
        "attr:guild=red",
    ] {
        assert!(features.contains(&expected), "{expected} in {features:?}");
    }
    assert!(
        features.iter().any(|f| f.starts_with("attr:level")),
        "{features:?}"
    );
    // The chosen arm is what was served: its category and (nearest item to) its price.
    let chosen = &why["chosen"];
    assert_eq!(
        chosen["arm"]["category"], served["items"][0]["category"],
        "{record}"
    );
    let sampled = chosen["sampled_revenue_cents"].as_f64().expect("revenue");
    let runner_up = why["runner_up"]["sampled_revenue_cents"]
        .as_f64()
        .expect("a runner-up among several arms");
    assert!(sampled >= runner_up, "{why}");
    let top = why["top_features"].as_array().expect("top features");
    assert!(!top.is_empty() && top.len() <= 3, "{why}");
    assert!(
        top.iter()
            .all(|t| features.contains(&t["feature"].as_str().expect("label")))
    );
    // What the record keeps to teach on any node.
    assert_eq!(record["learning"]["source"], "ai");
    assert_eq!(record["learning"]["arm"], chosen["arm"]);
    // A show teaches one offer, a purchase of it no further offer but more evidence.
    show(&app, &sdk, &sid, &served, false).await;
    let after_show = model_counting(&app, &sdk, 1).await;
    assert_eq!(after_show["offers"], 1, "{after_show}");
    let (_, second, _) = offer(&app, &sdk, &sid, "boss_raid").await;
    show(&app, &sdk, &sid, &second, true).await;
    let after = model_counting(&app, &sdk, 2).await;
    assert_eq!(after["offers"], 2, "{after}");
    let remembered = after["effective_observations"].as_f64().expect("number");
    assert!((remembered - 2.0).abs() < 0.01, "{after}");
    // The model view judges boss_raid over the decisions this node made there.
    let trigger = after["by_trigger"]
        .as_array()
        .expect("by_trigger")
        .iter()
        .find(|t| t["trigger"] == "boss_raid")
        .expect("boss_raid is reported")
        .clone();
    assert_eq!(trigger["contexts"], 2, "{trigger}");
    let pick = &trigger["pick"];
    let (low, p, high) = (
        pick["conversion_low"].as_f64().expect("low"),
        pick["conversion"].as_f64().expect("conversion"),
        pick["conversion_high"].as_f64().expect("high"),
    );
    assert!(0.0 < low && low <= p && p <= high && high < 1.0, "{pick}");
    assert!(pick["evidence_offers"].as_f64().expect("evidence") >= 0.0);
    // Another studio cannot read the model.
    app.get(format!("/v1/games/{}/model", sdk.game))
        .token(&app.token("studio-b", super::helpers::Role::Admin))
        .expect_error(StatusCode::NOT_FOUND, "not_found")
        .await;
}

#[tokio::test]
async fn other_levels_single_item_offers_teach_and_bundles_do_not() {
    let app = spawn_app().await;
    let sdk = app.game_with(mixed_catalogue()).await;
    // Shadow mode (a new game's): bundles and the shelf serve.
    let mut starter = bundle("starter", &["potion", "sword"], 4.99);
    starter["triggers"] = json!(["first_loss"]);
    app.post(format!("/v1/games/{}/offer-bundles", sdk.game), starter)
        .expect(StatusCode::CREATED)
        .await;
    let sid = featured(&app, &sdk).await;
    let mut taught = 0;
    let mut multi = 0;
    for trigger in ["first_loss", "level_up", "boss_raid", "session_start"] {
        let (status, served, _) = offer(&app, &sdk, &sid, trigger).await;
        assert_eq!(status, StatusCode::OK);
        let record = decision(&app, &sdk, &served).await;
        if served["items"].as_array().expect("items").len() == 1 {
            assert_eq!(record["learning"]["source"], "fallback", "{record}");
            taught += 1;
        } else {
            assert!(record["learning"].is_null(), "{record}");
            multi += 1;
        }
        show(&app, &sdk, &sid, &served, false).await;
    }
    assert!(taught > 0, "no single-item offer served");
    assert!(multi > 0, "the bundle never served");
    let after = model_counting(&app, &sdk, taught).await;
    assert_eq!(
        after["offers"], taught,
        "{after}; {multi} bundles taught nothing"
    );
}

#[tokio::test]
async fn holdout_players_teach_nothing() {
    let app = spawn_app().await;
    let sdk = app.game_with(mixed_catalogue()).await;
    autonomous(&app, &sdk.game, 100_000).await;
    let held = app
        .open_session(
            &sdk,
            &player(&sdk.game, true),
            json!({"country": "US", "platform": "ios"}),
        )
        .await;
    for _ in 0..5 {
        let (status, _, outcome) = offer(&app, &sdk, &held, "boss_raid").await;
        assert_eq!(status, StatusCode::NO_CONTENT);
        assert_eq!(outcome.as_deref(), Some("holdout"));
    }
    // A treated player's show is counted; nothing of the holdout's is.
    let sid = featured(&app, &sdk).await;
    let (_, served, _) = offer(&app, &sdk, &sid, "boss_raid").await;
    show(&app, &sdk, &sid, &served, false).await;
    let after = model_counting(&app, &sdk, 1).await;
    assert_eq!(after["offers"], 1, "{after}");
    // Another session's offer reported by the holdout player's session teaches nothing more.
    app.post(
        "/v1/sdk/events",
        json!({"session_id": held, "events": [
            {"type": "offer_shown", "offer_id": served["offer_id"]}]}),
    )
    .token(&sdk.key)
    .send()
    .await;
    tokio::time::sleep(std::time::Duration::from_millis(600)).await;
    assert_eq!(model(&app, &sdk).await["offers"], 1);
}

#[tokio::test]
async fn exploration_never_crosses_the_guardrails() {
    let app = spawn_app().await;
    let sdk = app.game_with(mixed_catalogue()).await;
    app.put(
        format!("/v1/games/{}/offer-templates", sdk.game),
        json!([template("boss_raid", &["equipment"])]),
    )
    .expect(StatusCode::OK)
    .await;
    autonomous(&app, &sdk.game, 300).await;
    let sid = app
        .open_session(
            &sdk,
            &player(&sdk.game, false),
            json!({"country": "BE", "platform": "android", "level": 3}),
        )
        .await;
    let mut levels = std::collections::BTreeSet::new();
    for i in 0..60 {
        let trigger = ["boss_raid", "currency_low", "first_loss"][i % 3];
        let (status, served, _) = offer(&app, &sdk, &sid, trigger).await;
        if status != StatusCode::OK {
            continue;
        }
        levels.insert(served["fallback_level"].as_u64().expect("level"));
        assert!(
            served["price_cents"].as_i64().expect("price") <= 300,
            "{served}"
        );
        for item in served["items"].as_array().expect("items") {
            assert!(
                item["price_cents"].as_i64().expect("price") <= 300,
                "{item}"
            );
        }
        show(&app, &sdk, &sid, &served, i % 4 == 0).await;
    }
    assert!(levels.contains(&1), "the AI served: {levels:?}");
}

#[tokio::test]
async fn learner_settings_are_checked_and_ignored_attributes_never_become_features() {
    let app = spawn_tuned(default_backend(), |_| {}).await;
    let sdk = app.game_with(mixed_catalogue()).await;
    autonomous(&app, &sdk.game, 100_000).await;
    let path = format!("/v1/games/{}", sdk.game);
    let body = app
        .patch(
            &path,
            json!({"learner": {"half_life_offers": 10, "fallback_weight": -1}}),
        )
        .expect_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_failed")
        .await;
    let fields: Vec<&str> = body["error"]["details"]["errors"]
        .as_array()
        .expect("details")
        .iter()
        .map(|d| d["field"].as_str().expect("field"))
        .collect();
    assert_eq!(
        fields,
        ["learner.half_life_offers", "learner.fallback_weight"],
        "{body}"
    );
    let game = app
        .patch(
            &path,
            json!({"learner": {"half_life_offers": 5000, "ignored_attributes": ["device_id"]}}),
        )
        .expect(StatusCode::OK)
        .await;
    assert_eq!(game["learner"]["half_life_offers"], 5000, "{game}");
    assert_eq!(game["learner"]["fallback_weight"], 1.0, "{game}");
    assert_eq!(model(&app, &sdk).await["half_life_offers"], 5000);
    let sid = app
        .open_session(
            &sdk,
            &player(&sdk.game, false),
            json!({"platform": "ios", "device_id": "a1b2c3", "level": 12}),
        )
        .await;
    let (_, served, _) = offer(&app, &sdk, &sid, "boss_raid").await;
    let record = decision(&app, &sdk, &served).await;
    let features = record["l1"]["features"].to_string();
    assert!(!features.contains("device_id"), "{features}");
    assert!(features.contains("attr:level"), "{features}");
}
