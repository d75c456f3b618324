//! Bad input gets a clear 4xx in the error shape and changes nothing: malformed JSON, wrong
//! content types, invalid items, oversized bodies, unknown paths and methods, bad queries.

use reqwest::{Method, StatusCode};
use serde_json::json;

use super::fixtures::item;
use super::helpers::spawn_app;

#[tokio::test]
async fn bad_bodies_are_refused_and_write_nothing() {
    let app = spawn_app().await;
    let game = app.create_game().await;
    let bulk = format!("/v1/games/{game}/items/bulk");
    // Malformed JSON.
    app.call(Method::POST, &bulk)
        .raw("application/json", "{\"items\": [")
        .expect_error(StatusCode::BAD_REQUEST, "bad_request")
        .await;
    // Wrong content type.
    app.call(Method::POST, &bulk)
        .raw("text/plain", "{\"items\": []}")
        .expect_error(StatusCode::UNSUPPORTED_MEDIA_TYPE, "unsupported_media_type")
        .await;
    // Wrong types, unknown category, negative price, huge strings, unknown fields.
    let cases = [
        json!({"items": "nope"}),
        json!({"items": [{"item_id": "x", "item_name": "x", "category": "weapon", "price_usd": 1.0}]}),
        json!({"items": [{"item_id": "x", "item_name": "x", "category": "consumable", "price_usd": "1.0"}]}),
        json!({"items": [item("x", "consumable", -0.5)]}),
        json!({"items": [{"item_id": "x", "item_name": "x".repeat(100_000), "category": "consumable", "price_usd": 1.0}]}),
        json!({"items": [{"item_id": "Bad Id", "item_name": "x", "category": "consumable", "price_usd": 1.0}]}),
        json!({"items": [{"item_id": "x", "item_name": "x", "category": "currency", "price_usd": 1.0}]}),
        json!({"items": [{"item_id": "x", "item_name": "x", "category": "consumable", "price_usd": 1.0, "price_cents": 99}]}),
        json!({"items": [{"item_id": "x", "item_name": "x", "category": "consumable", "price_usd": 1.0, "value_usd": 5}]}),
        json!({"items": [{"item_id": "x", "item_name": "x", "category": "consumable", "price_usd": 1e300}]}),
    ];
    for body in cases {
        app.post(&bulk, body)
            .expect_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_failed")
            .await;
    }
    // Too large a body.
    let huge = "x".repeat(3 << 20);
    app.call(Method::POST, &bulk)
        .raw(
            "application/json",
            format!("{{\"items\": [], \"pad\": \"{huge}\"}}"),
        )
        .expect_error(StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large")
        .await;
    assert!(app.items(&game).await.is_empty());
    // Bad ids and paths.
    for unknown in ["/v1/games/not-a-uuid", "/v1/nothing-here"] {
        app.get(unknown)
            .expect_error(StatusCode::NOT_FOUND, "not_found")
            .await;
    }
    app.call(Method::PUT, "/v1/games")
        .expect_error(StatusCode::METHOD_NOT_ALLOWED, "method_not_allowed")
        .await;
    app.get(format!("/v1/games/{game}/items?limit=abc"))
        .expect_error(StatusCode::BAD_REQUEST, "bad_request")
        .await;
}

/// Every JSON write route of the OpenAPI document, with its path filled: `{game_id}` with a
/// real game (access is checked before the body), other parameters with values that name
/// nothing, so only the body can be refused.
async fn json_write_routes(
    app: &super::helpers::TestApp,
    game: &str,
) -> Vec<(Method, String, bool)> {
    let doc = app
        .get("/v1/openapi.json")
        .no_token()
        .expect(StatusCode::OK)
        .await;
    let mut routes = Vec::new();
    for (path, ops) in doc["paths"].as_object().expect("paths") {
        for (method, op) in ops.as_object().expect("operations") {
            let Some(schema) = op
                .pointer("/requestBody/content/application~1json/schema")
                .cloned()
            else {
                continue;
            };
            let filled = path
                .replace("{game_id}", game)
                .replace("{item_id}", "no_such_item")
                .split('/')
                .map(|part| {
                    if part.starts_with('{') {
                        uuid::Uuid::new_v4().to_string()
                    } else {
                        part.to_owned()
                    }
                })
                .collect::<Vec<_>>()
                .join("/");
            let is_array = schema["type"] == "array";
            let method = Method::from_bytes(method.to_uppercase().as_bytes()).expect("method");
            routes.push((method, filled, is_array));
        }
    }
    routes
}

#[tokio::test]
async fn a_json_body_is_one_document_of_the_right_shape() {
    let app = spawn_app().await;
    let game = app.create_game().await;
    let routes = json_write_routes(&app, &game).await;
    assert!(
        routes.len() >= 17,
        "found only {} JSON write routes",
        routes.len()
    );
    let sdk_key = app.sdk_key(&game, "production").await;
    for (method, path, is_array) in routes {
        let token = if path.starts_with("/v1/sdk/") {
            sdk_key.clone()
        } else {
            app.token("studio-a", super::helpers::Role::Admin)
        };
        let (one, wrong) = if is_array { ("[]", "{}") } else { ("{}", "[]") };
        for body in [
            format!("{one}garbage"),
            format!("{one} {one}"),
            wrong.to_owned(),
        ] {
            app.call(method.clone(), &path)
                .token(&token)
                .raw("application/json", body.clone())
                .expect_error(StatusCode::BAD_REQUEST, "bad_request")
                .await;
        }
    }
    // Nothing was created by any of them.
    let games = app.get_json("/v1/games").await;
    assert_eq!(games["games"].as_array().expect("games").len(), 1);
}
