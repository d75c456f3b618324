//! A game's store settings: `GET` (viewer) and `PUT` (admin) `/v1/games/{game_id}/stores`,
//! and `POST .../stores/google-play-token` (admin) to rotate the Google Play notification
//! token. Only an admin's answer carries the token (in the Google Play notification URL).

use axum::Json;
use axum::extract::State;
use chrono::{DateTime, Utc};
use offer_domain::store_settings::{
    AppStoreSettings, GooglePlaySettings, StoreSettings, StoreSettingsInput, Verification,
};
use serde::Serialize;
use utoipa::ToSchema;
use uuid::Uuid;

use super::access::{Admin, GameAccess, Viewer};
use super::extract::ApiJson;
use super::openapi::{AuthErrors, BodyErrors, Conflict, NotFound, Unavailable};
use crate::auth::Role;
use crate::error::ApiResult;
use crate::service::game::stores;
use crate::state::AppState;

/// A game's store settings as answered.
#[derive(Debug, Serialize, ToSchema)]
pub struct StoreSettingsAnswer {
    /// `off` (nothing checked), `report` (unverified purchases kept and flagged, never
    /// billed) or `enforce` (only verified purchases grant).
    pub verification: Verification,
    /// The App Store settings, or `null`.
    pub app_store: Option<AppStoreSettings>,
    /// The Google Play settings, or `null`.
    pub google_play: Option<GooglePlaySettings>,
    /// Read only: when the current stretch of verification began (set when verification
    /// leaves `off`, kept between `report` and `enforce`, cleared by `off`); `null` while
    /// `off`.
    pub verified_since: Option<DateTime<Utc>>,
    /// Read only: where to point each store's server notifications.
    pub notification_urls: NotificationUrls,
    /// Read only: last change; `null` while never saved.
    pub updated_at: Option<DateTime<Utc>>,
}

/// Where each store sends the game's server notifications.
#[derive(Debug, Serialize, ToSchema)]
pub struct NotificationUrls {
    /// App Store Server Notifications (version 2) URL.
    pub app_store: String,
    /// Google Play real-time developer notifications push URL. An admin sees it with its
    /// `token`; anyone else without the query. `null` until the settings are first saved.
    pub google_play: Option<String>,
}

impl StoreSettingsAnswer {
    /// The answer of `settings` for a caller of `role`.
    fn of(state: &AppState, game_id: Uuid, settings: StoreSettings, role: Role) -> Self {
        let urls = stores::notification_urls(
            &state.services.settings,
            game_id,
            &settings,
            role >= Role::Admin,
        );
        Self {
            verification: settings.verification,
            app_store: settings.app_store,
            google_play: settings.google_play,
            verified_since: settings.verified_since,
            notification_urls: NotificationUrls {
                app_store: urls.app_store,
                google_play: urls.google_play,
            },
            updated_at: settings.updated_at,
        }
    }
}

/// The game's store settings (viewer); an admin's answer carries the Google Play token.
#[utoipa::path(get, path = "/v1/games/{game_id}/stores", tag = "stores",
    params(("game_id" = Uuid, Path)),
    responses((status = 200, description = "The store settings", body = StoreSettingsAnswer),
        AuthErrors, NotFound, Unavailable))]
pub async fn get_stores(
    State(state): State<AppState>,
    access: GameAccess<Viewer>,
) -> ApiResult<Json<StoreSettingsAnswer>> {
    let settings = access.game.view().stores.clone();
    Ok(Json(StoreSettingsAnswer::of(
        &state,
        access.game_id(),
        settings,
        access.caller.role,
    )))
}

/// Replaces the game's store settings (admin). `report` and `enforce` need a store
/// configured; the first save makes the Google Play notification token.
#[utoipa::path(put, path = "/v1/games/{game_id}/stores", tag = "stores",
    params(("game_id" = Uuid, Path)), request_body = StoreSettingsInput,
    responses((status = 200, description = "The stored settings", body = StoreSettingsAnswer),
        AuthErrors, BodyErrors, NotFound, Conflict, Unavailable))]
pub async fn put_stores(
    State(state): State<AppState>,
    access: GameAccess<Admin>,
    ApiJson(input): ApiJson<StoreSettingsInput>,
) -> ApiResult<Json<StoreSettingsAnswer>> {
    let settings = stores::put(&state.services, &access.by(), &access.game, input).await?;
    Ok(Json(StoreSettingsAnswer::of(
        &state,
        access.game_id(),
        settings,
        access.caller.role,
    )))
}

/// Rotates the Google Play notification token (admin): the URL with the old token stops
/// working at once; paste the new URL in the Play Console's Pub/Sub push subscription.
#[utoipa::path(post, path = "/v1/games/{game_id}/stores/google-play-token", tag = "stores",
    params(("game_id" = Uuid, Path)),
    responses((status = 200, description = "The settings with the new token", body = StoreSettingsAnswer),
        AuthErrors, NotFound, Conflict, Unavailable))]
pub async fn rotate_google_play_token(
    State(state): State<AppState>,
    access: GameAccess<Admin>,
) -> ApiResult<Json<StoreSettingsAnswer>> {
    let settings =
        stores::rotate_google_play_token(&state.services, &access.by(), &access.game).await?;
    Ok(Json(StoreSettingsAnswer::of(
        &state,
        access.game_id(),
        settings,
        access.caller.role,
    )))
}
