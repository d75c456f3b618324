//! The offers page of a game: its L2 genre templates (a table, and the JSON box that
//! replaces them), its L3 bundles (a table, and the create form of [`bundle`]) and its price
//! experiments (a table, and the box of variants). The handlers of the offers and of the
//! bundles show it, with the refusal of the form that was sent (a 422 then).

use maud::{Markup, html};
use offer_actors::GameView;
use offer_domain::offer::{Template, Variant};
use offer_domain::validation::FieldError;

use super::bundle;
use crate::auth::Role;
use crate::dashboard::forms::bundle::BundleForm;
use crate::dashboard::layout::{csrf, field_errors, other_errors};
use crate::dashboard::session::SignedIn;

/// The fields a template's errors name.
const TEMPLATE_FIELDS: [&str; 5] = [
    "templates",
    "event_type",
    "categories",
    "discount_pct",
    "max_items",
];

/// The fields an experiment's errors name.
const EXPERIMENT_FIELDS: [&str; 5] = [
    "variants",
    "name",
    "price_usd",
    "price_multiplier",
    "min_sample",
];

/// A form of the page sent back with what the member typed and why it was refused.
pub enum Refused<'a> {
    /// The templates box.
    Templates(&'a str, Vec<FieldError>),
    /// The new bundle form.
    Bundle(&'a BundleForm, Vec<FieldError>),
    /// The new experiment box.
    Experiment(&'a str, Vec<FieldError>),
}

fn category_names(t: &Template) -> String {
    t.categories
        .iter()
        .filter_map(|c| serde_json::to_value(c).ok())
        .filter_map(|v| v.as_str().map(str::to_owned))
        .collect::<Vec<_>>()
        .join(", ")
}

fn variant_text(v: &Variant) -> String {
    let price = match (v.price_usd, v.price_multiplier) {
        (Some(p), _) => format!(" ${p:.2}"),
        (None, Some(m)) => format!(" x{m}"),
        (None, None) => String::new(),
    };
    format!("{} {}{price}", v.name, v.weight)
}

/// The offers page of the game `view`, with one form's refusal when there is one.
pub fn page(user: &SignedIn, view: &GameView, refused: Option<&Refused<'_>>) -> Markup {
    let base = format!("/dashboard/games/{}/offers", view.game.game_id);
    let writes = user.can(Role::Developer);
    let no_errors: Vec<FieldError> = Vec::new();
    let (templates_text, template_errors) = match refused {
        Some(Refused::Templates(text, errors)) => ((*text).to_owned(), errors),
        _ => (
            serde_json::to_string_pretty(&view.templates).unwrap_or_default(),
            &no_errors,
        ),
    };
    let empty_bundle = BundleForm::default();
    let (bundle_form, bundle_errors) = match refused {
        Some(Refused::Bundle(form, errors)) => (*form, errors),
        _ => (&empty_bundle, &no_errors),
    };
    let (variants_text, experiment_errors) = match refused {
        Some(Refused::Experiment(text, errors)) => (*text, errors),
        _ => ("", &no_errors),
    };
    html! {
        h1 { "Offers" }
        section {
            h2 { "Templates (L2)" }
            p.muted { "What the engine offers on each trigger event when no studio bundle fits: the categories it picks from, the discount and how many items. A new game starts with its genre's templates." }
            div.table-wrap { table #templates {
                thead { tr { th { "Event" } th { "Categories" } th { "Discount" } th { "Items at most" } } }
                tbody {
                    @for t in view.templates.iter() {
                        tr data-event=(t.event_type) {
                            td { (t.event_type) }
                            td { (category_names(t)) }
                            td { (t.discount_pct.map(|d| format!("{d}%")).unwrap_or_default()) }
                            td { (t.max_items.unwrap_or(1)) }
                        }
                    }
                }
            } }
            @if writes {
                form.card #templates-form method="post" action={ (base) "/templates" } {
                    (csrf(user))
                    label for="templates-json" { "Templates as JSON (the whole list replaces the stored one)" }
                    textarea #templates-json name="templates" rows="12" spellcheck="false" { (templates_text) }
                    @for field in TEMPLATE_FIELDS { (field_errors(template_errors, field)) }
                    (other_errors(template_errors, &TEMPLATE_FIELDS))
                    button type="submit" { "Save templates" }
                }
            }
        }
        section {
            h2 { "Bundles (L3)" }
            p.muted { "Exact sets of items at a price the studio chose, served in creation order on their trigger events (every event when none is named)." }
            div.table-wrap { table #bundles {
                thead { tr { th { "Name" } th { "Items" } th { "Price" } th { "Triggers" } } }
                tbody {
                    @for b in view.bundles.iter() {
                        tr data-bundle-id=(b.bundle_id) {
                            td { a href={ (base) "/bundles/" (b.bundle_id) } { (b.name) } }
                            td { (b.item_ids.join(", ")) }
                            td { (format!("${:.2}", b.price_usd)) }
                            td { @if b.triggers.is_empty() { span.muted { "every event" } } @else { (b.triggers.join(", ")) } }
                        }
                    }
                }
            } }
            @if writes {
                (bundle::form(user, &format!("{base}/bundles"), "Create bundle", bundle_form, bundle_errors))
            }
        }
        section {
            h2 { "Price experiments" }
            p.muted { "Each experiment splits players between variants by weight; a variant changes the price only. The oldest experiment prices offers." }
            div.table-wrap { table #experiments {
                thead { tr { th { "Experiment" } th { "Variants (name, weight, price)" } th { "Minimum sample" } @if writes { th { span.muted { "Action" } } } } }
                tbody {
                    @for x in view.experiments.iter() {
                        tr data-experiment-id=(x.experiment_id) {
                            td { a href={ "/dashboard/games/" (view.game.game_id) "/experiments#experiment-" (x.experiment_id) } { code { (x.experiment_id) } } }
                            td { ul.plain { @for v in &x.variants { li { (variant_text(v)) } } } }
                            td { (x.min_sample) }
                            @if writes {
                                td {
                                    form method="post" action={ (base) "/experiments/" (x.experiment_id) "/delete" } data-confirm="Delete this experiment? Its players go back to the offer's own price." {
                                        (csrf(user))
                                        button.danger type="submit" { "Delete" }
                                    }
                                }
                            }
                        }
                    }
                }
            } }
            @if writes {
                form.card #experiment-form method="post" action={ (base) "/experiments" } {
                    (csrf(user))
                    label for="variants" { "Variants, one a line: name, weight, then an optional price (4.99 sets it, x0.8 multiplies it)" }
                    textarea #variants name="variants" rows="4" spellcheck="false" placeholder="control 1\ncheaper 1 x0.8" { (variants_text) }
                    label for="min_sample" { "Minimum sample: exposed players per variant before the results stop being provisional (1,000 when left empty)" }
                    input #min_sample name="min_sample" type="number" min="1" max="10000000" step="1" placeholder="1000";
                    @for field in EXPERIMENT_FIELDS { (field_errors(experiment_errors, field)) }
                    (other_errors(experiment_errors, &EXPERIMENT_FIELDS))
                    button type="submit" { "Create experiment" }
                }
            }
        }
    }
}
