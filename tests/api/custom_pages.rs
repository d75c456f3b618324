//! Custom-page drafts through the real HTTP surface: every save a new immutable version,
//! concurrent saves numbered apart, sizes, who may save and read (the game's authoring key,
//! the studio's users by role), and nothing of another studio or game.

use reqwest::StatusCode;
use serde_json::{Value, json};

use super::helpers::{Role, TestApp, spawn_app};

const TEMPLATE: &str = "import 'package:flutter/widgets.dart';\n\nclass Page extends StatelessWidget {\n  const Page({super.key});\n  @override\n  Widget build(BuildContext context) => const Text('hi');\n}\n";

fn draft_path(game: &str) -> String {
    format!("/v1/games/{game}/custom-pages/draft")
}

/// Saves a draft as the admin; returns `(page_id, version)`.
async fn save(app: &TestApp, game: &str, body: Value) -> (String, u64) {
    let saved = app
        .post(draft_path(game), body)
        .expect(StatusCode::CREATED)
        .await;
    (
        saved["page_id"].as_str().expect("page id").to_owned(),
        saved["version"].as_u64().expect("version"),
    )
}

#[tokio::test]
async fn every_save_is_a_new_immutable_version() {
    let app = spawn_app().await;
    let game = app.create_game().await;
    let (page, first) = save(
        &app,
        &game,
        json!({"template": TEMPLATE, "bindings": {"items": ["sword"], "title": "Hi"}}),
    )
    .await;
    assert_eq!(first, 1);
    for (expected, title) in [(2, "Second"), (3, "Third")] {
        let (same, version) = save(
            &app,
            &game,
            json!({"page_id": page, "template": format!("{TEMPLATE}// {title}"),
                   "bindings": {"title": title, "discount": 20}}),
        )
        .await;
        assert_eq!((same.as_str(), version), (page.as_str(), expected));
    }
    let listed = app
        .get_json(format!("/v1/games/{game}/custom-pages/{page}"))
        .await;
    assert_eq!(listed["page_id"], page.as_str());
    assert_eq!(listed["latest_version"], 3);
    let versions = listed["versions"].as_array().expect("versions");
    assert_eq!(
        versions
            .iter()
            .map(|v| v["version"].clone())
            .collect::<Vec<_>>(),
        [json!(1), json!(2), json!(3)]
    );
    for v in versions {
        assert_eq!(v["created_by"], "alice");
        assert!(v["created_at"].is_string());
        assert!(v["size"].as_u64().expect("size") > TEMPLATE.len() as u64);
        assert!(v.get("template").is_none(), "a listing carries no content");
    }
    // Each version reads back as saved, unchanged by the later ones.
    let one = app
        .get_json(format!("/v1/games/{game}/custom-pages/{page}/versions/1"))
        .await;
    assert_eq!(one["template"], TEMPLATE);
    assert_eq!(one["bindings"], json!({"items": ["sword"], "title": "Hi"}));
    assert_eq!(one["version"], 1);
    let two = app
        .get_json(format!("/v1/games/{game}/custom-pages/{page}/versions/2"))
        .await;
    assert_eq!(two["bindings"], json!({"title": "Second", "discount": 20}));
    for missing in ["4", "0", "x", "-1"] {
        app.get(format!(
            "/v1/games/{game}/custom-pages/{page}/versions/{missing}"
        ))
        .expect_error(StatusCode::NOT_FOUND, "not_found")
        .await;
    }
    // The versions also read at the draft path, and the page in the game's list.
    let by_query = app
        .get_json(format!("{}?page_id={page}", draft_path(&game)))
        .await;
    assert_eq!(by_query, listed);
    let (second_page, _) = save(&app, &game, json!({"template": TEMPLATE, "bindings": {}})).await;
    let pages = app.get_json(format!("/v1/games/{game}/custom-pages")).await;
    let ids: Vec<&str> = pages["pages"]
        .as_array()
        .expect("pages")
        .iter()
        .map(|p| p["page_id"].as_str().expect("page id"))
        .collect();
    assert_eq!(
        ids,
        [second_page.as_str(), page.as_str()],
        "newest save first"
    );
    assert_eq!(pages["pages"][1], listed);
    app.get(draft_path(&game))
        .expect_error(StatusCode::BAD_REQUEST, "bad_request")
        .await;
    // A page id this game never had is a 404, and writes nothing.
    let unknown = uuid::Uuid::new_v4();
    app.post(
        draft_path(&game),
        json!({"page_id": unknown, "template": TEMPLATE, "bindings": {}}),
    )
    .expect_error(StatusCode::NOT_FOUND, "not_found")
    .await;
    app.get(format!("/v1/games/{game}/custom-pages/{unknown}"))
        .expect_error(StatusCode::NOT_FOUND, "not_found")
        .await;
    app.get(format!("{}?page_id={unknown}", draft_path(&game)))
        .expect_error(StatusCode::NOT_FOUND, "not_found")
        .await;
}

