//! The audit trail through the real HTTP surface: every audited action writes exactly one
//! record naming who, from where, the object and its changed fields, a refused change writes
//! none (a change of a game's objects that lost a race to another node included), no record
//! carries a secret, and a studio reads only its own records, a page at a time.

use offer_receipts::test_support::TestGoogleKey;
use reqwest::StatusCode;
use serde_json::{Value, json};

use super::fixtures::{bundle, item, template, with};
use super::helpers::{
    Role, TestApp, shared_backend, spawn_app, spawn_app_on, spawn_tuned, spawn_with,
};
use super::receipt_fixtures::PACKAGE;

/// Every record of `game`, newest first, read page by page.
async fn records(app: &TestApp, game: &str) -> Vec<Value> {
    let mut out = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let mut path = format!("/v1/studio/audit?game_id={game}");
        if let Some(c) = &cursor {
            path.push_str(&format!("&cursor={c}"));
        }
        let page = app.get_json(path).await;
        out.extend(page["entries"].as_array().expect("entries").iter().cloned());
        match page["next_cursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => return out,
        }
    }
}

/// The records of `game` made since the last call, oldest first, and how many there are now.
async fn new_records(app: &TestApp, game: &str, seen: &mut usize) -> Vec<Value> {
    let all = records(app, game).await;
    let fresh: Vec<Value> = all[..all.len() - *seen].iter().rev().cloned().collect();
    *seen = all.len();
    fresh
}

/// Asserts that exactly one record was written since the last call, of `action`, and
/// returns it.
async fn one(app: &TestApp, game: &str, seen: &mut usize, action: &str) -> Value {
    let fresh = new_records(app, game, seen).await;
    assert_eq!(
        fresh.len(),
        1,
        "one record of {action} expected: {fresh:#?}"
    );
    let record = fresh[0].clone();
    assert_eq!(record["action"], action, "{record}");
    assert_eq!(record["via"], "rest", "{record}");
    assert_eq!(record["actor"], json!({"kind": "member", "id": "alice"}));
    assert_eq!(record["game_id"], game);
    record
}

/// Asserts that nothing was recorded since the last call.
async fn none(app: &TestApp, game: &str, seen: &mut usize, after: &str) {
    let fresh = new_records(app, game, seen).await;
    assert!(fresh.is_empty(), "a refused {after} recorded: {fresh:#?}");
}

