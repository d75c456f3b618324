//! Live: the kill switch (admin; a change takes a confirmation step on the server, so it works
//! without script), the SDK sessions this node holds for the game, and the decisions this node
//! served recently with their trace (why each higher level passed) and the silent shadow picks.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use maud::html;
use offer_domain::validation::FieldError;
use serde::Deserialize;
use uuid::Uuid;

use super::extract::PagePath;
use super::failure::PageError;
use super::layout::{self, Tab, csrf, field_errors};
use super::session::{CsrfForm, SignedIn, game_of};
use crate::auth::Role;
use crate::service::{ServiceError, game::offer_config};
use crate::state::AppState;

/// Recent decisions shown.
const RECENT: usize = 20;

fn level_name(level: u8) -> &'static str {
    match level {
        0 => "0: normal",
        1 => "1: AI off (studio bundles and the store shelf still serve)",
        2 => "2: offers off",
        _ => "3: SDK off",
    }
}

async fn live_page(
    state: &AppState,
    user: &SignedIn,
    game_id: Uuid,
    errors: &[FieldError],
    status: StatusCode,
) -> Result<Response, PageError> {
    let handle = game_of(&state.services, user, game_id).await?;
    let view = handle.view();
    let ks = offer_config::kill_switch(&state.services, &view.game).await?;
    let level = ks.level.as_u8();
    let mut sessions = 0usize;
    state
        .services
        .actors
        .for_each_session_of(game_id, |_| sessions += 1);
    let report = state.services.decisions.shadow_report(game_id, RECENT);
    let action = format!("/dashboard/games/{game_id}/kill-switch");
    let body = html! {
        h1 { "Live" }
        section {
            h2 { "Kill switch" }
            p { "Level now: " strong #kill-level { (level_name(level)) } }
            @if !ks.reason.is_empty() { p { "Reason: " (ks.reason) } }
            p.muted { "Changed " (ks.updated_at.format("%Y-%m-%d %H:%M:%S UTC")) ". Every connected game hears a change at once." }
            @if user.can(Role::Admin) {
                form method="post" action=(action) {
                    (csrf(user))
                    label for="level" { "New level" }
                    select #level name="level" {
                        @for l in 0..=3u8 { option value=(l) selected[l == level] { (level_name(l)) } }
                    }
                    (field_errors(errors, "level"))
                    label for="reason" { "Reason (shown to the SDK)" }
                    input #reason type="text" name="reason" maxlength="500" value=(ks.reason);
                    (field_errors(errors, "reason"))
                    button.danger type="submit" { "Change the kill switch…" }
                }
            }
        }
        section {
            h2 { "Sessions online" }
            p { strong #sessions-online { (sessions) } " SDK sessions of this game on this node." }
        }
        section {
            h2 { "Recent decisions on this node" }
            p.muted { "Shadow picks that stayed silent: L1 " (report.level_1) ", L2 " (report.level_2) "." }
            div.table-wrap { table {
                thead { tr { th { "When" } th { "Trigger" } th { "Outcome" } th { "Level" } th { "Items" } th { "Why each higher level passed" } } }
                tbody {
                    @for d in &report.recent {
                        tr {
                            td { (d.decided_at.format("%H:%M:%S")) }
                            td { (d.trigger) }
                            td { (d.outcome) }
                            td { (d.fallback_level.map(|l| l.to_string()).unwrap_or_default()) }
                            td { @for i in &d.items { (i.item_id) " " } }
                            td { code { (serde_json::to_string(&d.trace).unwrap_or_default()) } }
                        }
                    }
                }
            } }
        }
    };
    Ok(layout::game_page(
        status,
        user,
        "Live",
        (&view.game, Tab::Live),
        body,
    ))
}

/// `GET /dashboard/games/{game_id}/live`.
pub async fn page(
    State(state): State<AppState>,
    user: SignedIn,
    PagePath(game_id): PagePath<Uuid>,
) -> Result<Response, PageError> {
    live_page(&state, &user, game_id, &[], StatusCode::OK).await
}

/// The kill-switch form; `confirmed` is set by the confirmation step's button.
#[derive(Debug, Deserialize)]
pub struct KillSwitchForm {
    level: u8,
    #[serde(default)]
    reason: String,
    #[serde(default)]
    confirmed: Option<String>,
}

/// `POST /dashboard/games/{game_id}/kill-switch` (admin): first a page asking to confirm,
/// then, with `confirmed`, the change.
pub async fn kill_switch(
    State(state): State<AppState>,
    PagePath(game_id): PagePath<Uuid>,
    CsrfForm { user, form }: CsrfForm<KillSwitchForm>,
) -> Result<Response, PageError> {
    let handle = game_of(&state.services, &user, game_id).await?;
    user.require(Role::Admin)?;
    if form.confirmed.is_none() {
        let view = handle.view();
        let body = html! {
            h1 { "Confirm the kill switch" }
            p { "Set the kill switch of " strong { (view.game.name) } " to level " strong { (level_name(form.level)) } "?" }
            p.muted { "Every connected game hears it at once." }
            form method="post" action={ "/dashboard/games/" (game_id) "/kill-switch" } {
                (csrf(&user))
                input type="hidden" name="level" value=(form.level);
                input type="hidden" name="reason" value=(form.reason);
                input type="hidden" name="confirmed" value="yes";
                button.danger #confirm type="submit" { "Yes, set level " (form.level) }
            }
            p { a href={ "/dashboard/games/" (game_id) "/live" } { "Cancel" } }
        };
        return Ok(layout::game_page(
            StatusCode::OK,
            &user,
            "Confirm",
            (&view.game, Tab::Live),
            body,
        ));
    }
    match offer_config::set_kill_switch(&state.services, &handle, form.level, form.reason).await {
        Ok(_) => Ok(Redirect::to(&format!("/dashboard/games/{game_id}/live")).into_response()),
        Err(ServiceError::Validation(errors)) => {
            live_page(
                &state,
                &user,
                game_id,
                &errors,
                StatusCode::UNPROCESSABLE_ENTITY,
            )
            .await
        }
        Err(e) => Err(e.into()),
    }
}
