//! Publishing a custom page, only through approval: a publish request queues a
//! `custom_page` approval; approving it publishes the version, which a live WebSocket client
//! on this node and on another node receive in `config`, and the SDK status shows.
//! Rejecting leaves nothing published. An authoring key, a viewer and another studio cannot
//! publish or decide. Only a version that validates is published: the request refuses one the
//! validator blocks (a forbidden import, a network call, an unbalanced delimiter, an unknown
//! item, a service key) and queues nothing; the approval refuses one that no longer validates
//! (its item deleted since the request) and stays pending.

use offer_preview::testing::FIXTURE_PAGE as SHOP_PAGE;
use reqwest::StatusCode;
use serde_json::{Value, json};

use super::fixtures::{pack, store_shelf};
use super::helpers::{Role, TestApp, shared_backend, spawn_app, spawn_app_on};
use super::ws_client::{Fmt, connect, fresh};

const TEMPLATE: &str = "import 'package:flutter/widgets.dart';\n\nclass Page extends StatelessWidget {\n  const Page({super.key});\n  @override\n  Widget build(BuildContext context) => Text(offer['title'] as String);\n}\n";

/// Saves two versions of a new page of `game`; returns the page id.
async fn two_versions(app: &TestApp, game: &str) -> String {
    let path = format!("/v1/games/{game}/custom-pages/draft");
    let first = app
        .post(
            &path,
            json!({"template": TEMPLATE, "bindings": {"items": [], "title": "First"}}),
        )
        .expect(StatusCode::CREATED)
        .await;
    let page = first["page_id"].as_str().expect("page").to_owned();
    app.post(
        &path,
        json!({"page_id": page, "template": format!("{TEMPLATE}// two"),
               "bindings": {"items": [], "title": "Second"}}),
    )
    .expect(StatusCode::CREATED)
    .await;
    page
}

fn publish_path(game: &str, page: &str) -> String {
    format!("/v1/games/{game}/custom-pages/{page}/publish-request")
}

/// Asks to publish `version` of `page` as the admin; returns the pending approval.
async fn request(app: &TestApp, game: &str, page: &str, version: u32) -> Value {
    app.post(publish_path(game, page), json!({ "version": version }))
        .expect(StatusCode::CREATED)
        .await
}

async fn status(app: &TestApp, game: &str, key: &str) -> Value {
    app.get(format!("/v1/sdk/status/{game}"))
        .token(key)
        .expect(StatusCode::OK)
        .await
}

#[tokio::test]
async fn approving_a_publish_request_pushes_the_page_to_clients_on_every_node() {
    let a = spawn_app_on(shared_backend()).await;
    let b = a.spawn_peer().await;
    let game = a.create_game().await;
    let key = a.sdk_key(&game, "production").await;
    let page = two_versions(&a, &game).await;

    let approval = request(&a, &game, &page, 2).await;
    assert_eq!(approval["kind"], "custom_page");
    assert_eq!(approval["status"], "pending");
    assert_eq!(approval["page"], json!({"page_id": page, "version": 2}));
    assert!(approval.get("offer").is_none());
    let id = approval["approval_id"].as_str().expect("id").to_owned();
    let listed = a
        .get_json(format!("/v1/games/{game}/approvals?status=pending"))
        .await;
    let pending = listed["approvals"].as_array().expect("approvals");
    assert!(
        pending
            .iter()
            .any(|x| x["approval_id"] == id.as_str() && x["kind"] == "custom_page"),
        "{listed}"
    );
    // Nothing is published before the decision; a simulation is for offers only.
    let before = status(&a, &game, &key).await;
    assert_eq!(before["custom_page"], Value::Null);
    a.post(format!("/v1/approvals/{id}/simulate"), json!({}))
        .expect_error(StatusCode::CONFLICT, "conflict")
        .await;

    let mut on_a = connect(&a, &key, Fmt::Json).await;
    assert_eq!(on_a.hello(fresh(&game), None).await["type"], "ready");
    let mut on_b = connect(&b, &key, Fmt::MsgPack).await;
    let ready = on_b.hello(fresh(&game), None).await;
    assert_eq!(ready["type"], "ready");
    let version_before = ready["config_version"].as_u64().expect("version");

    let approved = a
        .post(format!("/v1/approvals/{id}/approve"), json!({}))
        .expect(StatusCode::OK)
        .await;
    assert_eq!(approved["status"], "approved");
    assert_eq!(approved["decided_by"], "alice");

    let expected = json!({"page_id": page, "version": 2,
                          "template": format!("{TEMPLATE}// two"),
                          "bindings": {"items": [], "title": "Second"}});
    for client in [&mut on_a, &mut on_b] {
        let config = client.recv_type("config").await;
        assert_eq!(config["custom_page"], expected, "{config}");
        assert!(config["config_version"].as_u64().expect("version") > version_before);
    }
    for node in [&a, &b] {
        let now = status(node, &game, &key).await;
        assert_eq!(now["custom_page"], expected);
        assert!(now["config_version"].as_u64().expect("version") > version_before);
    }
    // A second decision is a 409, as for offers.
    a.post(format!("/v1/approvals/{id}/reject"), json!({}))
        .expect_error(StatusCode::CONFLICT, "conflict")
        .await;
    b.post(format!("/v1/approvals/{id}/approve"), json!({}))
        .expect_error(StatusCode::CONFLICT, "conflict")
        .await;
}

