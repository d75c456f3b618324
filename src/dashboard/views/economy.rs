//! The economy page: the daily faucet/sink ratio as a line chart with the genre's healthy
//! band shaded, the quadrant, each currency's earned and spent units, the per-player day caps in
//! force and what they left out, the events refused by code; the revenue counted, refunded
//! and kept unverified; the holdout comparison (ARPU of both groups, uplift, p-value), the
//! five revenue-share conditions with pass or fail, the plan and the next bill, the month so
//! far and the last closed month's statement, each with its adjustment lines (refunds of
//! earlier months' purchases), the statement's CSV download, and the link to the samples
//! export.

use maud::{Markup, html};
use offer_domain::adjustment::AdjustmentLine;
use offer_domain::day_caps::CapSource;
use offer_domain::fsr::FsrReport;
use offer_domain::holdout_arpu::{HoldoutArpu, RevenueBasis};
use offer_domain::revenue_share::{ConditionValue, RevenueShare};
use uuid::Uuid;

use super::chart::{self, Point};
use crate::service::economy::revenue::RevenueByProof;
use crate::service::play::refused_events::RefusedEvents;

/// What the economy page shows.
pub struct Figures<'a> {
    /// The ratio report.
    pub report: &'a FsrReport,
    /// The holdout comparison.
    pub arpu: &'a HoldoutArpu,
    /// The revenue by proof over the page's days.
    pub revenue: &'a RevenueByProof,
    /// The revenue-share standing.
    pub share: &'a RevenueShare,
    /// The events refused over the page's days.
    pub refused: &'a RefusedEvents,
}

