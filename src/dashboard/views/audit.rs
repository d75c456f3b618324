//! The audit trail page: a filter form (from a day, an action) and a table of the records,
//! each with its time, actor, surface, action, object and the changed fields before and
//! after, with a link to older records.

use chrono::NaiveDate;
use maud::{Markup, html};
use offer_domain::audit::{Actor, AuditEntry};
use uuid::Uuid;

/// The filters as the form shows them.
pub struct Filters<'a> {
    /// From this day.
    pub since: Option<NaiveDate>,
    /// Actions starting with this.
    pub action: &'a str,
}

/// An actor as shown.
fn actor(a: &Actor) -> String {
    match a {
        Actor::Member(email) => email.clone(),
        Actor::Key(id) => format!("key {id}"),
        Actor::Operator(tool) => format!("operator ({tool})"),
    }
}

/// The page of `game_id`'s records `entries`, filtered by `filters`; `older` is the cursor
/// of the next page.
pub fn page(
    game_id: Uuid,
    filters: &Filters<'_>,
    entries: &[AuditEntry],
    older: Option<&str>,
) -> Markup {
    let since = filters.since.map(|d| d.to_string()).unwrap_or_default();
    html! {
        h1 { "Audit trail" }
        p.muted { "Every change a member, a key or the operator made to this game, newest first. Secrets are never shown: a changed secret reads [redacted]." }
        form method="get" action={ "/dashboard/games/" (game_id) "/audit" } {
            label { "From day " input type="date" name="since" value=(since); }
            " "
            label { "Action starts with " input type="text" name="action" value=(filters.action) placeholder="kill_switch"; }
            " "
            button type="submit" { "Filter" }
        }
        @if entries.is_empty() {
            p { "No change recorded for these filters." }
        } @else {
            div.table-wrap { table #audit {
                thead { tr {
                    th { "When (UTC)" } th { "Who" } th { "Via" } th { "Action" } th { "Object" }
                    th { "Before" } th { "After" }
                } }
                tbody {
                    @for e in entries {
                        tr data-action=(e.action) {
                            td { (e.at.format("%Y-%m-%d %H:%M:%S")) }
                            td { (actor(&e.actor)) }
                            td { (format!("{:?}", e.via).to_lowercase()) }
                            td { code { (e.action) } }
                            td { (e.object.kind) " " code { (e.object.id) } }
                            td { code { (e.before) } }
                            td { code { (e.after) } }
                        }
                    }
                }
            } }
        }
        @if let Some(cursor) = older {
            p { a href={ "/dashboard/games/" (game_id) "/audit?cursor=" (cursor) "&action=" (filters.action) "&since=" (since) } { "Older changes" } }
        }
    }
}