#[tokio::test]
async fn rejecting_leaves_the_published_page_unchanged() {
    let app = spawn_app().await;
    let game = app.create_game().await;
    let key = app.sdk_key(&game, "production").await;
    let page = two_versions(&app, &game).await;
    let first = request(&app, &game, &page, 1).await;
    app.post(
        format!(
            "/v1/approvals/{}/reject",
            first["approval_id"].as_str().expect("id")
        ),
        json!({"reason": "not yet"}),
    )
    .expect(StatusCode::OK)
    .await;
    assert_eq!(status(&app, &game, &key).await["custom_page"], Value::Null);

    // Version 1 published, then a rejected request for version 2 keeps version 1.
    let again = request(&app, &game, &page, 1).await;
    app.post(
        format!(
            "/v1/approvals/{}/approve",
            again["approval_id"].as_str().expect("id")
        ),
        json!({}),
    )
    .expect(StatusCode::OK)
    .await;
    let second = request(&app, &game, &page, 2).await;
    let rejected = app
        .post(
            format!(
                "/v1/approvals/{}/reject",
                second["approval_id"].as_str().expect("id")
            ),
            json!({}),
        )
        .expect(StatusCode::OK)
        .await;
    assert_eq!(rejected["status"], "rejected");
    let published = status(&app, &game, &key).await["custom_page"].clone();
    assert_eq!(published["version"], 1);
    assert_eq!(published["bindings"]["title"], "First");
}

