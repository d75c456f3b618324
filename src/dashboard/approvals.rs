//! Approvals: a game's queue (pending first, then the decided ones; a custom page waiting
//! with its preview screenshots), and one approval's page with the offer or custom page under
//! review (a page with its screenshots, its template's source and the validator's verdict on
//! it against the catalogue of now), its simulation (pass rate, the FSR bounds against the
//! genre's healthy band) and the approve and reject forms (developer). The approval and
//! simulation services decide everything; a decided approval is a 409 here too, and approving
//! a page that no longer validates a 422 shown on the approval's page.
//! The pages are drawn by [`views::approvals`](super::views::approvals).

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use offer_actors::GameHandle;
use offer_domain::approval::{Approval, ApprovalStatus, Verdict};
use serde::Deserialize;
use uuid::Uuid;

use super::access::{DashApproval, DashGame, Developer, Viewer};
use super::failure::PageError;
use super::forms::optional_text;
use super::layout::{self, Tab};
use super::session::{CsrfForm, NoFields, SignedIn};
use super::views::approvals::{self as views, PageUnderReview};
use crate::service::authoring::previews::{self, Preview};
use crate::service::{
    ServiceError, approval::approvals, approval::simulation, authoring::page_validation,
    authoring::published_page,
};
use crate::state::AppState;

/// `GET /dashboard/games/{game_id}/approvals`: the queue.
pub async fn queue(
    at: DashGame<Viewer>,
    State(state): State<AppState>,
) -> Result<Response, PageError> {
    let mut list = approvals::list(&state.services, at.game_id(), None).await?;
    list.sort_by_key(|a| a.status != ApprovalStatus::Pending);
    let mut shown = Vec::with_capacity(list.len());
    for a in list {
        let preview = page_preview(&state, &a).await?;
        shown.push((a, preview));
    }
    let body = views::queue(&shown);
    Ok(at.page(StatusCode::OK, "Approvals", Tab::Approvals, body))
}

/// For a pending custom page's approval, the newest preview of its version (`Some(None)`
/// when it has none); `None` for anything else.
async fn page_preview(
    state: &AppState,
    a: &Approval,
) -> Result<Option<Option<Preview>>, PageError> {
    match &a.page {
        Some(p) if a.status == ApprovalStatus::Pending => Ok(Some(
            previews::newest_of(&state.services, a.game_id, p.page_id, p.version).await?,
        )),
        _ => Ok(None),
    }
}

/// The approval `a` of `game`, with the `problem` of a decision refused and its status.
async fn approval_page(
    state: &AppState,
    user: &SignedIn,
    (a, game): (&Approval, &GameHandle),
    problem: Option<&str>,
    status: StatusCode,
) -> Result<Response, PageError> {
    let review = match &a.page {
        Some(p) => {
            let preview =
                previews::newest_of(&state.services, a.game_id, p.page_id, p.version).await?;
            let content = published_page::content(&state.services, a.game_id, *p).await?;
            let bindings = serde_json::Value::Object(content.bindings.clone());
            let verdict = page_validation::check(game, content.template.clone(), bindings).await?;
            Some(PageUnderReview {
                preview,
                content,
                verdict,
            })
        }
        None => None,
    };
    let body = views::page(user, a, review.as_ref(), problem);
    let view = game.view();
    Ok(layout::game_page(
        status,
        user,
        "Approval",
        (&view.game, Tab::Approvals),
        body,
    ))
}

/// `GET /dashboard/approvals/{approval_id}`.
pub async fn show(
    at: DashApproval<Viewer>,
    State(state): State<AppState>,
) -> Result<Response, PageError> {
    let shown = (&at.approval, &at.game);
    approval_page(&state, &at.user, shown, None, StatusCode::OK).await
}

/// Back to the approval's page once a decision is taken; a conflict (decided meanwhile, a
/// page simulated) or a page that no longer validates is shown on it, as it is now.
async fn or_conflict(
    state: &AppState,
    user: &SignedIn,
    approval_id: Uuid,
    outcome: Result<(), ServiceError>,
) -> Result<Response, PageError> {
    let (problem, status) = match outcome {
        Ok(()) => {
            return Ok(Redirect::to(&format!("/dashboard/approvals/{approval_id}")).into_response());
        }
        Err(ServiceError::Conflict(why)) => (why, StatusCode::CONFLICT),
        Err(ServiceError::PageInvalid(_)) => (
            "The page does not pass validation: it was not published and the approval still waits."
                .to_owned(),
            StatusCode::UNPROCESSABLE_ENTITY,
        ),
        Err(e) => return Err(e.into()),
    };
    let (a, _, game) =
        approvals::get_for_studio(&state.services, &user.caller.studio_id, approval_id).await?;
    approval_page(state, user, (&a, &game), Some(&problem), status).await
}

/// `POST /dashboard/approvals/{approval_id}/simulate` (developer).
pub async fn simulate(
    at: DashApproval<Developer>,
    State(state): State<AppState>,
    _: CsrfForm<NoFields>,
) -> Result<Response, PageError> {
    let outcome = simulation::simulate(&state.services, &at.game, &at.approval, None)
        .await
        .map(|_| ());
    or_conflict(&state, &at.user, at.approval.approval_id, outcome).await
}

/// `POST /dashboard/approvals/{approval_id}/approve` (developer).
pub async fn approve(
    at: DashApproval<Developer>,
    State(state): State<AppState>,
    _: CsrfForm<NoFields>,
) -> Result<Response, PageError> {
    decide(&state, at, Verdict::Approve).await
}

/// The reject form.
#[derive(Debug, Deserialize)]
pub struct RejectForm {
    #[serde(default)]
    reason: String,
}

/// `POST /dashboard/approvals/{approval_id}/reject` (developer).
pub async fn reject(
    at: DashApproval<Developer>,
    State(state): State<AppState>,
    CsrfForm { form, .. }: CsrfForm<RejectForm>,
) -> Result<Response, PageError> {
    let reason = optional_text(&form.reason);
    decide(&state, at, Verdict::Reject { reason }).await
}

/// Takes the member's decision on the approval.
async fn decide(
    state: &AppState,
    at: DashApproval<Developer>,
    verdict: Verdict,
) -> Result<Response, PageError> {
    let approval_id = at.approval.approval_id;
    let outcome = approvals::decide(
        &state.services,
        &at.game,
        at.approval,
        at.stored,
        verdict,
        &at.user.by(),
    )
    .await
    .map(|_| ());
    or_conflict(state, &at.user, approval_id, outcome).await
}
