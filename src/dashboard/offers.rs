//! Offer configuration of a game: its L2 genre templates (replaced as a whole from a JSON
//! box), its L3 bundles (created by [`bundles`]) and its price experiments (created from one
//! variant a line, deleted). The page that lists them all is drawn by
//! [`views::offers`](super::views::offers), which the bundle handlers show too. The offer
//! configuration service (`service/offer_config.rs`) validates every write, as for the REST
//! routes; its refusals show next to their field.
//!
//! [`bundles`]: super::bundles

use axum::extract::State;
use axum::response::{IntoResponse, Redirect, Response};
use offer_domain::offer::{Experiment, Template, Variant};
use offer_domain::validation::FieldError;
use serde::Deserialize;
use uuid::Uuid;

use super::extract::PagePath;
use super::failure::PageError;
use super::session::{CsrfForm, NoFields, SignedIn, game_of};
use super::views::offers::{Refused, offers_page};
use crate::auth::Role;
use crate::service::{ServiceError, game::offer_config};
use crate::state::AppState;

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
