//! Approvals: a game's queue (pending first, then the decided ones; a custom page waiting
//! with its preview screenshots), and one approval's page with the offer or custom page under
//! review (a page with its screenshots, its template's source and the validator's verdict on
//! it against the catalogue of now), its simulation (pass rate, the FSR bounds against the
//! genre's healthy band) and the approve and reject forms (developer). The approval and
//! simulation services decide everything; a decided approval is a 409 here too, and approving
//! a page that no longer validates a 422 shown on the approval's page.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use maud::{Markup, html};
use offer_domain::approval::{Approval, ApprovalStatus, Verdict};
use offer_domain::custom_page::PublishedPage;
use offer_domain::simulation::SimulationResult;
use offer_domain::template::{Finding, Validation};
use serde::Deserialize;
use uuid::Uuid;

use super::extract::PagePath;
use super::failure::PageError;
use super::forms::optional_text;
use super::layout::{self, Tab, csrf};
use super::session::{CsrfForm, NoFields, SignedIn, game_of};
use super::views::shots::shots;
use crate::auth::Role;
use crate::service::authoring::previews::{self, Preview};
use crate::service::{
    ServiceError, approval::approvals, approval::simulation, authoring::page_validation,
    authoring::published_page,
};
use crate::state::AppState;

fn status_name(status: ApprovalStatus) -> &'static str {
    match status {
        ApprovalStatus::Pending => "pending",
        ApprovalStatus::Approved => "approved",
        ApprovalStatus::Rejected => "rejected",
        ApprovalStatus::Expired => "expired",
    }
}

fn subject(a: &Approval) -> Markup {
    html! {
        @if let Some(o) = &a.offer {
            "Offer " strong { (o.definition_key) } " (level " (o.fallback_level) ", on " (o.trigger) "): "
            (o.item_ids.join(", ")) " for $" (format!("{:.2}", o.price_usd))
        } @else if let Some(p) = &a.page {
            "Custom page "
            a href={ (Tab::CustomPages.href(a.game_id)) "/" (p.page_id) "?version=" (p.version) } { code { (p.page_id) } }
            ", version " (p.version)
        }
    }
}

/// `GET /dashboard/games/{game_id}/approvals`: the queue.
pub async fn queue(
    State(state): State<AppState>,
    user: SignedIn,
    PagePath(game_id): PagePath<Uuid>,
) -> Result<Response, PageError> {
    let handle = game_of(&state.services, &user, game_id).await?;
    let view = handle.view();
    let mut list = approvals::list(&state.services, game_id, None).await?;
    list.sort_by_key(|a| a.status != ApprovalStatus::Pending);
    let mut shown = Vec::with_capacity(list.len());
    for a in &list {
        shown.push(page_preview(&state, a).await?);
    }
    let body = html! {
        h1 { "Approvals" }
        @if list.is_empty() { p.muted { "Nothing waits for an approval." } }
        div.table-wrap { table #approvals {
            thead { tr { th { "Queued" } th { "What" } th { "State" } th { "Simulation" } } }
            tbody {
                @for (a, preview) in list.iter().zip(&shown) {
                    tr data-approval-id=(a.approval_id) {
                        td { a href={ "/dashboard/approvals/" (a.approval_id) } { (a.created_at.format("%Y-%m-%d %H:%M")) } }
                        td {
                            (subject(a))
                            @if let Some(preview) = preview { div.small { (shots(a.game_id, preview.as_ref())) } }
                        }
                        td.state { (status_name(a.status)) }
                        td { @if let Some(s) = &a.simulation { @if s.pass { "passes" } @else { "fails" } } }
                    }
                }
            }
        } }
    };
    Ok(layout::game_page(
        StatusCode::OK,
        &user,
        "Approvals",
        (&view.game, Tab::Approvals),
        body,
    ))
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

fn fsr(v: Option<f64>) -> String {
    v.map_or_else(|| "none".to_owned(), |v| format!("{v:.2}"))
}