/// The economy of the game `game_id` over the last `days`.
pub fn page(game_id: Uuid, days: i64, figures: &Figures<'_>) -> Markup {
    let Figures {
        report,
        arpu,
        revenue,
        share,
        refused,
    } = *figures;
    let points: Vec<Point> = report
        .daily_fsr
        .iter()
        .map(|d| Point {
            label: d.date.format("%Y-%m-%d").to_string(),
            value: d.fsr,
        })
        .collect();
    let quadrant = report
        .quadrant
        .and_then(|q| serde_json::to_value(q).ok())
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_else(|| "none (nothing moved)".to_owned());
    let c = &share.conditions;
    html! {
        h1 { "Economy" }
        section {
            h2 { "Faucet/sink ratio, last " (days) " days" }
            p { "Ratio over the period: " strong { (report.fsr.map_or_else(|| "n/a".to_owned(), |f| format!("{f:.2}"))) }
                " · quadrant: " strong #quadrant { (quadrant) }
                " · healthy band of " (report.genre) ": " (format!("{:.2} to {:.2}", report.thresholds.min, report.thresholds.max)) " (shaded)" }
            (chart::line("Daily faucet/sink ratio with the healthy band shaded", &points, report.thresholds.min, report.thresholds.max))
            div.table-wrap { table #currencies {
                thead { tr { th { "Currency" } th { "Earned" } th { "Spent" } th { "Ratio" } } }
                tbody { @for cur in &report.currency_summary {
                    tr { td { (cur.currency_id) } td { (cur.earned) } td { (cur.spent) }
                         td { (cur.fsr.map(|f| format!("{f:.2}")).unwrap_or_default()) } }
                } }
            } }
        }
        section {
            h2 { "Left out of the figures, last 7 days" }
            p.muted { "Units a player earns or spends above their cap for the day reach their wallet and the ledger, but not the ratio, the quadrant or the approval simulation. A currency's cap is its max_per_player_day when the studio set one, otherwise 3 times the 99th percentile of players' day totals over the 7 days before today (once there are at least 100 player-days)." }
            div.table-wrap { table #day-caps {
                thead { tr { th { "Currency" } th { "Cap earned / spent" } th { "Cap from" }
                             th { "Earned left out" } th { "Spent left out" } th { "Players capped (per day)" } } }
                tbody { @for c in &report.day_caps {
                    tr data-currency=(c.currency_id) {
                        td { (c.currency_id) }
                        td { (cap(c.earned_cap)) " / " (cap(c.spent_cap)) }
                        td.source { (source(c.cap_source)) }
                        td.earned-left-out { (c.earned_left_out) }
                        td.spent-left-out { (c.spent_left_out) }
                        td.players-capped { (c.earned_players_capped.saturating_add(c.spent_players_capped)) }
                    }
                } }
            } }
            h3 { "Events refused, last " (refused.days) " days" }
            p { "In all: " strong #refused-total { (refused.total) } }
            div.table-wrap { table #refused {
                thead { tr { th { "Code" } th { "Events" } } }
                tbody { @for (code, n) in &refused.by_code {
                    tr data-code=(code) { td { code { (code) } } td.count { (n) } }
                } }
            } }
        }
        (revenue_section(revenue))
        section {
            h2 { "Holdout comparison" }
            dl {
                dt { "ARPU of treated players" } dd #arpu-treatment { (format!("${:.2}", arpu.treatment_arpu)) " (" (arpu.n_treatment) " players)" }
                dt { "ARPU of the holdout" } dd #arpu-control { (format!("${:.2}", arpu.control_arpu)) " (" (arpu.n_control) " players)" }
                dt { "Uplift" } dd #uplift { (pct(arpu.uplift_pct)) }
                dt { "p-value (one-sided Mann-Whitney)" } dd #p-value { (format!("{:.4}", arpu.p_value)) }
                dt { "Days live" } dd { (arpu.days_live) " (" (arpu.days_excluded) " unhealthy days left out)" }
            }
            p { a #samples href={ "/dashboard/games/" (game_id) "/economy/samples.csv" } { "Export the samples (CSV)" } }
        }
        section {
            h2 { "Revenue share" }
            div.table-wrap { table #conditions {
                thead { tr { th { "Condition" } th { "Now" } th { "Result" } } }
                tbody {
                    (condition("At least 10,000 treated players", "n_treatment", &c.n_treatment_gte_10k, format!("{}", c.n_treatment_gte_10k.value)))
                    (condition("At least 1,000 holdout players", "n_control", &c.n_control_gte_1k, format!("{}", c.n_control_gte_1k.value)))
                    (condition("At least 30 days live", "days_live", &c.days_live_gte_30, format!("{}", c.days_live_gte_30.value)))
                    (condition("p-value below 0.05", "p_value", &c.p_value_lt_0_05, format!("{:.4}", c.p_value_lt_0_05.value)))
                    (condition("ARPU uplift above zero", "uplift", &c.arpu_uplift_positive, format!("{:.2}", c.arpu_uplift_positive.value)))
                }
            } }
            p { "Eligible now: " strong #eligible { @if share.eligible { "yes" } @else { "no" } }
                " · plan " strong #plan { (share.plan) } " at " (format!("{:.1}%", share.rate_pct))
                " · " (share.monthly_players) " players this month"
                " · next bill " strong #next-bill { (share.next_bill.format("%Y-%m-%d")) } }
            p.muted { "Uplift revenue this month so far: " (format!("${:.2}", share.uplift_revenue_month_to_date_usd)) ". The standing is provisional until the month closes." }
            p #month-to-date { "This month so far: base fee " (format!("${:.2}", share.base_fee_usd))
                " + revenue share " (format!("${:.2}", share.revenue_share_usd))
                " = " strong { (format!("${:.2}", share.amount_due_usd)) } " due" }
            (adjustments("month-adjustments", &share.adjustments, share.adjustments_usd))
            @if let Some(d) = &share.last_decision {
                h3 { "Statement of " (d.month) }
                div.table-wrap { table #statement {
                    tbody {
                        tr { th { "Plan" } td { (d.plan) " (" (d.monthly_players) " monthly players)" } }
                        tr { th { "Base fee" } td { (format!("${:.2}", d.base_fee_usd)) } }
                        tr { th { "Eligible" } td { @if d.eligible { "yes" } @else { "no" } } }
                        tr { th { "Uplift revenue" } td { (format!("${:.2}", d.uplift_revenue_usd)) } }
                        tr { th { "Revenue share" } td { (format!("${:.2}", d.revenue_share_usd)) " (" (format!("{:.1}%", d.rate_pct)) ")" } }
                        tr { th { "Amount due" } td #amount-due { strong { (format!("${:.2}", d.amount_due_usd)) } } }
                    }
                } }
                (adjustments("adjustments", &d.adjustments, d.adjustments_usd))
                p { a #statement-csv href={ "/dashboard/games/" (game_id) "/economy/statement.csv?month=" (d.month) } { "Download the statement (CSV, admins)" } }
            }
        }
    }
}

