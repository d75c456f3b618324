//! The model page: how much the AI level's learner remembers, and for each trigger the arm
//! it would pick now with its estimated conversion, interval, evidence and strongest
//! features.

use maud::{Markup, html};
use offer_domain::bandit::Arm;

use crate::service::play::model::{ArmEstimate, ModelReport};

/// An arm as a studio reads it: `currency at $4.99`.
fn arm_text(arm: &Arm) -> String {
    let category = serde_json::to_value(arm.category)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default();
    format!(
        "{category} at ${}.{:02}",
        arm.price_cents / 100,
        arm.price_cents % 100
    )
}

/// A conversion and its interval, in percent.
fn conversion_text(e: &ArmEstimate) -> String {
    format!(
        "{:.1}% ({:.1}% to {:.1}%)",
        100.0 * e.conversion,
        100.0 * e.conversion_low,
        100.0 * e.conversion_high
    )
}

/// The model page of one game's learner.
pub fn page(report: &ModelReport) -> Markup {
    html! {
        h1 { "Model" }
        p.summary { (report.summary) }
        p {
            "Offers counted: " (report.offers)
            ". Offers remembered: " (format!("{:.0}", report.effective_observations))
            ". Evidence fades by half every " (report.half_life_offers) " offers shown."
            @if report.restarts > 0 {
                " Started again after a change of taste: " (report.restarts)
                " time(s), last at offer " (report.learning_since_offer) "."
            }
        }
        section {
            h2 { "What it would offer now, by trigger" }
            @if report.by_trigger.is_empty() {
                p { "No trigger yet: no decision on this node, and no template or bundle names one." }
            } @else {
                table.model {
                    thead { tr {
                        th { "Trigger" } th { "Pick" } th { "Conversion (95% interval)" }
                        th { "Revenue per offer" } th { "Evidence (offers)" }
                        th { "Recent players judged" } th { "Strongest features" }
                    } }
                    tbody {
                        @for t in &report.by_trigger {
                            tr data-trigger=(t.trigger) {
                                td { (t.trigger) }
                                td {
                                    (arm_text(&t.pick.arm))
                                    @if t.contexts > 0 {
                                        " (best for " (format!("{:.0}%", 100.0 * t.pick_share)) ")"
                                    }
                                    @if let Some(r) = &t.runner_up {
                                        br; small { "then " (arm_text(&r.arm)) }
                                    }
                                }
                                td { (conversion_text(&t.pick)) }
                                td { (format!("${:.2}", t.pick.expected_revenue_cents / 100.0)) }
                                td { (format!("{:.0}", t.pick.evidence_offers)) }
                                td { (t.contexts) }
                                td {
                                    @for f in &t.strongest_features {
                                        code { (f.feature) } " " (format!("{:+.2}", f.log_odds)) br;
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        section {
            h2 { "Offers remembered, by arm" }
            table.model {
                thead { tr { th { "Arm" } th { "Offers remembered" } } }
                tbody {
                    @for a in &report.arms {
                        tr { td { (arm_text(&a.arm)) } td { (format!("{:.0}", a.effective_observations)) } }
                    }
                }
            }
        }
    }
}
