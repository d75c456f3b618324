//! Operations endpoints: liveness, readiness, metrics and the OpenAPI document.
//!
//! Liveness and readiness answer different questions. `/healthz` says the process answers,
//! nothing more: it reads no store and no count, and the edge serves it from its reserve of
//! connections even when every general place is taken (past the reserve too, the edge answers
//! it alike by itself), so a node full of clients is never restarted as dead. `/readyz` says
//! whether the node takes new clients: not when its store does not answer, and not while every
//! place under `server.max_connections` is taken (the probe's own connection counts: a probe
//! that took the last place finds the node full, as the next client would).

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use subtle::ConstantTimeEq;
use utoipa::ToSchema;

use super::openapi::{Unauthenticated, Unavailable};
use crate::error::{ApiError, ApiResult};
use crate::service::ServiceError;
use crate::state::AppState;

/// Health answer.
#[derive(Debug, Serialize, ToSchema)]
pub struct Health {
    /// `ok`.
    pub status: &'static str,
}

/// The process is alive. Open: no credential. Answered even when the node holds
/// `server.max_connections` connections (from the edge's reserve).
#[utoipa::path(get, path = "/healthz", tag = "operations", security(()),
    responses((status = 200, description = "Alive", body = Health)))]
pub async fn healthz() -> Json<Health> {
    Json(Health { status: "ok" })
}

/// The node takes new clients: its store answers and a place under `server.max_connections`
/// is free; 503 `unavailable` otherwise, its message saying which. Open: no credential.
#[utoipa::path(get, path = "/readyz", tag = "operations", security(()),
    responses((status = 200, description = "Ready", body = Health), Unavailable))]
pub async fn readyz(State(state): State<AppState>) -> ApiResult<Json<Health>> {
    if state.metrics.connections().full() {
        return Err(ApiError::TooManyConnections);
    }
    state.services.ready().await?;
    Ok(Json(Health { status: "ok" }))
}

/// Prometheus text exposition. It lists every route and its traffic, so it is open only
/// while the engine listens on loopback alone; otherwise it takes the bearer token of
/// `metrics.token` (Prometheus scrapes with `authorization: {credentials: ...}`), and without
/// one configured it is closed.
#[utoipa::path(get, path = "/metrics", tag = "operations", security((), ("bearer" = [])),
    responses((status = 200, description = "The metrics", content_type = "text/plain", body = String),
        Unauthenticated))]
pub async fn metrics(State(state): State<AppState>, headers: HeaderMap) -> ApiResult<Response> {
    let settings = &state.services.settings;
    let expected = settings.metrics.token.as_bytes();
    let open = expected.is_empty() && settings.server.bind.ip().is_loopback();
    if !open {
        let presented = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split_once(' '))
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
            .map(|(_, token)| token.trim().as_bytes());
        let allowed =
            !expected.is_empty() && presented.is_some_and(|p| bool::from(p.ct_eq(expected)));
        if !allowed {
            return Err(ServiceError::Unauthorized(
                "metrics need the bearer token of metrics.token when the engine listens beyond loopback",
            )
            .into());
        }
    }
    Ok((
        StatusCode::OK,
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        state.metrics.render(state.services.decisions.dropped()),
    )
        .into_response())
}