#[tokio::test]
async fn only_a_developer_of_the_studio_can_ask_to_publish_and_decide() {
    let app = spawn_app().await;
    let game = app.create_game().await;
    let page = two_versions(&app, &game).await;
    let (authoring, _) = app.authoring_key(&game).await;
    let viewer = app.token("studio-a", Role::Viewer);
    let developer = app.token("studio-a", Role::Developer);
    let stranger = app.token("studio-b", Role::Admin);
    let path = publish_path(&game, &page);

    // An authoring key never publishes: not the request, not the decisions.
    app.post(&path, json!({"version": 1}))
        .token(&authoring)
        .expect(StatusCode::FORBIDDEN)
        .await;
    app.post(&path, json!({"version": 1}))
        .token(&viewer)
        .expect_error(StatusCode::FORBIDDEN, "forbidden")
        .await;
    app.post(&path, json!({"version": 1}))
        .token(&stranger)
        .expect_error(StatusCode::NOT_FOUND, "not_found")
        .await;
    // An unknown page or version names nothing.
    app.post(&path, json!({"version": 3}))
        .expect_error(StatusCode::NOT_FOUND, "not_found")
        .await;
    app.post(
        publish_path(&game, &uuid::Uuid::new_v4().to_string()),
        json!({"version": 1}),
    )
    .expect_error(StatusCode::NOT_FOUND, "not_found")
    .await;
    app.post(&path, json!({"version": 0}))
        .expect_error(StatusCode::NOT_FOUND, "not_found")
        .await;
    app.post(&path, json!({"version": "one"}))
        .expect_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_failed")
        .await;

    let approval = app
        .post(&path, json!({"version": 1}))
        .token(&developer)
        .expect(StatusCode::CREATED)
        .await;
    let id = approval["approval_id"].as_str().expect("id");
    for decision in ["approve", "reject"] {
        let url = format!("/v1/approvals/{id}/{decision}");
        app.post(&url, json!({}))
            .token(&authoring)
            .expect(StatusCode::FORBIDDEN)
            .await;
        app.post(&url, json!({}))
            .token(&viewer)
            .expect_error(StatusCode::FORBIDDEN, "forbidden")
            .await;
        app.post(&url, json!({}))
            .token(&stranger)
            .expect_error(StatusCode::NOT_FOUND, "not_found")
            .await;
    }
    app.get(format!("/v1/approvals/{id}"))
        .token(&stranger)
        .expect_error(StatusCode::NOT_FOUND, "not_found")
        .await;
    // Still pending: none of those decided it.
    let still = app.get_json(format!("/v1/approvals/{id}")).await;
    assert_eq!(still["status"], "pending");
    let approved = app
        .post(format!("/v1/approvals/{id}/approve"), json!({}))
        .token(&developer)
        .expect(StatusCode::OK)
        .await;
    assert_eq!(approved["decided_by"], "user");
}

/// Bindings of the shop page showing `item`.
fn shop_bindings(item: &str) -> Value {
    json!({"items": [item], "title": "Spring sale", "discount": 40})
}

/// Saves a new page of `game`; returns its id (version 1).
async fn save(app: &TestApp, game: &str, template: &str, bindings: Value) -> String {
    let saved = app
        .post(
            format!("/v1/games/{game}/custom-pages/draft"),
            json!({"template": template, "bindings": bindings}),
        )
        .expect(StatusCode::CREATED)
        .await;
    saved["page_id"].as_str().expect("page").to_owned()
}

/// The gates of the blockers a `page_invalid` refusal carries.
fn refused_gates(refusal: &Value) -> Vec<String> {
    let details = &refusal["error"]["details"];
    assert_eq!(details["valid"], false, "{refusal}");
    details["blockers"]
        .as_array()
        .expect("blockers")
        .iter()
        .map(|b| b["gate"].as_str().expect("gate").to_owned())
        .collect()
}

async fn approvals_of(app: &TestApp, game: &str) -> Vec<Value> {
    app.get_json(format!("/v1/games/{game}/approvals")).await["approvals"]
        .as_array()
        .expect("approvals")
        .clone()
}

