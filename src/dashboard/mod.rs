//! The studio dashboard at `/dashboard`: a transport beside `http/`, serving server-rendered
//! HTML pages (`maud`: every value escaped) whose plain forms post back and redirect, so the
//! whole console works without JavaScript. It reaches the same services as the REST routes and
//! applies no rule of its own: a refusal shows the service's words next to its field.
//!
//! Members sign in with their email and password ([`sign_in`]); the session cookie and the
//! CSRF token of every writing form are checked by the extractors of [`session`], and who may
//! see a page (the game of its path in the member's studio, the role it needs) by those of
//! [`access`]. The handlers of each page parse its forms with [`forms`] and hand what they
//! gathered to its markup in [`views`]; no page module imports another. Every answer
//! carries a strict Content-Security-Policy and the other headers `secure_headers` sets; the
//! stylesheet and the few lines of script are compiled into the binary ([`assets`]).

pub mod access;
pub mod approvals;
pub mod assets;
pub mod audit;
pub mod bundles;
pub mod catalogue;
pub mod custom_pages;
pub mod device;
pub mod document;
pub mod economy;
pub mod experiments;
pub mod extract;
pub mod failure;
pub mod forms;
pub mod games;
pub mod item_art;
pub mod item_page;
pub mod keys;
pub mod layout;
pub mod live;
pub mod model;
pub mod offers;
pub mod previews;
pub mod runs;
pub mod session;
pub mod sign_in;
pub mod sign_in_token;
pub mod statements;
pub mod stores;
pub mod views;

use std::sync::Arc;

use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Redirect};
use axum::routing::{get, post};
use axum::{Extension, Router};

use self::sign_in_token::FormTokens;
use crate::state::AppState;

/// The dashboard's entry point, printed at start.
pub const PATH: &str = "/dashboard";

/// The policy of every dashboard answer: nothing but this origin's own files, no inline
/// script or style, never framed, forms posting only here.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; frame-ancestors 'none'; form-action 'self'";

