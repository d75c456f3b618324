//! Operations endpoints and the OpenAPI document.

use reqwest::StatusCode;
use serde_json::Value;

use super::helpers::spawn_app;

#[tokio::test]
async fn health_ready_metrics_and_openapi() {
    let app = spawn_app().await;
    let r = app
        .client
        .get(app.url("/healthz"))
        .send()
        .await
        .expect("req");
    assert_eq!(r.status(), StatusCode::OK);
    let r = app
        .client
        .get(app.url("/readyz"))
        .send()
        .await
        .expect("req");
    assert_eq!(r.status(), StatusCode::OK);
    app.create_game().await;
    let metrics = app
        .client
        .get(app.url("/metrics"))
        .send()
        .await
        .expect("req")
        .text()
        .await
        .expect("text");
    assert!(
        metrics
            .contains("http_requests_total{method=\"POST\",route=\"/v1/games\",status=\"201\"} 1"),
        "{metrics}"
    );
    assert!(metrics.contains("http_request_duration_seconds_bucket"));
    let doc: Value = app
        .client
        .get(app.url("/v1/openapi.json"))
        .send()
        .await
        .expect("req")
        .json()
        .await
        .expect("json");
    let paths = doc["paths"].as_object().expect("paths");
    for p in [
        "/v1/games",
        "/v1/games/{game_id}",
        "/v1/games/{game_id}/items",
        "/v1/games/{game_id}/items/bulk",
        "/v1/games/{game_id}/items/{item_id}",
        "/v1/games/{game_id}/assets",
        "/v1/games/{game_id}/sdk-keys",
        "/v1/games/{game_id}/authoring-keys",
    ] {
        assert!(paths.contains_key(p), "missing {p}");
    }
    assert!(doc["components"]["schemas"]["Item"].is_object());
    assert!(doc["components"]["schemas"]["ErrorBody"].is_object());
}
