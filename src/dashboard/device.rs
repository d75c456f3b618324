//! The device sign-in page (developer): a member types the user code the authoring tool shows
//! and approves it for one game of the studio, or denies it. The device sign-in service
//! (`service/device.rs`) decides it once; every attempt counts against the same limits as the
//! REST routes (`http/throttle.rs`). The page is drawn by
//! [`views::device`](super::views::device).

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use offer_domain::audit::Via;
use serde::Deserialize;
use uuid::Uuid;

use super::failure::PageError;
use super::layout;
use super::session::{CsrfForm, SignedIn};
use super::views::device as views;
use crate::auth::Role;
use crate::service::authoring::device::{self, Decider};
use crate::service::{ServiceError, access, game::games};
use crate::state::AppState;

async fn device_page(
    state: &AppState,
    user: &SignedIn,
    code: &str,
    outcome: Option<(bool, String)>,
    status: StatusCode,
) -> Result<Response, PageError> {
    let (list, _) = games::list(&state.services, &user.caller.studio_id, None, usize::MAX).await?;
    let body = views::page(user, &list, code, outcome.as_ref());
    Ok((status, layout::page(user, "Device sign-in", None, body)).into_response())
}

/// `GET /dashboard/device`.
pub async fn form(State(state): State<AppState>, user: SignedIn) -> Result<Response, PageError> {
    device_page(&state, &user, "", None, StatusCode::OK).await
}

/// The approval form.
#[derive(Debug, Deserialize)]
pub struct DecisionForm {
    user_code: String,
    game_id: Option<Uuid>,
    decision: String,
}

/// `POST /dashboard/device` (developer): approves or denies the code.
pub async fn decide(
    State(state): State<AppState>,
    CsrfForm { user, form }: CsrfForm<DecisionForm>,
) -> Result<Response, PageError> {
    // Every attempt counts, a refused one too: the role is checked after the limits.
    state
        .throttle
        .attempt(&user.caller.studio_id, &user.caller.sub)?;
    user.require(Role::Developer)?;
    let by = Decider {
        studio_id: &user.caller.studio_id,
        sub: &user.caller.sub,
        via: Via::Dashboard,
    };
    let outcome = if form.decision == "deny" {
        device::deny(&state.services, by, &form.user_code)
            .await
            .map(|()| "Denied: the tool gets no key.".to_owned())
    } else {
        let game_id = form.game_id.ok_or(ServiceError::NotFound("game"))?;
        let game = access::for_studio(&state.services, &user.caller.studio_id, game_id).await?;
        let name = game.view().game.name.clone();
        device::approve(&state.services, by, &form.user_code, &game)
            .await
            .map(|()| format!("Approved: the tool receives an authoring key for {name}."))
    };
    match outcome {
        Ok(message) => device_page(&state, &user, "", Some((true, message)), StatusCode::OK).await,
        Err(e @ (ServiceError::NotFound(_) | ServiceError::Conflict(_))) => {
            let status = crate::error::service_status(&e).0;
            device_page(
                &state,
                &user,
                &form.user_code,
                Some((false, e.to_string())),
                status,
            )
            .await
        }
        Err(e) => Err(e.into()),
    }
}