/// A month's adjustment lines and their sum, under ids `id` (the table) and `{id}-usd` (the
/// sum): the month so far and the last statement each show theirs alike. Nothing when there
/// are none.
fn adjustments(id: &str, lines: &[AdjustmentLine], total_usd: f64) -> Markup {
    html! {
        @if !lines.is_empty() {
            h4 { "Adjustments" }
            p.muted { "Store refunds (and their reversals) that arrived this month for purchases of an earlier month. Each is already counted in this month's figures, so the amount due does not add them: "
                strong id={ (id) "-usd" } { (signed_usd(total_usd)) } " in all." }
            div.table-wrap { table id=(id) {
                thead { tr { th { "Arrived" } th { "Kind" } th { "Store" } th { "Transaction" } th { "Bought in" } th { "Group" } th { "Amount" } } }
                tbody {
                    @for line in lines {
                        tr {
                            td { (line.recorded_at.format("%Y-%m-%d")) }
                            td { (line.kind.as_str()) }
                            td { (line.store.as_str()) }
                            td { code { (line.transaction_id) } }
                            td { (line.purchase_month) }
                            td { (line.group.as_str()) }
                            td { (signed_usd(line.amount_usd)) }
                        }
                    }
                }
            } }
        }
    }
}

/// The revenue counted, refunded and kept unverified, side by side.
fn revenue_section(r: &RevenueByProof) -> Markup {
    let usd = |cents: i64| format!("${:.2}", cents as f64 / 100.0);
    let counted = match r.revenue_basis {
        RevenueBasis::Verified => "Verified by the stores, net of refunds",
        RevenueBasis::Reported => "As the game reported it, net of refunds",
    };
    html! {
        section {
            h2 { "Revenue, last " (r.days) " days" }
            p.muted { "What counts is what the holdout comparison and the bill read. "
                @if r.revenue_basis == RevenueBasis::Verified {
                    "The game checks store receipts: it counts from " (r.counted_from.format("%Y-%m-%d"))
                    " on, and purchases kept without a store's proof are granted but never counted."
                } @else {
                    "The game does not check store receipts: purchases count as it reports them."
                } }
            div.table-wrap { table #revenue {
                tbody {
                    tr { th { (counted) } td #revenue-counted { (usd(r.counted_cents)) } }
                    tr { th { "Refunded by the stores" } td #revenue-refunded { (usd(r.refunded_cents)) } }
                    tr { th { "Unverified or imported (not counted)" } td #revenue-unverified { (usd(r.unverified_cents)) } }
                }
            } }
        }
    }
}

fn condition(name: &str, id: &str, c: &ConditionValue, shown: String) -> Markup {
    html! {
        tr data-condition=(id) {
            td { (name) }
            td { (shown) }
            td.verdict { @if c.pass { "pass" } @else { "fail" } }
        }
    }
}

/// An amount in USD with its sign before the dollar: `-$4.99`, `$0.99`.
fn signed_usd(v: f64) -> String {
    if v < 0.0 {
        format!("-${:.2}", -v)
    } else {
        format!("${v:.2}")
    }
}

fn cap(v: Option<i64>) -> String {
    v.map_or_else(|| "none".to_owned(), |v| v.to_string())
}

fn source(s: Option<CapSource>) -> &'static str {
    match s {
        Some(CapSource::Studio) => "studio (max_per_player_day)",
        Some(CapSource::Derived) => "derived from players",
        None => "no cap yet",
    }
}

fn pct(v: Option<f64>) -> String {
    v.map_or_else(|| "n/a".to_owned(), |v| format!("{v:+.1}%"))
}
