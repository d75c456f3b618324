//! Operations endpoints (health, readiness, Prometheus metrics) and the OpenAPI document,
//! all open without a credential.

use reqwest::StatusCode;

use super::helpers::{Backend, spawn_app, spawn_tuned};

#[tokio::test]
async fn health_ready_metrics_and_openapi() {
    let app = spawn_app().await;
    for probe in ["/healthz", "/readyz"] {
        app.get(probe).no_token().expect(StatusCode::OK).await;
    }
    app.create_game().await;
    let metrics = app
        .get("/metrics")
        .no_token()
        .send()
        .await
        .text()
        .await
        .expect("text");
    assert!(
        metrics
            .contains("http_requests_total{method=\"POST\",route=\"/v1/games\",status=\"201\"} 1"),
        "{metrics}"
    );
    assert!(metrics.contains("http_request_duration_seconds_bucket"));
    // Every decision reached the store writer's queue.
    assert!(
        metrics.contains("\noffer_decisions_unstored_total 0\n"),
        "{metrics}"
    );
    let doc = app
        .get("/v1/openapi.json")
        .no_token()
        .expect(StatusCode::OK)
        .await;
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

#[tokio::test]
async fn nothing_printed_looks_unfinished() {
    let app = spawn_app().await;
    let doc = app
        .get("/v1/openapi.json")
        .no_token()
        .expect(StatusCode::OK)
        .await;
    assert!(doc["info"].get("license").is_none(), "{}", doc["info"]);
    let text = doc.to_string();
    // Citations of outside documents ("spec" followed by a section number, "the contract",
    // "the wizard") instead of the behaviour itself.
    let sections = (1..=9).map(|n| format!("spec {n}"));
    let words = ["wizard", "contract"].map(String::from);
    for stale in sections.chain(words) {
        assert!(
            !text.contains(&stale),
            "the OpenAPI document cites `{stale}`"
        );
    }
    // A kill switch never changed dates from the game's creation, not from 1970.
    let game = app.create_game().await;
    let created = app.get_json(format!("/v1/games/{game}")).await["created_at"].clone();
    let ks = app.get_json(format!("/v1/games/{game}/kill-switch")).await;
    assert_eq!(ks["level"], 0);
    assert_eq!(ks["updated_at"], created);
}

#[tokio::test]
async fn metrics_are_open_on_loopback_only_or_behind_their_token() {
    // Beyond loopback without a token: closed.
    let wide = spawn_tuned(Backend::Embedded, |s| {
        s.server.bind = "0.0.0.0:0".parse().expect("addr");
    })
    .await;
    wide.get("/metrics")
        .no_token()
        .expect_error(StatusCode::UNAUTHORIZED, "unauthorized")
        .await;
    // With a token: only that token opens it.
    let guarded = spawn_tuned(Backend::Embedded, |s| {
        s.metrics.token = "scrape-secret-0123456789".into();
    })
    .await;
    for refused in [
        guarded.get("/metrics").no_token(),
        guarded.get("/metrics").token("wrong"),
    ] {
        refused
            .expect_error(StatusCode::UNAUTHORIZED, "unauthorized")
            .await;
    }
    let r = guarded
        .get("/metrics")
        .token("scrape-secret-0123456789")
        .send()
        .await;
    assert_eq!(r.status(), StatusCode::OK);
    assert!(r.text().await.expect("text").contains("# TYPE"));
}
