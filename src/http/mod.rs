//! The REST surface: the router, its middleware and the OpenAPI document.
//!
//! Every handler is registered through `utoipa_axum::routes!`, so a path cannot exist
//! without being in `/v1/openapi.json`. Unknown paths and wrong methods answer in the
//! documented error shape too.

pub mod access;
pub mod approvals;
pub mod assets;
pub mod audit;
pub mod callers;
pub mod custom_pages;
pub mod device;
pub mod economy;
pub mod edge;
pub mod extract;
pub mod games;
pub mod items;
pub mod keys;
pub mod members;
pub mod offer_config;
pub mod offer_json;
pub mod offers;
pub mod openapi;
pub mod ops;
pub mod page_validation;
pub mod player_auth;
pub mod players;
pub mod previews;
pub mod refused_events;
pub mod runs;
pub mod sdk;
pub mod statements;
pub mod store_notifications;
pub mod stores;
pub mod trace;

use std::sync::Arc;

use axum::Json;
use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::response::IntoResponse;
use utoipa::OpenApi;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::error::ApiError;
use crate::service::ServiceError;
use crate::state::AppState;

/// Every REST route with its OpenAPI description.
fn api_routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::with_openapi(openapi::ApiDoc::openapi())
        .routes(routes!(ops::healthz))
        .routes(routes!(ops::readyz))
        .routes(routes!(ops::metrics))
        .routes(routes!(games::create_game, games::list_games))
        .routes(routes!(games::get_game, games::patch_game))
        .routes(routes!(items::list_items, items::create_item))
        .routes(routes!(items::bulk_items))
        .routes(routes!(items::patch_item, items::delete_item))
        .routes(routes!(assets::upload_asset))
        .routes(routes!(assets::get_asset))
        .routes(routes!(keys::issue_sdk_key))
        .routes(routes!(keys::issue_authoring_key))
        .routes(routes!(keys::list_keys))
        .routes(routes!(keys::revoke_sdk_key))
        .routes(routes!(keys::revoke_authoring_key))
        .routes(routes!(members::create_member, members::list_members))
        .routes(routes!(members::revoke_member_sessions))
        .routes(routes!(audit::get_audit))
        .routes(routes!(device::start))
        .routes(routes!(device::token))
        .routes(routes!(device::approve))
        .routes(routes!(device::deny))
        .routes(routes!(custom_pages::save_draft, custom_pages::list_drafts))
        .routes(routes!(custom_pages::list_custom_pages))
        .routes(routes!(custom_pages::get_custom_page))
        .routes(routes!(custom_pages::get_custom_page_version))
        .routes(routes!(page_validation::validate))
        .routes(routes!(custom_pages::request_publish))
        .routes(routes!(runs::open_run, runs::list_runs))
        .routes(routes!(runs::get_run))
        .routes(routes!(runs::confirm_run))
        .routes(routes!(runs::record_comparison))
        .routes(routes!(previews::request_preview))
        .routes(routes!(previews::get_preview))
        .routes(routes!(previews::get_screenshot))
        .routes(routes!(
            offer_config::get_templates,
            offer_config::put_templates
        ))
        .routes(routes!(
            offer_config::create_bundle,
            offer_config::list_bundles
        ))
        .routes(routes!(
            offer_config::get_bundle,
            offer_config::patch_bundle,
            offer_config::delete_bundle
        ))
        .routes(routes!(
            offer_config::create_experiment,
            offer_config::list_experiments
        ))
        .routes(routes!(offer_config::delete_experiment))
        .routes(routes!(
            offer_config::get_guardrails,
            offer_config::patch_guardrails
        ))
        .routes(routes!(offer_config::set_mode))
        .routes(routes!(
            offer_config::get_kill_switch,
            offer_config::put_kill_switch
        ))
        .routes(routes!(stores::get_stores, stores::put_stores))
        .routes(routes!(
            player_auth::get_player_auth,
            player_auth::put_player_auth
        ))
        .routes(routes!(stores::rotate_google_play_token))
        .routes(routes!(store_notifications::app_store))
        .routes(routes!(store_notifications::google_play))
        .routes(routes!(approvals::list))
        .routes(routes!(approvals::get))
        .routes(routes!(approvals::approve))
        .routes(routes!(approvals::reject))
        .routes(routes!(approvals::simulate))
        .routes(routes!(economy::fsr))
        .routes(routes!(economy::revenue))
        .routes(routes!(economy::import_events))
        .routes(routes!(economy::holdout_arpu))
        .routes(routes!(economy::holdout_samples))
        .routes(routes!(economy::experiment_results))
        .routes(routes!(economy::revenue_share))
        .routes(routes!(statements::get_statement))
        .routes(routes!(refused_events::refused_events))
        .routes(routes!(players::get_player, players::erase_player))
        .routes(routes!(players::export_player))
        .routes(routes!(offers::get_decision))
        .routes(routes!(offers::shadow))
        .routes(routes!(offers::model))
        .routes(routes!(sdk::status))
        .routes(routes!(sdk::sessions_open))
        .routes(routes!(sdk::post_events))
        .routes(routes!(sdk::next_offer))
}

/// The OpenAPI document of every REST path.
pub fn openapi() -> utoipa::openapi::OpenApi {
    api_routes().split_for_parts().1
}

/// Builds the whole application: the REST routes, the `extra` routes (the WebSocket's and
/// the dashboard's) and the edge every request passes once (see [`edge`]): a tracing span
/// and the metrics by route template, around the router rather than around each route.
///
/// The REST handlers read bodies with their own limits (`server.max_body_bytes`,
/// `catalogue.max_asset_bytes`); axum's body limit, which its own form extractor obeys, is
/// set on the `extra` routes only, the dashboard's forms being the ones that use it.
pub fn router(state: AppState, extra: Router<AppState>) -> edge::Edge<Router> {
    let (router, doc) = api_routes().split_for_parts();
    let metrics = Arc::new(
        state.metrics.routes(
            doc.paths
                .paths
                .keys()
                .cloned()
                .chain([OPENAPI_PATH.to_owned(), edge::UNMATCHED.to_owned()]),
        ),
    );
    let doc = Arc::new(doc);
    let body_limit = state
        .services
        .settings
        .server
        .max_body_bytes
        .max(state.services.settings.catalogue.max_asset_bytes + 1024);
    let inner = router
        .route(
            OPENAPI_PATH,
            axum::routing::get(move || {
                let doc = doc.clone();
                async move { Json(doc.as_ref().clone()) }
            }),
        )
        .merge(extra.layer(DefaultBodyLimit::max(body_limit)).layer(
            axum::middleware::from_fn_with_state(metrics.clone(), edge::observed),
        ))
        .fallback(|| async { ApiError::Service(ServiceError::NotFound("route")).into_response() })
        .method_not_allowed_fallback(|| async { ApiError::MethodNotAllowed.into_response() })
        .with_state(state);
    edge::Edge::new(inner, metrics)
}

/// The path of the OpenAPI document.
const OPENAPI_PATH: &str = "/v1/openapi.json";
