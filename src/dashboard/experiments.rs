//! Experiments: the results of each of a game's price experiments in production (or sandbox
//! with `?environment=sandbox`), as the REST results give them; the page is drawn by
//! [`views::experiments`](super::views::experiments).

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use offer_domain::environment::Environment;
use serde::Deserialize;

use super::access::{DashGame, Viewer};
use super::extract::PageQuery;
use super::failure::PageError;
use super::layout::Tab;
use super::views::experiments as views;
use crate::service::economy::experiments;
use crate::state::AppState;

/// The page's query.
#[derive(Debug, Deserialize)]
pub struct ExperimentsQuery {
    #[serde(default)]
    environment: Option<Environment>,
}

/// `GET /dashboard/games/{game_id}/experiments`.
pub async fn page(
    at: DashGame<Viewer>,
    State(state): State<AppState>,
    PageQuery(q): PageQuery<ExperimentsQuery>,
) -> Result<Response, PageError> {
    let env = q.environment.unwrap_or(Environment::Production);
    let ids: Vec<uuid::Uuid> = at
        .game
        .view()
        .experiments
        .iter()
        .map(|x| x.experiment_id)
        .collect();
    let mut all = Vec::with_capacity(ids.len());
    for id in ids {
        all.push(experiments::results(&state.services, &at.game, env, id).await?);
    }
    let body = views::page(at.game_id(), env, &all);
    Ok(at.page(StatusCode::OK, "Experiments", Tab::Experiments, body))
}