#[tokio::test]
async fn every_change_of_a_game_writes_one_record_and_a_refused_one_none() {
    let app = spawn_app().await;
    let game = app.create_game().await;
    let mut seen = 0;
    let created = one(&app, &game, &mut seen, "game.create").await;
    assert_eq!(created["before"], Value::Null);
    assert_eq!(created["after"]["name"], "Dragon Quest");
    assert_eq!(created["object"], json!({"kind": "game", "id": game}));

    // The game, its guardrails and its mode.
    app.patch(
        format!("/v1/games/{game}"),
        json!({"name": "Dragon Quest II"}),
    )
    .expect(StatusCode::OK)
    .await;
    let renamed = one(&app, &game, &mut seen, "game.update").await;
    assert_eq!(renamed["before"]["name"], "Dragon Quest");
    assert_eq!(renamed["after"]["name"], "Dragon Quest II");
    assert!(
        renamed["after"].get("genre").is_none(),
        "only changed fields: {renamed}"
    );
    app.set_guardrails(&game, json!({"max_price_cents": 5000}))
        .await;
    one(&app, &game, &mut seen, "game.guardrails").await;
    app.set_mode(&game, "autonomous")
        .expect(StatusCode::CONFLICT)
        .await;
    none(&app, &game, &mut seen, "mode change").await;
    app.set_mode(&game, "assisted").expect(StatusCode::OK).await;
    let mode = one(&app, &game, &mut seen, "game.mode").await;
    assert_eq!(mode["before"]["mode"], "shadow");
    assert_eq!(mode["after"]["mode"], "assisted");

    // The catalogue: one item, a bulk of two in one record, a refused bulk, a patch, a delete.
    app.post(
        format!("/v1/games/{game}/items"),
        item("sword", "equipment", 4.99),
    )
    .expect(StatusCode::CREATED)
    .await;
    let sword = one(&app, &game, &mut seen, "item.upsert").await;
    assert_eq!(sword["object"], json!({"kind": "item", "id": "sword"}));
    app.bulk(
        &game,
        json!([
            item("shield", "cosmetic", 2.99),
            item("helm", "cosmetic", 1.99)
        ]),
    )
    .expect(StatusCode::OK)
    .await;
    let bulk = one(&app, &game, &mut seen, "item.bulk_upsert").await;
    assert_eq!(
        bulk["before"],
        json!({"shield": null, "helm": null}),
        "{bulk}"
    );
    assert_eq!(bulk["after"]["helm"]["item_id"], "helm");
    app.bulk(&game, json!([item("axe", "equipment", -1.0)]))
        .expect(StatusCode::UNPROCESSABLE_ENTITY)
        .await;
    none(&app, &game, &mut seen, "bulk upsert").await;
    app.patch(
        format!("/v1/games/{game}/items/sword"),
        json!({"price_usd": 5.99}),
    )
    .expect(StatusCode::OK)
    .await;
    let patched = one(&app, &game, &mut seen, "item.patch").await;
    assert_eq!(patched["before"]["price_usd"], 4.99);
    assert_eq!(patched["after"]["price_usd"], 5.99);
    app.delete_item(&game, "helm")
        .expect(StatusCode::NO_CONTENT)
        .await;
    one(&app, &game, &mut seen, "item.delete").await;
    app.delete_item(&game, "helm")
        .expect(StatusCode::NOT_FOUND)
        .await;
    none(&app, &game, &mut seen, "item deletion").await;

    // The offer configuration.
    app.set_templates(&game, json!([template("level_up", &["equipment"])]))
        .await;
    one(&app, &game, &mut seen, "templates.put").await;
    let made = app
        .add_bundle(&game, bundle("Starter", &["sword", "shield"], 6.99))
        .expect(StatusCode::CREATED)
        .await;
    let bundle_id = made["bundle_id"].as_str().expect("bundle id");
    one(&app, &game, &mut seen, "bundle.put").await;
    app.delete(format!("/v1/games/{game}/offer-bundles/{bundle_id}"))
        .expect(StatusCode::NO_CONTENT)
        .await;
    let gone = one(&app, &game, &mut seen, "bundle.delete").await;
    assert_eq!(gone["after"], Value::Null);
    let experiment = app
        .post(
            format!("/v1/games/{game}/experiments"),
            json!({"variants": [{"name": "cheap", "weight": 1, "price_usd": 1.23}]}),
        )
        .expect(StatusCode::CREATED)
        .await;
    one(&app, &game, &mut seen, "experiment.add").await;
    let experiment_id = experiment["experiment_id"].as_str().expect("id");
    app.delete(format!("/v1/games/{game}/experiments/{experiment_id}"))
        .expect(StatusCode::NO_CONTENT)
        .await;
    one(&app, &game, &mut seen, "experiment.delete").await;

    // The kill switch: a refused level records nothing.
    app.put(
        format!("/v1/games/{game}/kill-switch"),
        json!({"level": 9, "reason": "typo"}),
    )
    .expect(StatusCode::UNPROCESSABLE_ENTITY)
    .await;
    none(&app, &game, &mut seen, "kill switch").await;
    app.set_kill_switch(&game, 2).await;
    let kill = one(&app, &game, &mut seen, "kill_switch.set").await;
    assert_eq!(kill["before"], Value::Null, "never set before: {kill}");
    assert_eq!(kill["after"]["level"], 2);
    app.set_kill_switch(&game, 0).await;
    let back = one(&app, &game, &mut seen, "kill_switch.set").await;
    assert_eq!(back["before"]["level"], 2);
    assert_eq!(back["after"]["level"], 0);
}

