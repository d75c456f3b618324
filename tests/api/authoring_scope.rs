//! What an authoring key reaches, over every operation of the OpenAPI document (read from
//! the running server, so a new route is covered the day it is added): only the custom-page
//! authoring paths (drafts, validation, previews and their screenshots, with a real preview
//! of the game in the path) and its own game's catalogue read (items and their art). Everything else
//! that takes a credential answers 403, even with the key's own game and real ids in the
//! path. Its 90 days (on the key store's clock, moved forward), and revocation through
//! another node, too.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use super::fixtures::{item, png};
use super::helpers::{TestApp, shared_backend, spawn_app, spawn_app_on};

/// A page that renders: a button for the bound item.
const PAGE: &str = "class Page extends StatelessWidget {\n  final OfferData offer;\n  Widget build(BuildContext context) => Center(child: OfferButton(item: offer.items[0]));\n}\n";

/// The operations an authoring key may call, as (method, path template). The custom-page
/// paths are allowed by prefix below, except publishing and confirming a cloud run.
const ALLOWED: [(&str, &str); 3] = [
    ("GET", "/v1/games/{game_id}/items"),
    // The list of the game's pages, beside the pages themselves.
    ("GET", "/v1/games/{game_id}/custom-pages"),
    // Item art belongs to the catalogue read: items name their art.
    ("GET", "/v1/games/{game_id}/assets/{asset_id}"),
];

/// Whether the key may call `method path`.
fn allowed(method: &str, path: &str) -> bool {
    if ALLOWED.contains(&(method, path)) {
        return true;
    }
    path.starts_with("/v1/games/{game_id}/custom-pages/")
        && !path.ends_with("/publish-request")
        && !path.ends_with("/confirm")
}

/// Whether an operation takes no credential at all (the probes, the metrics on loopback,
/// device sign-in): a key is no different from nothing there.
fn open(op: &Value) -> bool {
    op["security"]
        .as_array()
        .is_some_and(|s| s.contains(&json!({})))
}

/// Real ids of one game: its id, an item, its art, the key's id, a custom page, its first
/// version, a built preview of it and one of its screenshots. Any other path parameter gets
/// a fresh UUID.
async fn real_ids(app: &TestApp, game: &str, key_id: &str) -> BTreeMap<&'static str, String> {
    app.bulk(game, json!([item("sword", "equipment", 4.99)]))
        .expect(StatusCode::OK)
        .await;
    let asset = app
        .call(Method::POST, format!("/v1/games/{game}/assets"))
        .raw("image/png", png(8, 8))
        .expect(StatusCode::CREATED)
        .await;
    let page = app
        .post(
            format!("/v1/games/{game}/custom-pages/draft"),
            json!({"template": PAGE, "bindings": {"items": ["sword"]}}),
        )
        .expect(StatusCode::CREATED)
        .await;
    let preview = app
        .post(
            format!("/v1/games/{game}/custom-pages/preview"),
            json!({"page_id": page["page_id"], "version": 1}),
        )
        .expect(StatusCode::ACCEPTED)
        .await;
    let preview_id = preview["preview_id"].as_str().expect("preview").to_owned();
    let deadline = Instant::now() + Duration::from_secs(120);
    while app
        .get_json(format!(
            "/v1/games/{game}/custom-pages/preview/{preview_id}"
        ))
        .await["status"]
        != "ready"
    {
        assert!(Instant::now() < deadline, "the preview never became ready");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    BTreeMap::from([
        ("game_id", game.to_owned()),
        ("item_id", "sword".to_owned()),
        (
            "asset_id",
            asset["asset_id"].as_str().expect("asset").to_owned(),
        ),
        ("key_id", key_id.to_owned()),
        (
            "page_id",
            page["page_id"].as_str().expect("page").to_owned(),
        ),
        ("version", "1".to_owned()),
        ("preview_id", preview_id),
        ("size", "1080x1920.png".to_owned()),
    ])
}

/// `template` with each `{name}` replaced from `ids` (a fresh UUID for an unknown name).
fn fill(template: &str, ids: &BTreeMap<&'static str, String>) -> String {
    let mut out = String::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let close = rest[open..].find('}').expect("closing brace") + open;
        let name = &rest[open + 1..close];
        out.push_str(
            &ids.get(name)
                .cloned()
                .unwrap_or_else(|| uuid::Uuid::new_v4().to_string()),
        );
        rest = &rest[close + 1..];
    }
    out.push_str(rest);
    out
}

