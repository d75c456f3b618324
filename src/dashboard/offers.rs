//! Offer configuration of a game: its L2 genre templates (shown, and replaced as a whole
//! from a JSON box), its L3 bundles (listed, with the create form of [`bundles`])
//! and its price experiments (listed, created from one variant a line, deleted). The offer
//! configuration service (`service/offer_config.rs`) validates every write, as for the REST
//! routes; its refusals show next to their field.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use maud::html;
use offer_domain::offer::{Experiment, Template, Variant};
use offer_domain::validation::FieldError;
use serde::Deserialize;
use uuid::Uuid;

use super::bundles::{self, BundleForm};
use super::extract::PagePath;
use super::failure::PageError;
use super::games::game_of;
use super::layout::{self, Tab, csrf, field_errors, other_errors};
use super::session::{CsrfForm, NoFields, SignedIn};
use crate::auth::Role;
use crate::service::{ServiceError, offer_config};
use crate::state::AppState;

/// The fields a template's errors name.
const TEMPLATE_FIELDS: [&str; 5] = [
    "templates",
    "event_type",
    "categories",
    "discount_pct",
    "max_items",
];

/// The fields an experiment's errors name.
const EXPERIMENT_FIELDS: [&str; 4] = ["variants", "name", "price_usd", "price_multiplier"];

/// A form of the page sent back with what the member typed and why it was refused.
pub(super) enum Refused<'a> {
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

/// The offers page, with one form's refusal when there is one (a 422 then).
pub(super) async fn offers_page(
    state: &AppState,
    user: &SignedIn,
    game_id: Uuid,
    refused: Option<Refused<'_>>,
) -> Result<Response, PageError> {
    let handle = game_of(&state.services, user, game_id).await?;
    let view = handle.view();
    let base = format!("/dashboard/games/{game_id}/offers");
    let writes = user.can(Role::Developer);
    let no_errors: Vec<FieldError> = Vec::new();
    let (templates_text, template_errors) = match &refused {
        Some(Refused::Templates(text, errors)) => ((*text).to_owned(), errors),
        _ => (
            serde_json::to_string_pretty(&view.templates).unwrap_or_default(),
            &no_errors,
        ),
    };
    let empty_bundle = BundleForm::default();
    let (bundle_form, bundle_errors) = match &refused {
        Some(Refused::Bundle(form, errors)) => (*form, errors),
        _ => (&empty_bundle, &no_errors),
    };
    let (variants_text, experiment_errors) = match &refused {
        Some(Refused::Experiment(text, errors)) => (*text, errors),
        _ => ("", &no_errors),
    };
    let body = html! {
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
                (bundles::form(user, &format!("{base}/bundles"), "Create bundle", bundle_form, bundle_errors))
            }
        }
        section {
            h2 { "Price experiments" }
            p.muted { "Each experiment splits players between variants by weight; a variant changes the price only. The oldest experiment prices offers." }
            div.table-wrap { table #experiments {
                thead { tr { th { "Experiment" } th { "Variants (name, weight, price)" } @if writes { th { span.muted { "Action" } } } } }
                tbody {
                    @for x in view.experiments.iter() {
                        tr data-experiment-id=(x.experiment_id) {
                            td { code { (x.experiment_id) } }
                            td { ul.plain { @for v in &x.variants { li { (variant_text(v)) } } } }
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
                    @for field in EXPERIMENT_FIELDS { (field_errors(experiment_errors, field)) }
                    (other_errors(experiment_errors, &EXPERIMENT_FIELDS))
                    button type="submit" { "Create experiment" }
                }
            }
        }
    };
    let status = if refused.is_some() {
        StatusCode::UNPROCESSABLE_ENTITY
    } else {
        StatusCode::OK
    };
    Ok((
        status,
        layout::page(user, "Offers", Some((&view.game, Tab::Offers)), body),
    )
        .into_response())
}

/// `GET /dashboard/games/{game_id}/offers`.
pub async fn page(
    State(state): State<AppState>,
    user: SignedIn,
    PagePath(game_id): PagePath<Uuid>,
) -> Result<Response, PageError> {
    offers_page(&state, &user, game_id, None).await
}

/// The templates form.
#[derive(Debug, Deserialize)]
pub struct TemplatesForm {
    #[serde(default)]
    templates: String,
}