#[tokio::test]
async fn concurrent_saves_get_different_versions() {
    let app = spawn_app().await;
    let game = app.create_game().await;
    let (page, _) = save(&app, &game, json!({"template": TEMPLATE, "bindings": {}})).await;
    let saves = (0..10).map(|i| {
        app.post(
            draft_path(&game),
            json!({"page_id": page, "template": format!("{TEMPLATE}// {i}"), "bindings": {}}),
        )
        .expect(StatusCode::CREATED)
    });
    let mut versions: Vec<u64> = futures::future::join_all(saves)
        .await
        .iter()
        .map(|saved| saved["version"].as_u64().expect("version"))
        .collect();
    versions.sort_unstable();
    assert_eq!(versions, (2..=11).collect::<Vec<u64>>());
    let listed = app
        .get_json(format!("/v1/games/{game}/custom-pages/{page}"))
        .await;
    assert_eq!(listed["versions"].as_array().expect("versions").len(), 11);
}

#[tokio::test]
async fn sizes_and_shapes_are_checked_before_anything_is_written() {
    let app = spawn_app().await;
    let game = app.create_game().await;
    let (page, _) = save(&app, &game, json!({"template": TEMPLATE, "bindings": {}})).await;
    // The template is not validated here beyond its size: anything up to 64 KiB is kept.
    let largest = "x".repeat(64 * 1024);
    let (_, version) = save(
        &app,
        &game,
        json!({"page_id": page, "template": largest, "bindings": {}}),
    )
    .await;
    assert_eq!(version, 2);
    let big_bindings = json!({"text": "y".repeat(16 * 1024)});
    for (body, code, status) in [
        (
            json!({"page_id": page, "template": format!("{largest}x"), "bindings": {}}),
            "payload_too_large",
            StatusCode::PAYLOAD_TOO_LARGE,
        ),
        (
            json!({"page_id": page, "template": TEMPLATE, "bindings": big_bindings}),
            "payload_too_large",
            StatusCode::PAYLOAD_TOO_LARGE,
        ),
        (
            json!({"page_id": page, "template": TEMPLATE, "bindings": ["sword"]}),
            "validation_failed",
            StatusCode::UNPROCESSABLE_ENTITY,
        ),
        (
            json!({"page_id": page, "template": TEMPLATE, "bindings": "x"}),
            "validation_failed",
            StatusCode::UNPROCESSABLE_ENTITY,
        ),
        (
            json!({"page_id": page, "bindings": {}}),
            "validation_failed",
            StatusCode::UNPROCESSABLE_ENTITY,
        ),
        (
            json!({"page_id": page, "template": 7, "bindings": {}}),
            "validation_failed",
            StatusCode::UNPROCESSABLE_ENTITY,
        ),
        (
            json!({"page_id": "not-a-page", "template": TEMPLATE, "bindings": {}}),
            "validation_failed",
            StatusCode::UNPROCESSABLE_ENTITY,
        ),
    ] {
        app.post(draft_path(&game), body)
            .expect_error(status, code)
            .await;
    }
    let listed = app
        .get_json(format!("/v1/games/{game}/custom-pages/{page}"))
        .await;
    assert_eq!(listed["latest_version"], 2);
}