/// Every dashboard route, with the security headers on each answer.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route(PATH, get(|| async { Redirect::to("/dashboard/games") }))
        .route("/dashboard/assets/{file}", get(assets::serve))
        .route(
            "/dashboard/sign-in",
            get(sign_in::form)
                .post(sign_in::submit)
                .layer(Extension(Arc::new(FormTokens::default()))),
        )
        .route("/dashboard/sign-out", post(sign_in::sign_out))
        .route("/dashboard/games", get(games::list).post(games::create))
        .route("/dashboard/games/{game_id}", get(games::show))
        .route("/dashboard/games/{game_id}/mode", post(games::set_mode))
        .route(
            "/dashboard/games/{game_id}/guardrails",
            post(games::set_guardrails),
        )
        .route(
            "/dashboard/games/{game_id}/stores",
            get(stores::show).post(stores::save),
        )
        .route(
            "/dashboard/games/{game_id}/stores/google-play-token",
            post(stores::rotate),
        )
        .route("/dashboard/games/{game_id}/keys", get(keys::page))
        .route("/dashboard/games/{game_id}/keys/sdk", post(keys::issue_sdk))
        .route(
            "/dashboard/games/{game_id}/keys/authoring",
            post(keys::issue_authoring),
        )
        .route(
            "/dashboard/games/{game_id}/keys/{key_id}/revoke",
            post(keys::revoke),
        )
        .route("/dashboard/games/{game_id}/items", get(catalogue::page))
        .route(
            "/dashboard/games/{game_id}/items/upload",
            post(catalogue::upload),
        )
        .route(
            "/dashboard/games/{game_id}/items/{item_id}",
            get(catalogue::edit_form).post(catalogue::edit),
        )
        .route(
            "/dashboard/games/{game_id}/items/{item_id}/art",
            post(item_art::upload),
        )
        .route(
            "/dashboard/games/{game_id}/assets/{asset_id}",
            get(item_art::serve),
        )
        .route(
            "/dashboard/games/{game_id}/items/{item_id}/delete",
            post(catalogue::delete),
        )
        .route("/dashboard/games/{game_id}/offers", get(offers::page))
        .route(
            "/dashboard/games/{game_id}/offers/templates",
            post(offers::set_templates),
        )
        .route(
            "/dashboard/games/{game_id}/offers/bundles",
            post(bundles::create),
        )
        .route(
            "/dashboard/games/{game_id}/offers/bundles/{bundle_id}",
            get(bundles::show).post(bundles::edit),
        )
        .route(
            "/dashboard/games/{game_id}/offers/bundles/{bundle_id}/delete",
            post(bundles::delete),
        )
        .route(
            "/dashboard/games/{game_id}/offers/experiments",
            post(offers::create_experiment),
        )
        .route(
            "/dashboard/games/{game_id}/offers/experiments/{experiment_id}/delete",
            post(offers::delete_experiment),
        )
        .route("/dashboard/games/{game_id}/live", get(live::page))
        .route("/dashboard/games/{game_id}/model", get(model::page))
        .route(
            "/dashboard/games/{game_id}/kill-switch",
            post(live::kill_switch),
        )
        .route(
            "/dashboard/games/{game_id}/custom-pages",
            get(custom_pages::list),
        )
        .route(
            "/dashboard/games/{game_id}/custom-pages/runs",
            get(runs::list),
        )
        .route(
            "/dashboard/games/{game_id}/custom-pages/runs/{run_id}",
            get(runs::show),
        )
        .route(
            "/dashboard/games/{game_id}/custom-pages/runs/{run_id}/confirm",
            post(runs::confirm),
        )
        .route(
            "/dashboard/games/{game_id}/custom-pages/{page_id}",
            get(custom_pages::show),
        )
        .route(
            "/dashboard/games/{game_id}/custom-pages/{page_id}/preview",
            post(custom_pages::request_preview),
        )
        .route(
            "/dashboard/games/{game_id}/custom-pages/{page_id}/publish-request",
            post(custom_pages::request_publish),
        )
        .route(
            "/dashboard/games/{game_id}/previews/{preview_id}/{size}",
            get(previews::serve),
        )
        .route(
            "/dashboard/games/{game_id}/approvals",
            get(approvals::queue),
        )
        .route("/dashboard/games/{game_id}/economy", get(economy::page))
        .route(
            "/dashboard/games/{game_id}/experiments",
            get(experiments::page),
        )
        .route("/dashboard/games/{game_id}/audit", get(audit::page))
        .route(
            "/dashboard/games/{game_id}/economy/samples.csv",
            get(economy::samples),
        )
        .route(
            "/dashboard/games/{game_id}/economy/statement.csv",
            get(statements::csv),
        )
        .route("/dashboard/approvals/{approval_id}", get(approvals::show))
        .route(
            "/dashboard/approvals/{approval_id}/simulate",
            post(approvals::simulate),
        )
        .route(
            "/dashboard/approvals/{approval_id}/approve",
            post(approvals::approve),
        )
        .route(
            "/dashboard/approvals/{approval_id}/reject",
            post(approvals::reject),
        )
        .route("/dashboard/device", get(device::form).post(device::decide))
        .route("/dashboard/{*rest}", get(not_found).post(not_found))
        .layer(axum::middleware::map_response(secure_headers))
}

/// Any other path under `/dashboard`: the 404 page.
async fn not_found() -> failure::PageError {
    crate::service::ServiceError::NotFound("page").into()
}

/// Adds the dashboard's security headers to an answer.
async fn secure_headers(mut response: axum::response::Response) -> impl IntoResponse {
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CONTENT_SECURITY_POLICY),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("same-origin"),
    );
    // Pages hold a member's data and a CSRF token: never cached (the assets say otherwise).
    headers
        .entry(header::CACHE_CONTROL)
        .or_insert(HeaderValue::from_static("no-store"));
    response
}
