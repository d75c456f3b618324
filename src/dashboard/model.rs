//! Model: what the AI level's learner has learned, as `GET /v1/games/{game_id}/model` reports
//! it, drawn by [`super::views::model`].

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;

use super::access::{DashGame, Viewer};
use super::layout::Tab;
use super::views;
use crate::service::play::model;
use crate::state::AppState;

/// `GET /dashboard/games/{game_id}/model`.
pub async fn page(at: DashGame<Viewer>, State(state): State<AppState>) -> Response {
    let report = model::report(&state.services, &at.game);
    let body = views::model::page(&report);
    at.page(StatusCode::OK, "Model", Tab::Model, body)
}