#[tokio::test]
async fn the_games_authoring_key_and_the_studios_users_by_role() {
    let app = spawn_app().await;
    let game = app.create_game().await;
    let other_game = app.create_game().await;
    let (key, key_id) = app.authoring_key(&game).await;
    let saved = app
        .post(
            draft_path(&game),
            json!({"template": TEMPLATE, "bindings": {}}),
        )
        .token(&key)
        .expect(StatusCode::CREATED)
        .await;
    let page = saved["page_id"].as_str().expect("page");
    let page_path = format!("/v1/games/{game}/custom-pages/{page}");
    let listed = app.get(&page_path).token(&key).expect(StatusCode::OK).await;
    assert_eq!(
        listed["versions"][0]["created_by"],
        format!("authoring_key:{key_id}")
    );
    app.get(format!("{page_path}/versions/1"))
        .token(&key)
        .expect(StatusCode::OK)
        .await;
    let pages = app
        .get(format!("/v1/games/{game}/custom-pages"))
        .token(&key)
        .expect(StatusCode::OK)
        .await;
    assert_eq!(pages["pages"][0]["page_id"], page);
    app.get(format!("/v1/games/{other_game}/custom-pages"))
        .token(&key)
        .expect_error(StatusCode::NOT_FOUND, "not_found")
        .await;
    // Another game's key reaches nothing of this game; this key nothing of another game.
    let (other_key, _) = app.authoring_key(&other_game).await;
    app.get(&page_path)
        .token(&other_key)
        .expect_error(StatusCode::NOT_FOUND, "not_found")
        .await;
    app.post(
        draft_path(&game),
        json!({"page_id": page, "template": TEMPLATE, "bindings": {}}),
    )
    .token(&other_key)
    .expect_error(StatusCode::NOT_FOUND, "not_found")
    .await;
    // Nor does the page id under another game of the same studio.
    app.post(
        draft_path(&other_game),
        json!({"page_id": page, "template": TEMPLATE, "bindings": {}}),
    )
    .expect_error(StatusCode::NOT_FOUND, "not_found")
    .await;
    app.get(format!("/v1/games/{other_game}/custom-pages/{page}"))
        .expect_error(StatusCode::NOT_FOUND, "not_found")
        .await;
    // An SDK key is the wrong credential.
    let sdk = app.sdk_key(&game, "production").await;
    app.get(&page_path)
        .token(&sdk)
        .expect_error(StatusCode::FORBIDDEN, "wrong_credential")
        .await;
    // A viewer reads but does not save; a developer saves.
    let viewer = app.token("studio-a", Role::Viewer);
    app.get(&page_path)
        .token(&viewer)
        .expect(StatusCode::OK)
        .await;
    app.post(
        draft_path(&game),
        json!({"page_id": page, "template": TEMPLATE, "bindings": {}}),
    )
    .token(&viewer)
    .expect_error(StatusCode::FORBIDDEN, "forbidden")
    .await;
    let developer = app.token("studio-a", Role::Developer);
    let saved = app
        .post(
            draft_path(&game),
            json!({"page_id": page, "template": TEMPLATE, "bindings": {}}),
        )
        .token(&developer)
        .expect(StatusCode::CREATED)
        .await;
    assert_eq!(saved["version"], 2);
    // Another studio's users find nothing.
    let stranger = app.token("studio-b", Role::Admin);
    app.get(&page_path)
        .token(&stranger)
        .expect_error(StatusCode::NOT_FOUND, "not_found")
        .await;
    app.get(format!("{page_path}/versions/1"))
        .token(&stranger)
        .expect_error(StatusCode::NOT_FOUND, "not_found")
        .await;
    app.post(
        draft_path(&game),
        json!({"template": TEMPLATE, "bindings": {}}),
    )
    .token(&stranger)
    .expect_error(StatusCode::NOT_FOUND, "not_found")
    .await;
}
