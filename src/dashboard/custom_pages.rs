//! Custom pages of a game: the list of its pages (each with its newest version, who saved it
//! and when, and whether a version is published or under review), and one page's page: its
//! versions, a version's content (the template's size and source, the bound items and
//! texts), the newest preview's screenshots with a button to make one, and the publish
//! request (developer), which queues an approval as the REST publish request does. The
//! custom-page, preview and publishing services decide everything; their refusals (a page
//! too large to publish or that does not validate, a full preview queue) show next to the
//! button that caused them. The pages are drawn by
//! [`views::custom_pages`](super::views::custom_pages).

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use offer_actors::GameHandle;
use offer_domain::approval::ApprovalStatus;
use offer_domain::custom_page::PageRef;
use offer_domain::template::Validation;
use serde::Deserialize;
use uuid::Uuid;

use super::access::{DashGame, Developer, Viewer};
use super::extract::{PagePath, PageQuery};
use super::failure::PageError;
use super::layout::Tab;
use super::session::CsrfForm;
use super::views::custom_pages::{self as views, Refused, Standing};
use crate::service::authoring::custom_pages;
use crate::service::{
    ServiceError, approval::approvals, approval::publish_request, authoring::previews,
};
use crate::state::AppState;

/// What is published and what waits for an approval, for each page of the game.
async fn standing_of(state: &AppState, game: &GameHandle) -> Result<Standing, PageError> {
    let view = game.view();
    let pending = approvals::list(
        &state.services,
        view.game.game_id,
        Some(ApprovalStatus::Pending),
    )
    .await?
    .into_iter()
    .filter(|a| a.page.is_some())
    .collect();
    Ok(Standing {
        published: view.custom_page.as_ref().map(|p| PageRef {
            page_id: p.page_id,
            version: p.version,
        }),
        pending,
    })
}

/// `GET /dashboard/games/{game_id}/custom-pages`.
pub async fn list(
    at: DashGame<Viewer>,
    State(state): State<AppState>,
) -> Result<Response, PageError> {
    let pages = custom_pages::list(&state.services, at.game_id()).await?;
    let standing = standing_of(&state, &at.game).await?;
    let body = views::list(at.game_id(), &pages, &standing);
    Ok(at.page(StatusCode::OK, "Custom pages", Tab::CustomPages, body))
}

/// The version a page's page shows: `?version=N`, the newest without it.
#[derive(Debug, Deserialize)]
pub struct Shown {
    version: Option<u32>,
}

/// The blockers of a verdict in one line, each with its template line.
fn blockers_text(verdict: &Validation) -> String {
    let each: Vec<String> = verdict
        .blockers
        .iter()
        .map(|b| match b.line {
            Some(line) => format!("line {line}: {}", b.message),
            None => b.message.clone(),
        })
        .collect();
    each.join("; ")
}

/// A custom page's page showing the version `shown` (the newest without it), with the
/// refusal of a preview or publish request and its status when there is one.
async fn page_page<R>(
    state: &AppState,
    at: &DashGame<R>,
    page_id: Uuid,
    shown: Option<u32>,
    refused: Option<(StatusCode, Refused)>,
) -> Result<Response, PageError> {
    let game_id = at.game_id();
    let page = custom_pages::page(&state.services, game_id, page_id).await?;
    let number = shown
        .or_else(|| page.versions.last().map(|v| v.version))
        .ok_or(ServiceError::NotFound("page version"))?;
    let version = custom_pages::version(&state.services, game_id, page_id, number).await?;
    let preview = previews::newest_of(&state.services, game_id, page_id, number).await?;
    let standing = standing_of(state, &at.game).await?;
    let (status, refused) = refused.map_or((StatusCode::OK, None), |(s, r)| (s, Some(r)));
    let body = views::page(
        &at.user,
        game_id,
        (&page, &version),
        preview.as_ref(),
        &standing,
        refused.as_ref(),
    );
    Ok(at.page(status, "Custom page", Tab::CustomPages, body))
}

/// `GET /dashboard/games/{game_id}/custom-pages/{page_id}`.
pub async fn show(
    at: DashGame<Viewer>,
    State(state): State<AppState>,
    PagePath((_, page_id)): PagePath<(Uuid, Uuid)>,
    PageQuery(shown): PageQuery<Shown>,
) -> Result<Response, PageError> {
    page_page(&state, &at, page_id, shown.version, None).await
}

/// The preview and publish forms: the version they act on.
#[derive(Debug, Deserialize)]
pub struct VersionForm {
    version: u32,
}

/// What follows a preview or publish request: the page it leads to, or the custom page
/// again with the refusal next to the form.
async fn after_request<R>(
    state: &AppState,
    at: &DashGame<R>,
    page_id: Uuid,
    version: u32,
    outcome: Result<String, (StatusCode, Refused)>,
) -> Result<Response, PageError> {
    match outcome {
        Ok(to) => Ok(Redirect::to(&to).into_response()),
        Err(refused) => page_page(state, at, page_id, Some(version), Some(refused)).await,
    }
}

/// `POST /dashboard/games/{game_id}/custom-pages/{page_id}/preview` (developer): queues a
/// preview of the version, then shows it building.
pub async fn request_preview(
    at: DashGame<Developer>,
    State(state): State<AppState>,
    PagePath((game_id, page_id)): PagePath<(Uuid, Uuid)>,
    CsrfForm { form, .. }: CsrfForm<VersionForm>,
) -> Result<Response, PageError> {
    let requester = previews::Requester::User(at.user.caller.sub.clone());
    let submitted = previews::submit(
        &state.services,
        at.game.clone(),
        requester,
        page_id,
        form.version,
    );
    let outcome = match submitted.await {
        Ok(_) => Ok(format!(
            "{}/{page_id}?version={}",
            Tab::CustomPages.href(game_id),
            form.version
        )),
        Err(ServiceError::PreviewQueueFull) => Err((
            StatusCode::SERVICE_UNAVAILABLE,
            Refused::Preview("The preview queue is full: try again in a few seconds.".into()),
        )),
        Err(ServiceError::PreviewShareFull(..)) => Err((
            StatusCode::TOO_MANY_REQUESTS,
            Refused::Preview(
                "Previews of this game are already being built: try again once they are ready."
                    .into(),
            ),
        )),
        Err(e) => return Err(e.into()),
    };
    after_request(&state, &at, page_id, form.version, outcome).await
}

/// `POST /dashboard/games/{game_id}/custom-pages/{page_id}/publish-request` (developer):
/// queues the approval and opens it.
pub async fn request_publish(
    at: DashGame<Developer>,
    State(state): State<AppState>,
    PagePath((_, page_id)): PagePath<(Uuid, Uuid)>,
    CsrfForm { form, .. }: CsrfForm<VersionForm>,
) -> Result<Response, PageError> {
    let page = PageRef {
        page_id,
        version: form.version,
    };
    let outcome =
        match publish_request::request(&state.services, &at.user.by(), &at.game, page).await {
            Ok(approval) => Ok(format!("/dashboard/approvals/{}", approval.approval_id)),
            Err(ServiceError::PayloadTooLarge(why)) => {
                Err((StatusCode::PAYLOAD_TOO_LARGE, Refused::Publish(why)))
            }
            Err(ServiceError::PageInvalid(verdict)) => Err((
                StatusCode::UNPROCESSABLE_ENTITY,
                Refused::Publish(format!(
                    "This version does not pass validation, so it cannot be published: {}",
                    blockers_text(&verdict)
                )),
            )),
            Err(e) => return Err(e.into()),
        };
    after_request(&state, &at, page_id, form.version, outcome).await
}
