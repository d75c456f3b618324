//! The stores' server notifications: `POST /v1/stores/app-store/notifications/{game_id}`
//! (App Store Server Notifications V2) and `POST
//! /v1/stores/google-play/notifications/{game_id}?token=` (Google Play real-time developer
//! notifications, pushed by Pub/Sub). The stores call them, not a studio: they take no API
//! key and no JWT, and prove themselves by Apple's signature or the game's notification
//! token instead (401 `notification_invalid` when they do not).
//!
//! A notification applied, ignored, kept for a purchase not seen yet, or seen before is
//! answered 200: the stores retry anything else, so a 503 makes them come back later.

use axum::Json;
use axum::extract::State;
use serde::Deserialize;
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use super::extract::{ApiJson, ApiPath, ApiQuery};
use super::openapi::{NotFound, NotificationErrors, Unavailable};
use crate::error::ApiResult;
use crate::service::play::refunds::{self, Handled};
use crate::state::AppState;

/// The body Apple posts.
#[derive(Debug, Deserialize, ToSchema)]
pub struct AppStoreNotificationBody {
    /// The notification, a JWS signed by Apple (App Store Server Notifications V2).
    #[serde(rename = "signedPayload")]
    #[schema(min_length = 1, max_length = 65536)]
    pub signed_payload: String,
}

/// The query of the Google Play notification URL.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct GooglePlayQuery {
    /// The game's Google Play notification token, as in the URL its store settings show an
    /// admin. Never logged.
    pub token: Option<String>,
}

/// An App Store Server Notification V2 for the game. It is verified as a purchase's
/// transaction is (Apple's chain, the game's bundle id and app id): `REFUND` and `REVOKE`
/// take the purchase back from its player, `REFUND_REVERSED` restores what the refund took,
/// any other type is answered and ignored. A game without App Store settings has nothing to
/// check against: 401.
#[utoipa::path(post, path = "/v1/stores/app-store/notifications/{game_id}", tag = "stores",
    security(()),
    params(("game_id" = Uuid, Path)), request_body = AppStoreNotificationBody,
    responses((status = 200, description = "Applied, ignored, kept for a purchase not seen yet, or seen before", body = Handled),
        NotificationErrors, NotFound, Unavailable))]
pub async fn app_store(
    State(state): State<AppState>,
    ApiPath(game_id): ApiPath<Uuid>,
    ApiJson(body): ApiJson<AppStoreNotificationBody>,
) -> ApiResult<Json<Handled>> {
    let handled = refunds::app_store(&state.services, game_id, body.signed_payload).await?;
    Ok(Json(handled))
}

/// A Google Play real-time developer notification for the game, as Pub/Sub pushes it (the
/// push's JSON, `message.data` the notification in base64). The `token` must be the game's:
/// 401 otherwise, as for a notification of another package. A voided purchase takes the
/// purchase back from its player (one unit's share for a quantity-based partial refund,
/// `refundType` 2); any other notification is answered and ignored.
#[utoipa::path(post, path = "/v1/stores/google-play/notifications/{game_id}", tag = "stores",
    security(()),
    params(("game_id" = Uuid, Path), GooglePlayQuery),
    request_body(content = Object, description = "The Pub/Sub push: `{\"message\": {\"data\", \"messageId\"}, \"subscription\"}`"),
    responses((status = 200, description = "Applied, ignored, kept for a purchase not seen yet, or seen before", body = Handled),
        NotificationErrors, NotFound, Unavailable))]
pub async fn google_play(
    State(state): State<AppState>,
    ApiPath(game_id): ApiPath<Uuid>,
    ApiQuery(query): ApiQuery<GooglePlayQuery>,
    ApiJson(push): ApiJson<serde_json::Value>,
) -> ApiResult<Json<Handled>> {
    // The receipts crate reads the push from its bytes.
    let body = serde_json::to_vec(&push)
        .map_err(|e| crate::service::ServiceError::Internal(format!("push re-encoding: {e}")))?;
    let handled =
        refunds::google_play(&state.services, game_id, query.token.as_deref(), &body).await?;
    Ok(Json(handled))
}
