//! The authoring runs of a game: the list (mode, who opened it, whether a cloud run waits for
//! its confirmation, the calls and limits it took), and one run's page with its calls and,
//! for a cloud run not confirmed yet, the Confirm button (developer; a note instead for the
//! member who approved the run's key).

use maud::{Markup, html};
use uuid::Uuid;

use crate::auth::Role;
use crate::dashboard::layout::{Tab, csrf};
use crate::dashboard::session::SignedIn;
use crate::service::authoring::runs::{self, MAX_COMPARISONS, MAX_VALIDATIONS, Run, RunMode};

/// Where the runs of the game `game_id` are listed.
pub fn path(game_id: Uuid) -> String {
    format!("{}/runs", Tab::CustomPages.href(game_id))
}

fn mode_name(mode: RunMode) -> &'static str {
    match mode {
        RunMode::Local => "local",
        RunMode::Cloud => "cloud",
    }
}

/// Whether the run takes calls, or waits for a second member.
fn state_of(run: &Run) -> Markup {
    html! {
        @match (run.mode, &run.confirmed_by) {
            (RunMode::Local, _) => { "taking calls" }
            (RunMode::Cloud, Some(by)) => { "confirmed by " (by) }
            (RunMode::Cloud, None) => { strong { "waits for confirmation" } }
        }
    }
}

/// The runs of the game `game_id`, newest first as the runs service lists them.
pub fn list(game_id: Uuid, list: &[Run]) -> Markup {
    let base = path(game_id);
    html! {
        h1 { "Authoring runs" }
        p.muted {
            "Each session of the authoring tool, with its calls, kept 30 days. A run in the cloud takes no call until a developer other than the one who approved its key confirms it. "
            a href=(Tab::CustomPages.href(game_id)) { "Custom pages" }
        }
        @if list.is_empty() { p.muted { "No authoring run yet." } }
        div.table-wrap { table #runs {
            thead { tr { th { "Opened" } th { "Mode" } th { "By" } th { "State" } th { "Validations" } th { "Comparisons" } th { "Calls" } } }
            tbody {
                @for r in list {
                    tr data-run-id=(r.run_id) {
                        td { a href={ (base) "/" (r.run_id) } { (r.created_at.format("%Y-%m-%d %H:%M")) } }
                        td { (mode_name(r.mode)) }
                        td { (r.opened_by) }
                        td.state { (state_of(r)) }
                        td { (r.validations) " of " (MAX_VALIDATIONS) }
                        td { (r.comparisons) " of " (MAX_COMPARISONS) }
                        td { (r.calls.len()) }
                    }
                }
            }
        } }
    }
}

fn calls(game_id: Uuid, run: &Run) -> Markup {
    html! {
        div.table-wrap { table #calls {
            thead { tr { th { "#" } th { "Call" } th { "At" } th { "By" } th { "Answer" } th { "Result" } } }
            tbody {
                @for c in &run.calls {
                    tr {
                        td { (c.seq) }
                        td { (runs::kind_name(c.kind)) }
                        td { (c.at.format("%H:%M:%S")) }
                        td { (c.by) }
                        @match &c.outcome {
                            None => { td.muted { "no answer recorded" } td {} }
                            Some(o) => {
                                td { (o.status) @if let Some(code) = &o.code { " " code { (code) } } }
                                td {
                                    @if let Some(valid) = o.valid { @if valid { "valid" } @else { "invalid" } }
                                    @if let Some(n) = o.blockers { ", " (n) " blockers" }
                                    @if let (Some(page), Some(v)) = (o.page_id, o.version) {
                                        a href={ (Tab::CustomPages.href(game_id)) "/" (page) "?version=" (v) } { "page version " (v) }
                                    }
                                    @if let Some(score) = o.score { "score " (format!("{score:.2}")) }
                                }
                            }
                        }
                    }
                }
            }
        } }
    }
}

/// A run's page, with why its confirmation was refused (`refused`) when it was.
pub fn page(user: &SignedIn, game_id: Uuid, run: &Run, refused: Option<&str>) -> Markup {
    let run_id = run.run_id;
    let waits = run.mode == RunMode::Cloud && run.confirmed_at.is_none();
    let mine = run.approver() == Some(user.caller.sub.as_str());
    html! {
        h1 { "Authoring run" }
        dl {
            dt { "Run" } dd { code { (run.run_id) } }
            dt { "Mode" } dd #run-mode { (mode_name(run.mode)) }
            dt { "Opened" } dd { (run.created_at.format("%Y-%m-%d %H:%M")) " UTC by " (run.opened_by) }
            @if let Some(by) = &run.key_issued_by { dt { "Key approved by" } dd { (by) } }
            dt { "State" } dd #run-state { (state_of(run)) }
            dt { "Validations" } dd { (run.validations) " of " (MAX_VALIDATIONS) }
            dt { "Comparisons" } dd { (run.comparisons) " of " (MAX_COMPARISONS) }
            dt { "Kept until" } dd { (run.expires_at.format("%Y-%m-%d")) }
        }
        @if waits && user.can(Role::Developer) {
            @if mine {
                p.muted #confirm-note { "You approved this run's key: another developer of the studio confirms it." }
            } @else {
                form method="post" action={ (path(game_id)) "/" (run_id) "/confirm" }
                    data-confirm="Confirm this cloud run? The hosted assistant may then validate, draft and preview pages of this game." {
                    (csrf(user))
                    p.muted { "A hosted assistant asks to work on this game's custom pages. Confirm only a run you expect." }
                    button #confirm-run type="submit" { "Confirm" }
                }
            }
        }
        @if let Some(why) = &refused { p.field-error #error-confirm role="alert" { (why) } }
        h2 { "Calls" }
        @if run.calls.is_empty() { p.muted { "No call yet." } } @else { (calls(game_id, run)) }
        p { a href=(path(game_id)) { "Back to the runs" } }
    }
}
