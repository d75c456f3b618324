//! The experiments page: per experiment, whether its results are provisional, the
//! sample-ratio check, and a table of its variants with their figures and their comparison
//! with the control.

use maud::{Markup, html};
use offer_domain::environment::Environment;
use offer_domain::experiment_results::ExperimentResults;
use uuid::Uuid;

/// A p-value as shown.
fn p(value: f64) -> String {
    if value < 1e-4 {
        format!("{value:.1e}")
    } else {
        format!("{value:.4}")
    }
}

/// An interval as shown, `n/a` when there is none.
fn interval(ci: Option<[f64; 2]>, scale: f64, digits: usize) -> String {
    ci.map_or_else(
        || "n/a".to_owned(),
        |[lo, hi]| format!("[{:.digits$}, {:.digits$}]", lo * scale, hi * scale),
    )
}

/// The page of the game `game_id`'s experiments in `env`.
pub fn page(game_id: Uuid, env: Environment, all: &[ExperimentResults]) -> Markup {
    let (other, other_name) = match env {
        Environment::Production => ("sandbox", "Sandbox"),
        Environment::Sandbox => ("production", "Production"),
    };
    html! {
        h1 { "Experiments" }
        p.muted {
            "Players exposed: shown at least one offer the experiment priced. Each variant is compared with the first (the control). "
            a href={ "/dashboard/games/" (game_id) "/experiments?environment=" (other) } { (other_name) " results" }
        }
        @if all.is_empty() {
            p { "No experiment. Create one on the " a href={ "/dashboard/games/" (game_id) "/offers" } { "Offers" } " page." }
        }
        @for r in all {
            section id={ "experiment-" (r.experiment_id) } data-experiment-id=(r.experiment_id) {
                h2 { "Experiment " code { (r.experiment_id) } }
                p {
                    @if r.provisional {
                        strong.provisional { "Provisional" } ": a variant has fewer than " (r.min_sample) " exposed players. "
                    } @else {
                        "Every variant has at least " (r.min_sample) " exposed players. "
                    }
                    "Revenue: " (r.revenue_basis.as_str()) "."
                }
                @if r.sample_ratio.mismatch {
                    p.field-error role="alert" data-srm="mismatch" {
                        "Sample ratio mismatch (p = " (p(r.sample_ratio.p_value)) "): the exposed players do not split as the weights say; do not trust this comparison."
                    }
                } @else {
                    p.muted data-srm="ok" { "Sample ratio check: p = " (p(r.sample_ratio.p_value)) "." }
                }
                div.table-wrap { table {
                    thead { tr {
                        th { "Variant" } th { "Weight" } th { "Exposed" } th { "Buyers" } th { "Conversion" }
                        th { "Shown" } th { "Purchases" } th { "Revenue / exposed" }
                        th { "Conversion diff (95% CI), p" } th { "Revenue / exposed diff, Mann-Whitney p" } th { "Welch 95% CI (descriptive)" }
                    } }
                    tbody {
                        @for v in &r.variants {
                            tr data-variant=(v.name) {
                                td { (v.name) }
                                td { (v.weight) }
                                td.exposed { (v.exposed_players) }
                                td { (v.buyers) }
                                td { (format!("{:.2}%", v.conversion * 100.0)) }
                                td { (v.offers_shown) }
                                td { (v.purchases) }
                                td { (format!("${:.4}", v.revenue_per_exposed_usd)) }
                                @if let Some(c) = &v.versus_control {
                                    td { (format!("{:+.2} pts ", c.conversion_diff * 100.0)) (interval(c.conversion_diff_ci95, 100.0, 2)) ", p = " (p(c.conversion_p_value)) }
                                    td { (format!("{:+.4} $", c.revenue_per_exposed_diff_usd)) ", p = " (p(c.revenue_p_value)) }
                                    td { (interval(c.revenue_diff_ci95_usd_descriptive, 1.0, 4)) }
                                } @else {
                                    td.muted colspan="3" { "control" }
                                }
                            }
                        }
                    }
                } }
            }
        }
    }
}
