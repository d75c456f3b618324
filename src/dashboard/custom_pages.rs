//! Custom pages of a game: the list of its pages (each with its newest version, who saved it
//! and when, and whether a version is published or under review), and one page's page: its
//! versions, a version's content (the template's size and source, the bound items and
//! texts), the newest preview's screenshots with a button to make one, and the publish
//! request (developer), which queues an approval as the REST publish request does. The
//! custom-page, preview and publishing services decide everything; their refusals (a page
//! too large to publish or that does not validate, a full preview queue) show next to the
//! button that caused them.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use maud::{Markup, html};
use offer_domain::approval::{Approval, ApprovalStatus};
use offer_domain::custom_page::PageRef;
use offer_domain::template::Validation;
use serde::Deserialize;
use serde_json::Value;
use uuid::Uuid;

use super::extract::{PagePath, PageQuery};
use super::failure::PageError;
use super::layout::{self, Tab, csrf};
use super::session::{CsrfForm, SignedIn, game_of};
use super::views::shots::shots;
use crate::auth::Role;
use crate::service::authoring::custom_pages::{self, Page, Version};
use crate::service::authoring::previews::Status;
use crate::service::{
    ServiceError, approval::approvals, approval::publish_request, authoring::previews,
};
use crate::state::AppState;

/// What is published and what waits for an approval, per page.
struct Standing {
    published: Option<PageRef>,
    pending: Vec<Approval>,
}

impl Standing {
    async fn of(state: &AppState, game: &offer_actors::GameHandle) -> Result<Self, PageError> {
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
        Ok(Self {
            published: view.custom_page.as_ref().map(|p| PageRef {
                page_id: p.page_id,
                version: p.version,
            }),
            pending,
        })
    }

    fn published_version(&self, page_id: Uuid) -> Option<u32> {
        self.published
            .filter(|p| p.page_id == page_id)
            .map(|p| p.version)
    }

    fn pending_of(&self, page_id: Uuid) -> impl Iterator<Item = (&Approval, u32)> {
        self.pending.iter().filter_map(move |a| {
            a.page
                .filter(|p| p.page_id == page_id)
                .map(|p| (a, p.version))
        })
    }

    /// `published (version 2), version 3 under review`, or `draft`.
    fn describe(&self, page_id: Uuid) -> Markup {
        let published = self.published_version(page_id);
        let pending: Vec<u32> = self.pending_of(page_id).map(|(_, v)| v).collect();
        html! {
            @if let Some(v) = published { "published (version " (v) ")" }
            @if published.is_some() && !pending.is_empty() { ", " }
            @for (i, v) in pending.iter().enumerate() {
                @if i > 0 { ", " }
                "version " (v) " under review"
            }
            @if published.is_none() && pending.is_empty() { "draft" }
        }
    }
}

/// `GET /dashboard/games/{game_id}/custom-pages`.
pub async fn list(
    State(state): State<AppState>,
    user: SignedIn,
    PagePath(game_id): PagePath<Uuid>,
) -> Result<Response, PageError> {
    let handle = game_of(&state.services, &user, game_id).await?;
    let view = handle.view();
    let pages = custom_pages::list(&state.services, game_id).await?;
    let standing = Standing::of(&state, &handle).await?;
    let base = Tab::CustomPages.href(game_id);
    let body = html! {
        h1 { "Custom pages" }
        p.muted {
            "Pages the authoring tool drafts with the game's authoring key. Each save is a new version; a version is published once a developer asks for it and the request is approved. "
            a href={ (base) "/runs" } { "Authoring runs" }
        }
        @if pages.is_empty() { p.muted { "No custom page yet: the authoring tool saves the first draft." } }
        div.table-wrap { table #custom-pages {
            thead { tr { th { "Page" } th { "Versions" } th { "State" } th { "Last saved by" } th { "Last saved" } } }
            tbody {
                @for p in &pages {
                    @let last = p.versions.last();
                    tr data-page-id=(p.page_id) {
                        td { a href={ (base) "/" (p.page_id) } { code { (p.page_id) } } }
                        td { (p.versions.len()) }
                        td.state { (standing.describe(p.page_id)) }
                        td { (last.map(|v| v.created_by.as_str()).unwrap_or_default()) }
                        td { (last.map_or(p.created_at, |v| v.created_at).format("%Y-%m-%d %H:%M")) }
                    }
                }
            }
        } }
    };
    Ok(layout::game_page(
        StatusCode::OK,
        &user,
        "Custom pages",
        (&view.game, Tab::CustomPages),
        body,
    ))
}

