//! The device sign-in page (developer): a member types the user code the authoring tool shows
//! and approves it for one game of the studio, or denies it. The device sign-in service
//! (`service/device.rs`) decides it once; every attempt counts against the same limits as the
//! REST routes (`http/throttle.rs`).

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use maud::html;
use serde::Deserialize;
use uuid::Uuid;

use super::failure::PageError;
use super::layout::{self, csrf};
use super::session::{CsrfForm, SignedIn};
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
    let body = html! {
        h1 { "Device sign-in" }
        p.muted { "The authoring tool shows a code like ABCD-EFGH. Type it here to give the tool an authoring key for one game, or deny it." }
        @if let Some((ok, message)) = &outcome {
            @if *ok { p.notice role="status" #device-outcome { (message) } }
            @else { p.error role="alert" #device-outcome { (message) } }
        }
        @if user.can(Role::Developer) {
            form.card method="post" action="/dashboard/device" {
                (csrf(user))
                label for="user_code" { "User code" }
                input #user_code type="text" name="user_code" required autocomplete="off" value=(code);
                label for="game_id" { "Game" }
                select #game_id name="game_id" {
                    @for g in &list { option value=(g.game_id) { (g.name) } }
                }
                button type="submit" name="decision" value="approve" { "Approve" }
                " "
                button.danger type="submit" name="decision" value="deny" { "Deny" }
            }
        } @else {
            p { "Approving a device sign-in needs the developer role." }
        }
    };
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
    state
        .throttle
        .attempt(&user.caller.studio_id, &user.caller.sub)?;
    user.require(Role::Developer)?;
    let by = Decider {
        studio_id: &user.caller.studio_id,
        sub: &user.caller.sub,
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
