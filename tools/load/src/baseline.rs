//! The baseline server: `POST /v1/sdk/offers/next` doing the same HTTP work as the engine
//! (bearer check, JSON body parsed into a struct, a one-item offer serialised as JSON) and
//! nothing else. Its throughput is the ceiling the engine is compared against.

use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::{Context, Result};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use chrono::{SecondsFormat, Utc};
use offer_domain::catalogue::Item;
use offer_wire::socket::TriggerContext;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::catalogue::baseline_item;

/// Seconds an offer stays valid, as the engine's default `offers.ttl_s`.
const OFFER_TTL_S: i64 = 900;

/// Body of `POST /v1/sdk/offers/next`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NextOfferRequest {
    /// The SDK session.
    pub session_id: Uuid,
    /// What happened in the game.
    pub trigger_context: TriggerContext,
}

/// The offer answered.
#[derive(Debug, Serialize)]
struct Offer<'a> {
    offer_id: Uuid,
    fallback_level: u8,
    items: &'a [Item],
    price_usd: f64,
    price_cents: i64,
    expires_at: String,
}

/// Shared state: the precomputed item.
#[derive(Clone)]
struct Baseline {
    items: Arc<[Item]>,
}

/// The baseline's router.
pub fn router() -> Router {
    let state = Baseline {
        items: Arc::from(vec![baseline_item()]),
    };
    Router::new()
        .route("/v1/sdk/offers/next", post(next_offer))
        .with_state(state)
}

/// Serves the baseline on `bind` until the process is killed.
pub async fn serve(bind: SocketAddr) -> Result<()> {
    let listener = tokio::net::TcpListener::bind(bind)
        .await
        .with_context(|| format!("binding {bind}"))?;
    eprintln!("baseline listening on {bind}");
    axum::serve(listener, router())
        .await
        .context("serving the baseline")
}

fn error(status: StatusCode, code: &str, message: &str) -> Response {
    let body = serde_json::json!({"error": {"code": code, "message": message, "details": {}}});
    (status, Json(body)).into_response()
}

async fn next_offer(
    State(state): State<Baseline>,
    headers: HeaderMap,
    body: Result<Json<NextOfferRequest>, axum::extract::rejection::JsonRejection>,
) -> Response {
    let has_bearer = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .is_some_and(|token| !token.is_empty());
    if !has_bearer {
        return error(StatusCode::UNAUTHORIZED, "unauthorized", "missing SDK key");
    }
    let Json(request) = match body {
        Ok(body) => body,
        Err(rejection) => {
            return error(
                StatusCode::BAD_REQUEST,
                "bad_request",
                &rejection.body_text(),
            );
        }
    };
    // The request is parsed like the engine's; the baseline has no use for its fields.
    let _ = (&request.session_id, &request.trigger_context.event_type);
    let item = &state.items[0];
    let offer = Offer {
        offer_id: Uuid::new_v4(),
        fallback_level: 4,
        items: &state.items,
        price_usd: item.price_usd,
        price_cents: item.price_cents,
        expires_at: (Utc::now() + chrono::Duration::seconds(OFFER_TTL_S))
            .to_rfc3339_opts(SecondsFormat::Secs, true),
    };
    Json(offer).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;
    use tower::ServiceExt as _;

    async fn call(auth: Option<&str>, body: &str) -> (StatusCode, serde_json::Value) {
        let mut req = axum::http::Request::post("/v1/sdk/offers/next")
            .header(header::CONTENT_TYPE, "application/json");
        if let Some(auth) = auth {
            req = req.header(header::AUTHORIZATION, auth);
        }
        let req = req
            .body(axum::body::Body::from(body.to_owned()))
            .expect("request");
        let resp = router().oneshot(req).await.expect("answer");
        let status = resp.status();
        let bytes = axum::body::to_bytes(resp.into_body(), 1 << 20)
            .await
            .expect("body");
        (status, serde_json::from_slice(&bytes).expect("json"))
    }

    const BODY: &str = r#"{"session_id":"6f1c2a52-8a4e-4a77-9d7e-2f4f9b0c1a11","trigger_context":{"event_type":"boss_raid"}}"#;

    #[tokio::test]
    async fn answers_an_offer() {
        let (status, v) = call(Some("Bearer ofr_live_sk_x"), BODY).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(v["fallback_level"], 4);
        assert_eq!(v["items"].as_array().expect("items").len(), 1);
        assert_eq!(v["price_cents"], 999);
        assert!(v["offer_id"].as_str().expect("id").parse::<Uuid>().is_ok());
        assert!(v["expires_at"].as_str().expect("expiry").ends_with('Z'));
    }

    #[tokio::test]
    async fn needs_a_bearer() {
        let (status, v) = call(None, BODY).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
        assert_eq!(v["error"]["code"], "unauthorized");
        let (status, _) = call(Some("Bearer "), BODY).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
    }

    #[tokio::test]
    async fn rejects_a_bad_body() {
        let (status, v) = call(Some("Bearer k"), r#"{"session_id":"nope"}"#).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert_eq!(v["error"]["code"], "bad_request");
    }
}