/// The version a page's page shows: `?version=N`, the newest without it.
#[derive(Debug, Deserialize)]
pub struct Shown {
    version: Option<u32>,
}

/// A refusal shown next to the form that caused it.
enum Refused {
    /// The preview request.
    Preview(String),
    /// The publish request.
    Publish(String),
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

/// One binding's value, as text.
fn binding_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// What a version holds: the template's size and source, the bound items and texts.
fn content(v: &Version) -> Markup {
    let items: Vec<String> = v
        .bindings
        .get("items")
        .and_then(Value::as_array)
        .map(|a| a.iter().map(binding_text).collect())
        .unwrap_or_default();
    html! {
        section #content {
            h2 { "Version " (v.info.version) }
            dl {
                dt { "Saved" } dd { (v.info.created_at.format("%Y-%m-%d %H:%M")) " UTC by " (v.info.created_by) }
                dt { "Template" } dd #template-size { (v.template.lines().count()) " lines, " (v.template.len()) " bytes" }
                dt { "Bound items" } dd #bound-items { @if items.is_empty() { span.muted { "none" } } @else { (items.join(", ")) } }
                @for (name, value) in v.bindings.iter().filter(|(k, _)| k.as_str() != "items") {
                    dt { (name) } dd { (binding_text(value)) }
                }
            }
            details {
                summary { "The template's source" }
                pre { code { (v.template) } }
            }
        }
    }
}

fn versions_table(base: &str, page: &Page, shown: u32, standing: &Standing) -> Markup {
    let published = standing.published_version(page.page_id);
    let pending: Vec<u32> = standing.pending_of(page.page_id).map(|(_, v)| v).collect();
    html! {
        div.table-wrap { table #versions {
            thead { tr { th { "Version" } th { "Saved" } th { "By" } th { "Size" } th { "State" } } }
            tbody {
                @for v in page.versions.iter().rev() {
                    tr data-version=(v.version) aria-current=[(v.version == shown).then_some("true")] {
                        td { a href={ (base) "?version=" (v.version) } { (v.version) } }
                        td { (v.created_at.format("%Y-%m-%d %H:%M")) }
                        td { (v.created_by) }
                        td { (v.size) " bytes" }
                        td.state {
                            @if published == Some(v.version) { "published" }
                            @else if pending.contains(&v.version) { "under review" }
                        }
                    }
                }
            }
        } }
    }
}

