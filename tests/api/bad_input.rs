//! Bad input gets a clear 4xx in the error shape and changes nothing.

use reqwest::StatusCode;
use serde_json::json;

use super::helpers::{expect_error, item, spawn_app};

#[tokio::test]
async fn bad_bodies_are_refused_and_write_nothing() {
    let app = spawn_app().await;
    let game = app.create_game().await;
    let path = app.url(&format!("/v1/games/{game}/items/bulk"));
    // Malformed JSON.
    let r = app
        .client
        .post(&path)
        .bearer_auth(&app.admin)
        .header("content-type", "application/json")
        .body("{\"items\": [")
        .send()
        .await
        .expect("req");
    expect_error(r, StatusCode::BAD_REQUEST, "bad_request").await;
    // Wrong content type.
    let r = app
        .client
        .post(&path)
        .bearer_auth(&app.admin)
        .header("content-type", "text/plain")
        .body("{\"items\": []}")
        .send()
        .await
        .expect("req");
    expect_error(
        r,
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        "unsupported_media_type",
    )
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
        let r = app
            .post(
                &format!("/v1/games/{game}/items/bulk"),
                &app.admin,
                body.clone(),
            )
            .await;
        assert_eq!(r.status(), StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        expect_error(r, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
    }
    // Too large a body.
    let huge = "x".repeat(3 << 20);
    // Its own client: the server drops a connection whose body it refused to read.
    let r = reqwest::Client::new()
        .post(&path)
        .bearer_auth(&app.admin)
        .header("content-type", "application/json")
        .body(format!("{{\"items\": [], \"pad\": \"{huge}\"}}"))
        .send()
        .await
        .expect("req");
    expect_error(r, StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large").await;
    assert!(app.items(&game).await.is_empty());
    // Bad ids and paths.
    expect_error(
        app.get("/v1/games/not-a-uuid", &app.admin).await,
        StatusCode::NOT_FOUND,
        "not_found",
    )
    .await;
    expect_error(
        app.get("/v1/nothing-here", &app.admin).await,
        StatusCode::NOT_FOUND,
        "not_found",
    )
    .await;
    let r = app
        .client
        .put(app.url("/v1/games"))
        .bearer_auth(&app.admin)
        .send()
        .await
        .expect("req");
    expect_error(r, StatusCode::METHOD_NOT_ALLOWED, "method_not_allowed").await;
    let r = app
        .get(&format!("/v1/games/{game}/items?limit=abc"), &app.admin)
        .await;
    expect_error(r, StatusCode::BAD_REQUEST, "bad_request").await;
}
