//! Offer configuration of a game: its L2 genre templates (replaced as a whole from a JSON
//! box), its L3 bundles (created by the bundles' handlers) and its price experiments (created
//! from one variant a line, deleted). The page that lists them all is drawn by
//! [`views::offers`], which the bundle handlers show too. The offer
//! configuration service (`service/offer_config.rs`) validates every write, as for the REST
//! routes; its refusals show next to their field.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use offer_domain::offer::{DEFAULT_MIN_SAMPLE, Experiment};
use offer_domain::validation::FieldError;
use serde::Deserialize;
use uuid::Uuid;

use super::access::{DashGame, Developer, Viewer};
use super::extract::PagePath;
use super::failure::PageError;
use super::forms;
use super::layout::Tab;
use super::session::{CsrfForm, NoFields};
use super::views;
use super::views::offers::Refused;
use crate::service::{ServiceError, game::offer_config};
use crate::state::AppState;

/// The offers page, with one form's refusal when there is one (a 422 then).
fn offers_page<R>(at: &DashGame<R>, refused: Option<Refused<'_>>) -> Response {
    let status = if refused.is_some() {
        StatusCode::UNPROCESSABLE_ENTITY
    } else {
        StatusCode::OK
    };
    let body = views::offers::page(&at.user, &at.game.view(), refused.as_ref());
    at.page(status, "Offers", Tab::Offers, body)
}

/// Back to the offers page once a write is saved.
fn saved<R>(at: &DashGame<R>) -> Response {
    Redirect::to(&Tab::Offers.href(at.game_id())).into_response()
}

/// `GET /dashboard/games/{game_id}/offers`.
pub async fn page(at: DashGame<Viewer>) -> Response {
    offers_page(&at, None)
}

/// The templates form.
#[derive(Debug, Deserialize)]
pub struct TemplatesForm {
    #[serde(default)]
    templates: String,
}

/// `POST /dashboard/games/{game_id}/offers/templates` (developer): replaces the templates.
pub async fn set_templates(
    at: DashGame<Developer>,
    State(state): State<AppState>,
    CsrfForm { form, .. }: CsrfForm<TemplatesForm>,
) -> Result<Response, PageError> {
    let templates = match forms::templates(&form.templates) {
        Ok(t) => t,
        Err(e) => {
            let refused = Refused::Templates(&form.templates, vec![e]);
            return Ok(offers_page(&at, Some(refused)));
        }
    };
    match offer_config::put_templates(&state.services, &at.user.by(), &at.game, templates).await {
        Ok(_) => Ok(saved(&at)),
        Err(ServiceError::Validation(errors)) => {
            let refused = Refused::Templates(&form.templates, errors);
            Ok(offers_page(&at, Some(refused)))
        }
        Err(e) => Err(e.into()),
    }
}

/// The new experiment form.
#[derive(Debug, Deserialize)]
pub struct ExperimentForm {
    #[serde(default)]
    variants: String,
    /// Empty for the default.
    #[serde(default)]
    min_sample: String,
}

/// `POST /dashboard/games/{game_id}/offers/experiments` (developer): a new experiment.
pub async fn create_experiment(
    at: DashGame<Developer>,
    State(state): State<AppState>,
    CsrfForm { form, .. }: CsrfForm<ExperimentForm>,
) -> Result<Response, PageError> {
    let variants = match forms::variants(&form.variants) {
        Ok(v) => v,
        Err(e) => {
            let refused = Refused::Experiment(&form.variants, vec![e]);
            return Ok(offers_page(&at, Some(refused)));
        }
    };
    let min_sample = match form.min_sample.trim() {
        "" => DEFAULT_MIN_SAMPLE,
        text => match text.parse() {
            Ok(n) => n,
            Err(_) => {
                let e = FieldError::new("min_sample", "a whole number from 1 to 10000000");
                let refused = Refused::Experiment(&form.variants, vec![e]);
                return Ok(offers_page(&at, Some(refused)));
            }
        },
    };
    let experiment = Experiment {
        experiment_id: Uuid::new_v4(),
        variants,
        min_sample,
    };
    match offer_config::add_experiment(&state.services, &at.user.by(), &at.game, experiment).await {
        Ok(_) => Ok(saved(&at)),
        Err(ServiceError::Validation(errors)) => {
            let refused = Refused::Experiment(&form.variants, errors);
            Ok(offers_page(&at, Some(refused)))
        }
        Err(e) => Err(e.into()),
    }
}

/// `POST /dashboard/games/{game_id}/offers/experiments/{experiment_id}/delete` (developer).
pub async fn delete_experiment(
    at: DashGame<Developer>,
    State(state): State<AppState>,
    PagePath((_, experiment_id)): PagePath<(Uuid, Uuid)>,
    _: CsrfForm<NoFields>,
) -> Result<Response, PageError> {
    offer_config::delete_experiment(&state.services, &at.user.by(), &at.game, experiment_id)
        .await?;
    Ok(saved(&at))
}