async fn page_page(
    state: &AppState,
    user: &SignedIn,
    (game_id, page_id): (Uuid, Uuid),
    shown: Option<u32>,
    refused: Option<(StatusCode, Refused)>,
) -> Result<Response, PageError> {
    let handle = game_of(&state.services, user, game_id).await?;
    let view = handle.view();
    let page = custom_pages::page(&state.services, game_id, page_id).await?;
    let number = shown
        .or_else(|| page.versions.last().map(|v| v.version))
        .ok_or(ServiceError::NotFound("page version"))?;
    let version = custom_pages::version(&state.services, game_id, page_id, number).await?;
    let preview = previews::newest_of(&state.services, game_id, page_id, number).await?;
    let standing = Standing::of(state, &handle).await?;
    let base = format!("{}/{page_id}", Tab::CustomPages.href(game_id));
    let writes = user.can(Role::Developer);
    let (status, refused) = refused.map_or((StatusCode::OK, None), |(s, r)| (s, Some(r)));
    let building = preview
        .as_ref()
        .is_some_and(|p| matches!(p.status, Status::Queued | Status::Building));
    let body = html! {
        h1 { "Custom page " code { (page_id) } }
        p { "State: " strong #page-state { (standing.describe(page_id)) } }
        (versions_table(&base, &page, number, &standing))
        (content(&version))
        section #preview {
            h2 { "Preview" }
            (shots(game_id, preview.as_ref()))
            @if writes && !building {
                form method="post" action={ (base) "/preview" } {
                    (csrf(user))
                    input type="hidden" name="version" value=(number);
                    button #make-preview type="submit" {
                        @if preview.is_some() { "Make a new preview" } @else { "Make a preview" }
                    }
                }
            }
            @if let Some(Refused::Preview(why)) = &refused { p.field-error #error-preview role="alert" { (why) } }
        }
        section #publish {
            h2 { "Publishing" }
            @let pending: Vec<(&Approval, u32)> = standing.pending_of(page_id).collect();
            @if pending.is_empty() { p.muted { "No publish request waits for an approval." } }
            ul.plain {
                @for (a, v) in &pending {
                    li { a.pending-request href={ "/dashboard/approvals/" (a.approval_id) } { "Version " (v) ", asked " (a.created_at.format("%Y-%m-%d %H:%M")) } " waits for an approval" }
                }
            }
            @if writes {
                form method="post" action={ (base) "/publish-request" } {
                    (csrf(user))
                    input type="hidden" name="version" value=(number);
                    p.muted { "The request goes to the approval queue; approving it publishes this version to every connected player." }
                    button #request-publish type="submit" { "Ask to publish version " (number) }
                }
            }
            @if let Some(Refused::Publish(why)) = &refused { p.field-error #error-publish role="alert" { (why) } }
        }
        p { a href=(Tab::CustomPages.href(game_id)) { "Back to the custom pages" } }
    };
    Ok(layout::game_page(
        status,
        user,
        "Custom page",
        (&view.game, Tab::CustomPages),
        body,
    ))
}

/// `GET /dashboard/games/{game_id}/custom-pages/{page_id}`.
pub async fn show(
    State(state): State<AppState>,
    user: SignedIn,
    PagePath(ids): PagePath<(Uuid, Uuid)>,
    PageQuery(shown): PageQuery<Shown>,
) -> Result<Response, PageError> {
    page_page(&state, &user, ids, shown.version, None).await
}

/// The preview and publish forms: the version they act on.
#[derive(Debug, Deserialize)]
pub struct VersionForm {
    version: u32,
}

/// What follows a preview or publish request: the page it leads to, or the custom page
/// again with the refusal next to the form.
async fn after_request(
    state: &AppState,
    user: &SignedIn,
    ids: (Uuid, Uuid),
    version: u32,
    outcome: Result<String, (StatusCode, Refused)>,
) -> Result<Response, PageError> {
    match outcome {
        Ok(to) => Ok(Redirect::to(&to).into_response()),
        Err(refused) => page_page(state, user, ids, Some(version), Some(refused)).await,
    }
}

/// `POST /dashboard/games/{game_id}/custom-pages/{page_id}/preview` (developer): queues a
/// preview of the version, then shows it building.
pub async fn request_preview(
    State(state): State<AppState>,
    PagePath((game_id, page_id)): PagePath<(Uuid, Uuid)>,
    CsrfForm { user, form }: CsrfForm<VersionForm>,
) -> Result<Response, PageError> {
    let handle = game_of(&state.services, &user, game_id).await?;
    user.require(Role::Developer)?;
    let requester = previews::Requester::User(user.caller.sub.clone());
    let submitted = previews::submit(&state.services, handle, requester, page_id, form.version);
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
    after_request(&state, &user, (game_id, page_id), form.version, outcome).await
}

/// `POST /dashboard/games/{game_id}/custom-pages/{page_id}/publish-request` (developer):
/// queues the approval and opens it.
pub async fn request_publish(
    State(state): State<AppState>,
    PagePath((game_id, page_id)): PagePath<(Uuid, Uuid)>,
    CsrfForm { user, form }: CsrfForm<VersionForm>,
) -> Result<Response, PageError> {
    let handle = game_of(&state.services, &user, game_id).await?;
    user.require(Role::Developer)?;
    let page = PageRef {
        page_id,
        version: form.version,
    };
    let outcome = match publish_request::request(&state.services, &handle, page).await {
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
    after_request(&state, &user, (game_id, page_id), form.version, outcome).await
}