#[tokio::test]
async fn a_version_the_validator_blocks_is_never_queued_nor_published() {
    let app = spawn_app().await;
    let game = app.create_game().await;
    app.bulk(&game, store_shelf()).expect(StatusCode::OK).await;
    let key = app.sdk_key(&game, "production").await;
    // A valid page published first, so that "unchanged" is a page, not the absence of one.
    let good = save(&app, &game, SHOP_PAGE, shop_bindings("gems_500")).await;
    let approval = request(&app, &game, &good, 1).await;
    app.post(
        format!(
            "/v1/approvals/{}/approve",
            approval["approval_id"].as_str().expect("id")
        ),
        json!({}),
    )
    .expect(StatusCode::OK)
    .await;
    let before = status(&app, &game, &key).await;
    assert_eq!(before["custom_page"]["page_id"], good.as_str());

    let io = |p: &str| {
        p.replacen(
            "import 'package:offer_sdk/offer_sdk.dart';",
            "import 'dart:io';",
            1,
        )
    };
    let http = |p: &str| {
        p.replacen(
            "    final title = offer['title'] as String;",
            "    final title = offer['title'] as String;\n    final client = HttpClient();",
            1,
        )
    };
    let unbalanced = |p: &str| {
        p.replacen(
            "const SizedBox(height: 32),",
            "const SizedBox(height: 32,",
            1,
        )
    };
    let body = "Q2x7Rr0aZ81bKp4mW3nVt6yEu5sD";
    let secret = SHOP_PAGE.replacen(
        "'${offer['discount']}% off today only'",
        &format!("'ofr_auth_{body}'"),
        1,
    );
    let cases = [
        ("dart:io", io(SHOP_PAGE), "gems_500", "import_not_allowed"),
        ("HttpClient(", http(SHOP_PAGE), "gems_500", "network_call"),
        (
            "unbalanced",
            unbalanced(SHOP_PAGE),
            "gems_500",
            "unbalanced_delimiters",
        ),
        (
            "unknown item",
            SHOP_PAGE.to_owned(),
            "no_such_item",
            "unknown_item",
        ),
        (
            "key in a string",
            secret,
            "gems_500",
            "secret_pattern_found",
        ),
        (
            "all at once",
            unbalanced(&http(&io(SHOP_PAGE))),
            "no_such_item",
            "network_call",
        ),
    ];
    for (name, template, item, gate) in cases {
        let page = save(&app, &game, &template, shop_bindings(item)).await;
        let refused = app
            .post(publish_path(&game, &page), json!({"version": 1}))
            .expect_error(StatusCode::UNPROCESSABLE_ENTITY, "page_invalid")
            .await;
        let gates = refused_gates(&refused);
        assert!(gates.iter().any(|g| g == gate), "{name}: {refused}");
        assert!(!refused.to_string().contains(body), "{name}: never echoed");
        // Nothing queued: the one approval is the first page's, approved.
        let all = approvals_of(&app, &game).await;
        assert_eq!(all.len(), 1, "{name}: {all:?}");
        assert_eq!(all[0]["status"], "approved");
        // Nothing published: every client still gets the first page.
        let now = status(&app, &game, &key).await;
        assert_eq!(now["custom_page"], before["custom_page"], "{name}");
        assert_eq!(now["config_version"], before["config_version"], "{name}");
    }
}

#[tokio::test]
async fn approving_a_version_that_no_longer_validates_is_refused_and_decides_nothing() {
    let app = spawn_app().await;
    let game = app.create_game().await;
    app.bulk(&game, store_shelf()).expect(StatusCode::OK).await;
    let key = app.sdk_key(&game, "production").await;
    let page = save(&app, &game, SHOP_PAGE, shop_bindings("gems_500")).await;
    let approval = request(&app, &game, &page, 1).await;
    let id = approval["approval_id"].as_str().expect("id").to_owned();

    // The item the page shows is deleted between the request and the approval.
    app.delete(format!("/v1/games/{game}/items/gems_500"))
        .expect(StatusCode::NO_CONTENT)
        .await;
    let refused = app
        .post(format!("/v1/approvals/{id}/approve"), json!({}))
        .expect_error(StatusCode::UNPROCESSABLE_ENTITY, "page_invalid")
        .await;
    assert_eq!(refused_gates(&refused), ["deleted_item"], "{refused}");
    let still = app.get_json(format!("/v1/approvals/{id}")).await;
    assert_eq!(still["status"], "pending", "{still}");
    assert!(still["decided_by"].is_null(), "{still}");
    assert_eq!(status(&app, &game, &key).await["custom_page"], Value::Null);

    // Once the item is back, the same approval publishes the version.
    let mut restored = pack("gems_500", 500, 3.99);
    restored["restore"] = json!(true);
    app.bulk(&game, json!([restored]))
        .expect(StatusCode::OK)
        .await;
    let approved = app
        .post(format!("/v1/approvals/{id}/approve"), json!({}))
        .expect(StatusCode::OK)
        .await;
    assert_eq!(approved["status"], "approved");
    let published = status(&app, &game, &key).await["custom_page"].clone();
    assert_eq!(published["page_id"], page.as_str());
    assert_eq!(published["version"], 1);
}