fn simulation_view(s: &SimulationResult) -> Markup {
    let g = &s.genre_context;
    html! {
        section #simulation {
            h2 { "Simulation" }
            p { strong #sim-verdict { @if s.pass { "Passes" } @else { "Fails" } } }
            dl {
                dt { "Pass rate" } dd #pass-rate { (format!("{:.1}%", s.pass_rate * 100.0)) " of " (s.monte_carlo_runs) " runs" }
                dt { "Players simulated" } dd { (s.n_players) }
                dt { "FSR bounds (5th to 95th percentile)" } dd #fsr-bounds { (fsr(s.fsr_bounds.lower)) " to " (fsr(s.fsr_bounds.upper)) }
                dt { "Healthy band of " (g.genre) } dd #healthy-band { (format!("{:.2} to {:.2}", g.healthy_fsr_min, g.healthy_fsr_max)) }
                dt { "Aggregate FSR now" } dd { (fsr(s.aggregate_fsr)) }
                dt { "Seed" } dd { (s.seed) }
            }
        }
    }
}

/// A finding's gate as the validator names it (`secret_pattern_found`).
fn gate_name(f: &Finding) -> String {
    serde_json::to_value(f.gate)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

fn findings(id: &str, list: &[Finding]) -> Markup {
    html! {
        ul #(id) {
            @for f in list {
                li data-gate=(gate_name(f)) {
                    code { (gate_name(f)) }
                    @if let Some(line) = f.line { " line " (line) }
                    ": " (f.message)
                }
            }
        }
    }
}

/// The custom page under review: the validator's verdict on it now and its source, both
/// escaped as any text of the page.
fn page_review(page: &PublishedPage, verdict: &Validation) -> Markup {
    html! {
        section #validation {
            h2 { "Validation" }
            p.muted { "Every gate of the validator, against the game's catalogue as it is now. Approving runs it again and publishes only a page that passes." }
            @if verdict.valid {
                p #validation-verdict { strong { "Valid" } }
            } @else {
                p #validation-verdict.error { strong { "Not valid" } ": approving it is refused while a blocker remains." }
                h3 { "Blockers" }
                (findings("blockers", &verdict.blockers))
            }
            @if !verdict.warnings.is_empty() {
                h3 { "Warnings" }
                (findings("warnings", &verdict.warnings))
            }
        }
        section #page-template {
            h2 { "Template of version " (page.version) }
            pre { code #template-source { (page.template) } }
        }
    }
}

async fn approval_page(
    state: &AppState,
    user: &SignedIn,
    approval_id: Uuid,
    problem: Option<String>,
    status: StatusCode,
) -> Result<Response, PageError> {
    let (a, _, handle) =
        approvals::get_for_studio(&state.services, &user.caller.studio_id, approval_id).await?;
    let view = handle.view();
    let (preview, review) = match &a.page {
        Some(p) => {
            let newest =
                previews::newest_of(&state.services, a.game_id, p.page_id, p.version).await?;
            let content = published_page::content(&state.services, a.game_id, *p).await?;
            let bindings = serde_json::Value::Object(content.bindings.clone());
            let verdict =
                page_validation::check(&handle, content.template.clone(), bindings).await?;
            (Some(newest), Some((content, verdict)))
        }
        None => (None, None),
    };
    let base = format!("/dashboard/approvals/{approval_id}");
    let body = html! {
        h1 { "Approval" }
        @if let Some(problem) = &problem { p.error role="alert" { (problem) } }
        p { (subject(&a)) }
        p { "State: " strong #approval-state { (status_name(a.status)) }
            @if let Some(by) = &a.decided_by { " by " (by) }
            @if let Some(reason) = &a.reason { " (" (reason) ")" } }
        @if let Some(preview) = &preview {
            section #page-preview {
                h2 { "The page under review" }
                (shots(a.game_id, preview.as_ref()))
            }
        }
        @if let Some((content, verdict)) = &review { (page_review(content, verdict)) }
        @if let Some(s) = &a.simulation { (simulation_view(s)) }
        @if a.status == ApprovalStatus::Pending && user.can(Role::Developer) {
            @if a.offer.is_some() {
                form.inline method="post" action={ (base) "/simulate" } {
                    (csrf(user))
                    button #simulate type="submit" { "Simulate" }
                }
                " "
            }
            form.inline method="post" action={ (base) "/approve" } {
                (csrf(user))
                button #approve type="submit" { "Approve" }
            }
            form method="post" action={ (base) "/reject" } {
                (csrf(user))
                label for="reason" { "Reason to reject (optional)" }
                input #reason type="text" name="reason" maxlength="1000";
                button.danger #reject type="submit" { "Reject" }
            }
        }
        p { a href={ "/dashboard/games/" (a.game_id) "/approvals" } { "Back to the queue" } }
    };
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
    State(state): State<AppState>,
    user: SignedIn,
    PagePath(approval_id): PagePath<Uuid>,
) -> Result<Response, PageError> {
    approval_page(&state, &user, approval_id, None, StatusCode::OK).await
}