#[tokio::test]
async fn keys_members_and_settings_are_recorded_without_their_secrets() {
    let app = spawn_app().await;
    let game = app.create_game().await;
    let mut seen = records(&app, &game).await.len();

    let google = TestGoogleKey::new();
    let issued = app.issue_sdk_key(&game, "production").await;
    let key = issued["api_key"].as_str().expect("key").to_owned();
    let key_id = issued["key_id"].as_str().expect("id").to_owned();
    let record = one(&app, &game, &mut seen, "key.issue").await;
    assert_eq!(record["object"], json!({"kind": "key", "id": key_id}));
    assert_eq!(record["after"]["key_hash"], "[redacted]", "{record}");
    app.revoke_sdk_key(&game, &key_id).await;
    let revoked = one(&app, &game, &mut seen, "key.revoke").await;
    assert_eq!(revoked["before"]["revoked_at"], Value::Null);
    assert!(revoked["after"]["revoked_at"].is_string(), "{revoked}");

    let stores = app
        .put(
            format!("/v1/games/{game}/stores"),
            json!({"verification": "report",
                "google_play": {"package_name": PACKAGE, "public_key": google.public_base64()}}),
        )
        .expect(StatusCode::OK)
        .await;
    one(&app, &game, &mut seen, "store_settings.put").await;
    let rotated = app
        .post(
            format!("/v1/games/{game}/stores/google-play-token"),
            json!({}),
        )
        .expect(StatusCode::OK)
        .await;
    let rotation = one(
        &app,
        &game,
        &mut seen,
        "store_settings.rotate_google_play_token",
    )
    .await;
    assert_eq!(rotation["after"]["google_play_token"], "[redacted]");

    app.post(
        "/v1/studio/members",
        json!({"email": "dev@studio-a.test", "password": "correct horse battery", "role": "developer"}),
    )
    .expect(StatusCode::CREATED)
    .await;
    app.post(
        "/v1/studio/members",
        json!({"email": "dev@studio-a.test", "password": "another password", "role": "viewer"}),
    )
    .expect(StatusCode::CONFLICT)
    .await;
    let studio = app.get_json("/v1/studio/audit").await;
    let members: Vec<&Value> = studio["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .filter(|e| e["action"] == "member.add")
        .collect();
    assert_eq!(members.len(), 1, "one member added, one refused: {studio}");
    assert_eq!(members[0]["game_id"], Value::Null);
    assert_eq!(members[0]["after"]["password_hash"], "[redacted]");

    // No secret appears anywhere in the studio's records.
    let everything = format!("{studio}{}", json!(records(&app, &game).await));
    assert!(!everything.contains(&key), "the SDK key leaked");
    assert!(
        !everything.contains("correct horse battery"),
        "a password leaked"
    );
    assert!(!everything.contains("$argon2"), "a password hash leaked");
    for answer in [&stores, &rotated] {
        let address = answer["notification_urls"]["google_play"]
            .as_str()
            .expect("the Google Play notification address");
        let token = address.rsplit('/').next().expect("a token");
        assert!(token.len() > 16, "{address}");
        assert!(!everything.contains(token), "a notification token leaked");
    }
}

#[tokio::test]
async fn a_studio_reads_only_its_own_records_a_page_at_a_time() {
    let app = spawn_app().await;
    let game = app.create_game().await;
    for level in 0..120u8 {
        app.set_kill_switch(&game, level % 4).await;
    }
    let first = app
        .get_json(format!("/v1/studio/audit?game_id={game}"))
        .await;
    assert_eq!(first["entries"].as_array().expect("entries").len(), 100);
    let all = records(&app, &game).await;
    assert_eq!(all.len(), 121, "the creation and 120 kill switches");
    let ids: Vec<&str> = all.iter().map(|e| e["id"].as_str().expect("id")).collect();
    let mut sorted = ids.clone();
    sorted.sort_unstable_by(|a, b| b.cmp(a));
    sorted.dedup();
    assert_eq!(ids, sorted, "newest first, no record twice across pages");

    let since = all[10]["at"].as_str().expect("at");
    let recent = app
        .get_json(format!(
            "/v1/studio/audit?game_id={game}&since={}",
            urlencode(since)
        ))
        .await;
    assert_eq!(recent["entries"].as_array().expect("entries").len(), 11);

    let other = app.token("studio-b", Role::Admin);
    let theirs = app
        .get("/v1/studio/audit")
        .token(&other)
        .expect(StatusCode::OK)
        .await;
    assert!(
        theirs["entries"]
            .as_array()
            .expect("entries")
            .iter()
            .all(|e| e["game_id"].is_null() && e["studio_id"].is_null()),
        "studio B sees only the operator's deployment-wide settings: {theirs}"
    );
    app.get(format!("/v1/studio/audit?game_id={game}"))
        .token(&other)
        .expect(StatusCode::NOT_FOUND)
        .await;
    let developer = app.token("studio-a", Role::Developer);
    app.get("/v1/studio/audit")
        .token(&developer)
        .expect(StatusCode::FORBIDDEN)
        .await;
    app.get("/v1/studio/audit?since=yesterday")
        .expect(StatusCode::BAD_REQUEST)
        .await;
    app.get(format!("/v1/studio/audit?cursor={}", "0".repeat(65)))
        .expect(StatusCode::UNPROCESSABLE_ENTITY)
        .await;
}

/// `value` with the characters a query string cannot carry as they are escaped.
fn urlencode(value: &str) -> String {
    value.replace('+', "%2B").replace(':', "%3A")
}

const TEMPLATE: &str = "import 'package:flutter/widgets.dart';\n\nclass Page extends StatelessWidget {\n  const Page({super.key});\n  @override\n  Widget build(BuildContext context) => Text(offer['title'] as String);\n}\n";

#[tokio::test]
async fn publish_requests_decisions_and_device_sign_ins_are_recorded_once() {
    let app = spawn_app().await;
    let game = app.create_game().await;
    let mut seen = records(&app, &game).await.len();

    // A publish request, a refused one (no such version), its approval and a second
    // decision of the same approval (refused).
    let draft = app
        .post(
            format!("/v1/games/{game}/custom-pages/draft"),
            json!({"template": TEMPLATE, "bindings": {"items": [], "title": "Hi"}}),
        )
        .expect(StatusCode::CREATED)
        .await;
    let page = draft["page_id"].as_str().expect("page");
    let publish = format!("/v1/games/{game}/custom-pages/{page}/publish-request");
    app.post(&publish, json!({"version": 9}))
        .expect(StatusCode::NOT_FOUND)
        .await;
    none(&app, &game, &mut seen, "publish request").await;
    let approval = app
        .post(&publish, json!({"version": 1}))
        .expect(StatusCode::CREATED)
        .await;
    let id = approval["approval_id"].as_str().expect("approval id");
    let requested = one(&app, &game, &mut seen, "custom_page.request_publish").await;
    assert_eq!(requested["object"], json!({"kind": "approval", "id": id}));
    app.post(format!("/v1/approvals/{id}/approve"), json!({}))
        .expect(StatusCode::OK)
        .await;
    let approved = one(&app, &game, &mut seen, "approval.approve").await;
    assert_eq!(approved["before"]["status"], "pending", "{approved}");
    assert_eq!(approved["after"]["status"], "approved", "{approved}");
    app.post(format!("/v1/approvals/{id}/reject"), json!({}))
        .expect(StatusCode::CONFLICT)
        .await;
    none(&app, &game, &mut seen, "second decision").await;

    // A device sign-in approved: the approval and the key it hands out are recorded; a
    // second approval of the same code is refused and records nothing.
    let sign_in = app
        .call(reqwest::Method::POST, "/v1/auth/device")
        .no_token()
        .expect(StatusCode::OK)
        .await;
    let code = sign_in["user_code"].as_str().expect("user code");
    app.post(
        "/v1/auth/device/approve",
        json!({"user_code": code, "game_id": game}),
    )
    .expect(StatusCode::NO_CONTENT)
    .await;
    let device = one(&app, &game, &mut seen, "device_sign_in.approve").await;
    assert_eq!(
        device["object"],
        json!({"kind": "device_sign_in", "id": code})
    );
    app.post(
        "/v1/auth/device/approve",
        json!({"user_code": code, "game_id": game}),
    )
    .expect(StatusCode::CONFLICT)
    .await;
    none(&app, &game, &mut seen, "second device approval").await;
    let text = json!(records(&app, &game).await).to_string();
    let device_code = sign_in["device_code"].as_str().expect("device code");
    assert!(!text.contains(device_code), "the device code leaked");
}

#[tokio::test]
async fn the_operators_billing_settings_are_recorded_at_start_when_they_change() {
    // Nodes of one deployment share the store (Redis): each start compares the operator's
    // settings with the last recorded ones.
    let first = spawn_tuned(shared_backend(), |s| {
        s.billing.rates.insert("studio-a".into(), 15.0);
    })
    .await;
    let settings = first.running.state.services.settings.clone();
    let operator = |page: &Value| -> Vec<Value> {
        page["entries"]
            .as_array()
            .expect("entries")
            .iter()
            .filter(|e| e["action"] == "operator_settings.change")
            .cloned()
            .collect()
    };
    let a = operator(&first.get_json("/v1/studio/audit").await);
    assert_eq!(a.len(), 2, "the defaults and studio A's rate: {a:#?}");
    assert!(
        a.iter()
            .all(|e| e["actor"] == json!({"kind": "operator", "id": "config"}))
    );
    assert!(a.iter().all(|e| e["via"] == "startup"));
    let own = a
        .iter()
        .find(|e| e["object"]["id"] == "studio:studio-a")
        .expect("studio A's terms");
    assert_eq!(own["before"], Value::Null);
    assert_eq!(own["after"]["rate_pct"], 15.0);
    let other = first.token("studio-b", Role::Admin);
    let b = operator(
        &first
            .get("/v1/studio/audit")
            .token(&other)
            .expect(StatusCode::OK)
            .await,
    );
    assert_eq!(
        b.len(),
        1,
        "studio B reads the defaults, not studio A's rate: {b:#?}"
    );

    // Another start with the same settings records nothing; one with a new rate records its
    // change.
    let again = spawn_with(settings.clone()).await;
    assert_eq!(operator(&again.get_json("/v1/studio/audit").await).len(), 2);
    let mut raised = settings;
    raised.billing.rates.insert("studio-a".into(), 20.0);
    let third = spawn_with(raised).await;
    let now = operator(&third.get_json("/v1/studio/audit").await);
    assert_eq!(now.len(), 3, "{now:#?}");
    assert_eq!(now[0]["before"]["rate_pct"], 15.0);
    assert_eq!(now[0]["after"]["rate_pct"], 20.0);
}

#[tokio::test]
async fn a_game_change_refused_or_changing_nothing_records_nothing_and_one_that_lands_once() {
    let app = spawn_app().await;
    let game = app.create_game().await;
    let mut seen = records(&app, &game).await.len();

    // Templates set twice to the same: the second changes nothing, so records nothing.
    let templates = json!([template("level_up", &["equipment"])]);
    app.set_templates(&game, templates.clone()).await;
    one(&app, &game, &mut seen, "templates.put").await;
    app.set_templates(&game, templates).await;
    none(&app, &game, &mut seen, "unchanged templates").await;

    // An item created, created again (409), patched with an invalid price (422) and patched
    // when unknown (404): only the creation is recorded, with what the store holds.
    let path = format!("/v1/games/{game}/items");
    app.post(&path, item("sword", "equipment", 4.99))
        .expect(StatusCode::CREATED)
        .await;
    let created = one(&app, &game, &mut seen, "item.upsert").await;
    assert_eq!(created["before"], Value::Null);
    let stored = app.items(&game).await;
    assert_eq!(created["after"]["price_usd"], stored[0]["price_usd"]);
    app.post(&path, item("sword", "equipment", 9.99))
        .expect(StatusCode::CONFLICT)
        .await;
    none(&app, &game, &mut seen, "second creation").await;
    app.patch(format!("{path}/sword"), json!({"price_usd": -1}))
        .expect(StatusCode::UNPROCESSABLE_ENTITY)
        .await;
    none(&app, &game, &mut seen, "invalid patch").await;
    app.patch(format!("{path}/axe"), json!({"price_usd": 1.99}))
        .expect(StatusCode::NOT_FOUND)
        .await;
    none(&app, &game, &mut seen, "patch of an unknown item").await;

    // A bundle whose store product another bundle already sells under is a 409.
    let products = json!({"store_products": {"app_store": "com.x.starter"}});
    app.add_bundle(
        &game,
        with(bundle("Starter", &["sword"], 6.99), products.clone()),
    )
    .expect(StatusCode::CREATED)
    .await;
    one(&app, &game, &mut seen, "bundle.put").await;
    app.add_bundle(&game, with(bundle("Copy", &["sword"], 5.99), products))
        .expect(StatusCode::CONFLICT)
        .await;
    none(&app, &game, &mut seen, "bundle selling a taken product").await;
    assert_eq!(
        app.get_json(format!("/v1/games/{game}/offer-bundles"))
            .await["bundles"]
            .as_array()
            .map(Vec::len),
        Some(1)
    );
}

#[tokio::test]
async fn two_nodes_racing_on_one_object_record_only_the_write_that_landed() {
    let a = spawn_app_on(shared_backend()).await;
    let b = a.spawn_peer().await;
    let game = a.create_game().await;
    let mut seen = records(&a, &game).await.len();

    // One item created on both nodes at once: one 201, one 409, one record.
    let path = format!("/v1/games/{game}/items");
    for i in 0..5 {
        let id = format!("race_{i}");
        let body = item(&id, "consumable", 0.99);
        let (ra, rb) = tokio::join!(
            a.post(&path, body.clone()).send(),
            b.post(&path, body).send()
        );
        let mut statuses = [ra.status().as_u16(), rb.status().as_u16()];
        statuses.sort_unstable();
        assert_eq!(statuses, [201, 409], "item {id}");
        let record = one(&a, &game, &mut seen, "item.upsert").await;
        assert_eq!(record["object"]["id"], id.as_str());
        assert_eq!(record["before"], Value::Null);
    }

    // One approval approved on one node and rejected on the other at once: one decision
    // lands, and only its record is written, matching what the approval holds.
    for round in 0..3 {
        let draft = a
            .post(
                format!("/v1/games/{game}/custom-pages/draft"),
                json!({"template": TEMPLATE, "bindings": {"items": [], "title": "Hi"}}),
            )
            .expect(StatusCode::CREATED)
            .await;
        let page = draft["page_id"].as_str().expect("page");
        let approval = a
            .post(
                format!("/v1/games/{game}/custom-pages/{page}/publish-request"),
                json!({"version": 1}),
            )
            .expect(StatusCode::CREATED)
            .await;
        let id = approval["approval_id"].as_str().expect("approval id");
        one(&a, &game, &mut seen, "custom_page.request_publish").await;
        let (approved, rejected) = tokio::join!(
            a.post(format!("/v1/approvals/{id}/approve"), json!({}))
                .send(),
            b.post(format!("/v1/approvals/{id}/reject"), json!({}))
                .send()
        );
        let (approved, rejected) = (approved.status(), rejected.status());
        let mut statuses = [approved.as_u16(), rejected.as_u16()];
        statuses.sort_unstable();
        assert_eq!(statuses, [200, 409], "round {round}");
        let (action, status) = if approved == StatusCode::OK {
            ("approval.approve", "approved")
        } else {
            ("approval.reject", "rejected")
        };
        let record = one(&a, &game, &mut seen, action).await;
        assert_eq!(record["before"]["status"], "pending", "{record}");
        assert_eq!(record["after"]["status"], status, "{record}");
        let stored = a.get_json(format!("/v1/approvals/{id}")).await;
        assert_eq!(stored["status"], status, "round {round}");
    }
}