#[tokio::test]
async fn an_authoring_key_reaches_only_the_authoring_paths_and_its_catalogue() {
    let app = spawn_app().await;
    let game = app.create_game().await;
    let other = app.create_game().await;
    let (key, key_id) = app.authoring_key(&game).await;
    let ids = real_ids(&app, &game, &key_id).await;
    let mut elsewhere = ids.clone();
    elsewhere.insert("game_id", other.clone());
    let doc = app.get_json("/v1/openapi.json").await;
    let mut refused = 0;
    let mut reached = 0;
    for (template, item) in doc["paths"].as_object().expect("paths") {
        for (method, op) in item.as_object().expect("path item") {
            if open(op) {
                continue;
            }
            let method = Method::from_bytes(method.to_uppercase().as_bytes()).expect("method");
            let path = fill(template, &ids);
            let call = || {
                let call = app.call(method.clone(), &path).token(&key);
                if method == Method::GET || method == Method::DELETE {
                    call
                } else {
                    call.json(json!({}))
                }
            };
            let id = format!("{method} {template}");
            let status = call().send().await.status();
            if allowed(method.as_str(), template) {
                assert!(
                    ![StatusCode::UNAUTHORIZED, StatusCode::FORBIDDEN].contains(&status),
                    "{id} refuses the authoring key ({status})"
                );
                // The same operation on another game of the studio names nothing.
                if template.contains("{game_id}") {
                    let there = fill(template, &elsewhere);
                    let mut call = app.call(method.clone(), &there).token(&key);
                    if method != Method::GET && method != Method::DELETE {
                        call = call.json(json!({}));
                    }
                    call.expect_error(StatusCode::NOT_FOUND, "not_found").await;
                }
                reached += 1;
            } else {
                let body = call().expect(StatusCode::FORBIDDEN).await;
                assert!(
                    ["wrong_credential", "forbidden"]
                        .contains(&body["error"]["code"].as_str().unwrap_or_default()),
                    "{id} answered {body}"
                );
                refused += 1;
            }
        }
    }
    assert!(reached >= 5, "only {reached} allowed operations found");
    assert!(refused >= 40, "only {refused} refused operations found");
}

#[tokio::test]
async fn an_authoring_key_revoked_on_one_node_is_refused_on_another() {
    let a = spawn_app_on(shared_backend()).await;
    let b = a.spawn_peer().await;
    let game = a.create_game().await;
    let (key, key_id) = a.authoring_key(&game).await;
    let items = format!("/v1/games/{game}/items");
    // Node B has resolved (and cached) the key before it is revoked on node A.
    b.get(&items).token(&key).expect(StatusCode::OK).await;
    a.delete(format!("/v1/games/{game}/authoring-keys/{key_id}"))
        .expect(StatusCode::NO_CONTENT)
        .await;
    a.get(&items)
        .token(&key)
        .expect_error(StatusCode::UNAUTHORIZED, "unauthorized")
        .await;
    // The bus carries the revocation to B; its cache must not keep serving the key.
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let status = b.get(&items).token(&key).send().await.status();
        if status == StatusCode::UNAUTHORIZED {
            break;
        }
        assert_eq!(status, StatusCode::OK);
        assert!(
            Instant::now() < deadline,
            "node B still takes the revoked key"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn an_authoring_key_lives_its_90_days_then_asks_to_sign_in_again() {
    let app = spawn_app().await;
    let game = app.create_game().await;
    let (key, _) = app.authoring_key(&game).await;
    let items = format!("/v1/games/{game}/items");
    let clock = app.running.state.auth.clock();
    clock.advance(chrono::Duration::days(90) - chrono::Duration::minutes(1));
    app.get(&items).token(&key).expect(StatusCode::OK).await;
    clock.advance(chrono::Duration::minutes(1));
    let refused = app
        .get(&items)
        .token(&key)
        .expect_error(StatusCode::UNAUTHORIZED, "authoring_key_expired")
        .await;
    assert!(
        refused["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("sign in again")),
        "{refused}"
    );
    app.post(
        format!("/v1/games/{game}/custom-pages/draft"),
        json!({"template": "class Page {}", "bindings": {}}),
    )
    .token(&key)
    .expect_error(StatusCode::UNAUTHORIZED, "authoring_key_expired")
    .await;
}

#[tokio::test]
async fn a_single_node_refuses_a_revoked_authoring_key_at_once() {
    let app = spawn_app().await;
    let game = app.create_game().await;
    let (key, key_id) = app.authoring_key(&game).await;
    app.delete(format!("/v1/games/{game}/authoring-keys/{key_id}"))
        .expect(StatusCode::NO_CONTENT)
        .await;
    app.post(
        format!("/v1/games/{game}/custom-pages/draft"),
        json!({"template": "class Page {}", "bindings": {}}),
    )
    .token(&key)
    .expect_error(StatusCode::UNAUTHORIZED, "unauthorized")
    .await;
}