/// Shows a conflict (decided meanwhile, a page simulated) or a page that no longer
/// validates on the approval's page, which shows the verdict itself.
async fn or_conflict(
    state: &AppState,
    user: &SignedIn,
    approval_id: Uuid,
    outcome: Result<(), ServiceError>,
) -> Result<Response, PageError> {
    match outcome {
        Ok(()) => Ok(Redirect::to(&format!("/dashboard/approvals/{approval_id}")).into_response()),
        Err(ServiceError::Conflict(why)) => {
            approval_page(state, user, approval_id, Some(why), StatusCode::CONFLICT).await
        }
        Err(ServiceError::PageInvalid(_)) => {
            let why = "The page does not pass validation: it was not published and the approval still waits.".to_owned();
            approval_page(
                state,
                user,
                approval_id,
                Some(why),
                StatusCode::UNPROCESSABLE_ENTITY,
            )
            .await
        }
        Err(e) => Err(e.into()),
    }
}

/// `POST /dashboard/approvals/{approval_id}/simulate` (developer).
pub async fn simulate(
    State(state): State<AppState>,
    PagePath(approval_id): PagePath<Uuid>,
    CsrfForm { user, .. }: CsrfForm<NoFields>,
) -> Result<Response, PageError> {
    let (approval, _, handle) =
        approvals::get_for_studio(&state.services, &user.caller.studio_id, approval_id).await?;
    user.require(Role::Developer)?;
    let outcome = simulation::simulate(&state.services, &handle, &approval, None)
        .await
        .map(|_| ());
    or_conflict(&state, &user, approval_id, outcome).await
}

/// `POST /dashboard/approvals/{approval_id}/approve` (developer).
pub async fn approve(
    State(state): State<AppState>,
    PagePath(approval_id): PagePath<Uuid>,
    CsrfForm { user, .. }: CsrfForm<NoFields>,
) -> Result<Response, PageError> {
    decide(&state, &user, approval_id, Verdict::Approve).await
}

/// The reject form.
#[derive(Debug, Deserialize)]
pub struct RejectForm {
    #[serde(default)]
    reason: String,
}

/// `POST /dashboard/approvals/{approval_id}/reject` (developer).
pub async fn reject(
    State(state): State<AppState>,
    PagePath(approval_id): PagePath<Uuid>,
    CsrfForm { user, form }: CsrfForm<RejectForm>,
) -> Result<Response, PageError> {
    let reason = optional_text(&form.reason);
    decide(&state, &user, approval_id, Verdict::Reject { reason }).await
}

async fn decide(
    state: &AppState,
    user: &SignedIn,
    approval_id: Uuid,
    verdict: Verdict,
) -> Result<Response, PageError> {
    let (approval, bytes, handle) =
        approvals::get_for_studio(&state.services, &user.caller.studio_id, approval_id).await?;
    user.require(Role::Developer)?;
    let outcome = approvals::decide(
        &state.services,
        &handle,
        approval,
        bytes,
        verdict,
        &user.caller.sub,
    )
    .await
    .map(|_| ());
    or_conflict(state, user, approval_id, outcome).await
}
