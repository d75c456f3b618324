//! The live page: the kill switch (its level, its reason and, for an admin, the form that
//! changes it), the SDK sessions this node holds for the game and the decisions this node
//! served recently with their trace; and the step that confirms a change of the kill switch.

use maud::{Markup, html};
use offer_domain::game::Game;
use offer_domain::offer::KillSwitch;
use offer_domain::validation::FieldError;
use uuid::Uuid;

use crate::auth::Role;
use crate::dashboard::layout::{csrf, field_errors};
use crate::dashboard::session::SignedIn;
use crate::service::play::decision_log::ShadowReport;

/// What the live page shows of a game now.
pub struct Live<'a> {
    /// The kill switch.
    pub kill_switch: &'a KillSwitch,
    /// The SDK sessions of the game on this node.
    pub sessions: usize,
    /// The decisions this node served recently and the silent shadow picks.
    pub report: &'a ShadowReport,
}

fn level_name(level: u8) -> &'static str {
    match level {
        0 => "0: normal",
        1 => "1: AI off (studio bundles and the store shelf still serve)",
        2 => "2: offers off",
        _ => "3: SDK off",
    }
}

/// The live page of the game `game_id`, with the refusal of a kill-switch change (`errors`).
pub fn page(user: &SignedIn, game_id: Uuid, live: &Live<'_>, errors: &[FieldError]) -> Markup {
    let (ks, report) = (live.kill_switch, live.report);
    let level = ks.level.as_u8();
    let sessions = live.sessions;
    let action = format!("/dashboard/games/{game_id}/kill-switch");
    html! {
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
    }
}

/// The step before a change of the kill switch of `game`: to `level`, for `reason`.
pub fn confirm(user: &SignedIn, game: &Game, level: u8, reason: &str) -> Markup {
    html! {
        h1 { "Confirm the kill switch" }
        p { "Set the kill switch of " strong { (game.name) } " to level " strong { (level_name(level)) } "?" }
        p.muted { "Every connected game hears it at once." }
        form method="post" action={ "/dashboard/games/" (game.game_id) "/kill-switch" } {
            (csrf(user))
            input type="hidden" name="level" value=(level);
            input type="hidden" name="reason" value=(reason);
            input type="hidden" name="confirmed" value="yes";
            button.danger #confirm type="submit" { "Yes, set level " (level) }
        }
        p { a href={ "/dashboard/games/" (game.game_id) "/live" } { "Cancel" } }
    }
}
