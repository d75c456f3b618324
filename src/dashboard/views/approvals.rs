//! Approvals: a game's queue (pending first, then the decided ones; a custom page waiting
//! with its preview screenshots), and one approval's page with the offer or custom page under
//! review (a page with its screenshots, its template's source and the validator's verdict on
//! it), its simulation (pass rate, the FSR bounds against the genre's healthy band) and the
//! approve and reject forms (developer).

use maud::{Markup, html};
use offer_domain::approval::{Approval, ApprovalStatus};
use offer_domain::custom_page::PublishedPage;
use offer_domain::simulation::SimulationResult;
use offer_domain::template::{Finding, Validation};

use super::shots::shots;
use crate::auth::Role;
use crate::dashboard::layout::{Tab, csrf};
use crate::dashboard::session::SignedIn;
use crate::service::authoring::previews::Preview;

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

/// The queue of a game: each approval with, for a pending custom page, the newest preview of
/// its version (`Some(None)` when it has none).
pub fn queue(list: &[(Approval, Option<Option<Preview>>)]) -> Markup {
    html! {
        h1 { "Approvals" }
        @if list.is_empty() { p.muted { "Nothing waits for an approval." } }
        div.table-wrap { table #approvals {
            thead { tr { th { "Queued" } th { "What" } th { "State" } th { "Simulation" } } }
            tbody {
                @for (a, preview) in list {
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

/// What an approval's page shows of a custom page under review: the newest preview of its
/// version, the page's content and the validator's verdict on it now.
pub struct PageUnderReview {
    /// The newest preview of the version, if any.
    pub preview: Option<Preview>,
    /// The page's content.
    pub content: PublishedPage,
    /// The validator's verdict against the catalogue of now.
    pub verdict: Validation,
}

/// An approval's page, with the `problem` of a decision refused (a conflict, a page that no
/// longer validates) when there is one.
pub fn page(
    user: &SignedIn,
    a: &Approval,
    review: Option<&PageUnderReview>,
    problem: Option<&str>,
) -> Markup {
    let base = format!("/dashboard/approvals/{}", a.approval_id);
    html! {
        h1 { "Approval" }
        @if let Some(problem) = problem { p.error role="alert" { (problem) } }
        p { (subject(a)) }
        p { "State: " strong #approval-state { (status_name(a.status)) }
            @if let Some(by) = &a.decided_by { " by " (by) }
            @if let Some(reason) = &a.reason { " (" (reason) ")" } }
        @if let Some(review) = review {
            section #page-preview {
                h2 { "The page under review" }
                (shots(a.game_id, review.preview.as_ref()))
            }
            (page_review(&review.content, &review.verdict))
        }
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
    }
}
