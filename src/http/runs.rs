//! Authoring runs over HTTP: open one, list and read them, confirm a cloud run, report a
//! visual comparison; and [`outcome`], which turns a call's result into the outcome its run
//! records. The bookkeeping itself is `service::runs`.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

use super::access::{AuthorAccess, Developer, GameAccess, Viewer};
use super::extract::{ApiJson, ApiPath};
use super::openapi::{
    AuthErrors, BodyErrors, Conflict, NotFound, RunConflict, RunRefused, Unavailable,
};
use crate::error::{ApiResult, service_status};
use crate::service::ServiceResult;
use crate::service::authoring::runs::{self, CallOutcome, Comparison, Run, RunMode};
use crate::state::AppState;

/// Body of `POST .../custom-pages/runs`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct OpenRun {
    /// `local` (the tool runs on the studio's machine) or `cloud` (a hosted assistant: its
    /// validate, draft and preview calls are refused with `run_not_confirmed` until a second
    /// studio member confirms the run).
    pub mode: RunMode,
}

/// Body of `POST .../custom-pages/runs/{run_id}/comparisons`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ComparisonBody {
    /// How alike the preview and the reference screenshot are, from 0 (nothing alike) to 1
    /// (identical).
    #[schema(minimum = 0, maximum = 1)]
    pub score: f64,
    /// The preview compared.
    pub preview_id: Option<Uuid>,
}

/// The runs of a game.
#[derive(Debug, Serialize, ToSchema)]
pub struct RunList {
    /// Newest first, those within their 30 days.
    pub runs: Vec<Run>,
}

/// The outcome a run records for a call that answered `result`: `ok` and what `fill` adds
/// on success, the refusal's status and code otherwise. The validate and preview endpoints
/// build theirs with it too.
pub fn outcome<T>(
    result: &ServiceResult<T>,
    ok: StatusCode,
    fill: impl FnOnce(&T, &mut CallOutcome),
) -> CallOutcome {
    match result {
        Ok(value) => {
            let mut outcome = CallOutcome {
                status: ok.as_u16(),
                ..CallOutcome::default()
            };
            fill(value, &mut outcome);
            outcome
        }
        Err(e) => {
            let (status, code) = service_status(e);
            CallOutcome {
                status: status.as_u16(),
                code: Some(code.to_owned()),
                ..CallOutcome::default()
            }
        }
    }
}

/// Opens an authoring run (developer, or the game's authoring key). Validate, draft and
/// preview calls name it in `X-Authoring-Run`; it is kept 30 days.
#[utoipa::path(post, path = "/v1/games/{game_id}/custom-pages/runs", tag = "custom pages",
    operation_id = "open_authoring_run",
    params(("game_id" = Uuid, Path)), request_body = OpenRun,
    responses(
        (status = 201, description = "The run, opened", body = Run, links(
            ("GetRun" = (operation_id = "get_authoring_run",
                parameters(
                    ("game_id" = "$request.path.game_id"),
                    ("run_id" = "$response.body#/run_id")),
                description = "The run and its calls")),
        )),
        AuthErrors, BodyErrors, NotFound, Unavailable))]
pub async fn open_run(
    State(state): State<AppState>,
    access: AuthorAccess<Developer>,
    ApiJson(body): ApiJson<OpenRun>,
) -> ApiResult<(StatusCode, Json<Run>)> {
    let run = runs::open(&state.services, access.game_id(), &access.caller, body.mode).await?;
    Ok((StatusCode::CREATED, Json(run)))
}

/// The game's authoring runs within their 30 days, newest first, each with its calls
/// (viewer, or the game's authoring key).
#[utoipa::path(get, path = "/v1/games/{game_id}/custom-pages/runs", tag = "custom pages",
    operation_id = "list_authoring_runs",
    params(("game_id" = Uuid, Path)),
    responses((status = 200, description = "The runs", body = RunList),
        AuthErrors, NotFound, Unavailable))]
pub async fn list_runs(
    State(state): State<AppState>,
    access: AuthorAccess<Viewer>,
) -> ApiResult<Json<RunList>> {
    let runs = runs::list(&state.services, access.game_id()).await?;
    Ok(Json(RunList { runs }))
}

/// One authoring run with its calls (viewer, or the game's authoring key); a run of another
/// game, or past its 30 days, is a 404.
#[utoipa::path(get, path = "/v1/games/{game_id}/custom-pages/runs/{run_id}", tag = "custom pages",
    operation_id = "get_authoring_run",
    params(("game_id" = Uuid, Path), ("run_id" = Uuid, Path)),
    responses((status = 200, description = "The run", body = Run),
        AuthErrors, NotFound, Unavailable))]
pub async fn get_run(
    State(state): State<AppState>,
    access: AuthorAccess<Viewer>,
    ApiPath((_, run_id)): ApiPath<(Uuid, Uuid)>,
) -> ApiResult<Json<Run>> {
    Ok(Json(
        runs::get(&state.services, access.game_id(), run_id).await?,
    ))
}

/// Confirms a cloud run (a dashboard developer; never an authoring key): its validate,
/// draft and preview calls are taken from now on. The studio member who approved the run's
/// authoring key (or, for a run a dashboard user opened, that user) cannot confirm it: 403
/// `second_member_required`. A local run, or one already confirmed, is a 409.
#[utoipa::path(post, path = "/v1/games/{game_id}/custom-pages/runs/{run_id}/confirm",
    tag = "custom pages", operation_id = "confirm_authoring_run",
    params(("game_id" = Uuid, Path), ("run_id" = Uuid, Path)),
    responses((status = 200, description = "The run, confirmed", body = Run),
        RunRefused, NotFound, Conflict, Unavailable))]
pub async fn confirm_run(
    State(state): State<AppState>,
    access: GameAccess<Developer>,
    ApiPath((_, run_id)): ApiPath<(Uuid, Uuid)>,
) -> ApiResult<Json<Run>> {
    let run = runs::confirm(&state.services, access.game_id(), run_id, &access.caller).await?;
    Ok(Json(run))
}

/// Records a visual comparison between a preview and the reference screenshot (developer,
/// or the game's authoring key): a run takes 3, the fourth is refused with 409
/// `run_limit_reached`.
#[utoipa::path(post, path = "/v1/games/{game_id}/custom-pages/runs/{run_id}/comparisons",
    tag = "custom pages", operation_id = "record_authoring_comparison",
    params(("game_id" = Uuid, Path), ("run_id" = Uuid, Path)), request_body = ComparisonBody,
    responses((status = 201, description = "Recorded: the run as it stands now", body = Run),
        AuthErrors, BodyErrors, NotFound, RunConflict, Unavailable))]
pub async fn record_comparison(
    State(state): State<AppState>,
    access: AuthorAccess<Developer>,
    ApiPath((_, run_id)): ApiPath<(Uuid, Uuid)>,
    ApiJson(body): ApiJson<ComparisonBody>,
) -> ApiResult<(StatusCode, Json<Run>)> {
    let comparison = Comparison {
        score: body.score,
        preview_id: body.preview_id,
    };
    let run = runs::compare(
        &state.services,
        access.game_id(),
        &access.caller,
        run_id,
        comparison,
    )
    .await?;
    Ok((StatusCode::CREATED, Json(run)))
}