/// `POST /dashboard/games/{game_id}/offers/templates` (developer): replaces the templates.
pub async fn set_templates(
    State(state): State<AppState>,
    PagePath(game_id): PagePath<Uuid>,
    CsrfForm { user, form }: CsrfForm<TemplatesForm>,
) -> Result<Response, PageError> {
    let handle = game_of(&state.services, &user, game_id).await?;
    user.require(Role::Developer)?;
    let templates: Vec<Template> = match serde_json::from_str(&form.templates) {
        Ok(t) => t,
        Err(e) => {
            let errors = vec![FieldError::new(
                "templates",
                format!("not a JSON list of templates: {e}"),
            )];
            let refused = Refused::Templates(&form.templates, errors);
            return offers_page(&state, &user, game_id, Some(refused)).await;
        }
    };
    match offer_config::put_templates(&state.services, &handle, templates).await {
        Ok(_) => Ok(Redirect::to(&format!("/dashboard/games/{game_id}/offers")).into_response()),
        Err(ServiceError::Validation(errors)) => {
            let refused = Refused::Templates(&form.templates, errors);
            offers_page(&state, &user, game_id, Some(refused)).await
        }
        Err(e) => Err(e.into()),
    }
}

/// The new experiment form.
#[derive(Debug, Deserialize)]
pub struct ExperimentForm {
    #[serde(default)]
    variants: String,
}

/// Reads the variants box: one `name weight [price]` a line, the price `4.99` (a fixed price)
/// or `x0.8` (a multiplier).
fn parse_variants(text: &str) -> Result<Vec<Variant>, FieldError> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .enumerate()
        .map(|(i, line)| {
            let bad = |why: &str| FieldError::new("variants", format!("line {}: {why}", i + 1));
            let words: Vec<&str> = line.split_whitespace().collect();
            let (name, weight, price) = match words.as_slice() {
                [name, weight] => (*name, *weight, None),
                [name, weight, price] => (*name, *weight, Some(*price)),
                _ => return Err(bad("write a name, a weight, then an optional price")),
            };
            let weight = weight
                .parse()
                .map_err(|_| bad("the weight is a whole number such as 1"))?;
            let mut variant = Variant {
                name: name.to_owned(),
                weight,
                price_usd: None,
                price_multiplier: None,
            };
            match price {
                None => {}
                Some(p) if p.starts_with(['x', 'X']) => {
                    variant.price_multiplier = Some(
                        p[1..]
                            .parse()
                            .map_err(|_| bad("a multiplier reads like x0.8"))?,
                    );
                }
                Some(p) => {
                    variant.price_usd = Some(
                        p.trim_start_matches('$')
                            .parse()
                            .map_err(|_| bad("a price reads like 4.99"))?,
                    );
                }
            }
            Ok(variant)
        })
        .collect()
}

/// `POST /dashboard/games/{game_id}/offers/experiments` (developer): a new experiment.
pub async fn create_experiment(
    State(state): State<AppState>,
    PagePath(game_id): PagePath<Uuid>,
    CsrfForm { user, form }: CsrfForm<ExperimentForm>,
) -> Result<Response, PageError> {
    let handle = game_of(&state.services, &user, game_id).await?;
    user.require(Role::Developer)?;
    let variants = match parse_variants(&form.variants) {
        Ok(v) => v,
        Err(e) => {
            let refused = Refused::Experiment(&form.variants, vec![e]);
            return offers_page(&state, &user, game_id, Some(refused)).await;
        }
    };
    let experiment = Experiment {
        experiment_id: Uuid::new_v4(),
        variants,
    };
    match offer_config::add_experiment(&state.services, &handle, experiment).await {
        Ok(_) => Ok(Redirect::to(&format!("/dashboard/games/{game_id}/offers")).into_response()),
        Err(ServiceError::Validation(errors)) => {
            let refused = Refused::Experiment(&form.variants, errors);
            offers_page(&state, &user, game_id, Some(refused)).await
        }
        Err(e) => Err(e.into()),
    }
}

/// `POST /dashboard/games/{game_id}/offers/experiments/{experiment_id}/delete` (developer).
pub async fn delete_experiment(
    State(state): State<AppState>,
    PagePath((game_id, experiment_id)): PagePath<(Uuid, Uuid)>,
    CsrfForm { user, .. }: CsrfForm<NoFields>,
) -> Result<Response, PageError> {
    let handle = game_of(&state.services, &user, game_id).await?;
    user.require(Role::Developer)?;
    offer_config::delete_experiment(&state.services, &handle, experiment_id).await?;
    Ok(Redirect::to(&format!("/dashboard/games/{game_id}/offers")).into_response())
}
