//! The catalogue: a table of the game's live items with search and paging (thousands of
//! items), each with its computed value and its expert override; bulk upload of a JSON or CSV
//! file (developer); the save of an item's edit form with the override control, and soft
//! delete. An item's page is [`views::item`](super::views::item) and its art upload
//! [`item_art`](super::item_art). The catalogue service (`service/items.rs`) validates and
//! recomputes every value.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use maud::html;
use offer_domain::catalogue::Item;
use offer_domain::validation::FieldError;
use serde::Deserialize;
use uuid::Uuid;

use super::extract::{PagePath, PageQuery};
use super::failure::PageError;
use super::items_file;
use super::layout::{self, Tab, csrf, field_errors, other_errors};
use super::session::{CsrfForm, CsrfMultipart, NoFields, SignedIn, game_of};
use super::views::item::{EditForm, edit_page, usd};
use crate::auth::Role;
use crate::service::ServiceError;
use crate::service::game::items::{self, OnConflict};
use crate::state::AppState;

/// Items a page of the table shows.
const PAGE_SIZE: usize = 50;

/// The table's query: a search over id and name, and the page (from 1).
#[derive(Debug, Default, Deserialize)]
pub struct TableQuery {
    #[serde(default)]
    q: String,
    #[serde(default)]
    page: Option<usize>,
}

async fn table_page(
    state: &AppState,
    user: &SignedIn,
    game_id: Uuid,
    query: &TableQuery,
    outcome: Option<String>,
    errors: &[FieldError],
    status: StatusCode,
) -> Result<Response, PageError> {
    let handle = game_of(&state.services, user, game_id).await?;
    let view = handle.view();
    let needle = query.q.trim().to_lowercase();
    let matching: Vec<&Item> = view
        .items
        .iter()
        .filter(|i| i.is_live())
        .filter(|i| {
            needle.is_empty()
                || i.item_id.contains(&needle)
                || i.item_name.to_lowercase().contains(&needle)
        })
        .collect();
    let pages = matching.len().div_ceil(PAGE_SIZE).max(1);
    let page = query.page.unwrap_or(1).clamp(1, pages);
    let shown = matching.iter().skip((page - 1) * PAGE_SIZE).take(PAGE_SIZE);
    let base = format!("/dashboard/games/{game_id}/items");
    let q = &query.q;
    let link = |p: usize| {
        format!(
            "{base}?{}",
            serde_urlencoded::to_string([("q", q.as_str()), ("page", &p.to_string())])
                .unwrap_or_default()
        )
    };
    let body = html! {
        h1 { "Catalogue" }
        @if let Some(outcome) = &outcome { p.notice role="status" #upload-outcome { (outcome) } }
        (field_errors(errors, "file"))
        (other_errors(errors, &["file"]))
        form role="search" method="get" action=(base) {
            label for="q" { "Search items by id or name" }
            input #q type="search" name="q" value=(q);
            button type="submit" { "Search" }
        }
        p.muted #item-count { (matching.len()) " items" @if !needle.is_empty() { " match" } ", page " (page) " of " (pages) "." }
        div.table-wrap { table #items {
            thead { tr {
                th { "Id" } th { "Name" } th { "Category" } th { "Price" }
                th { "Computed value" } th { "Override" } th { "Value used" }
            } }
            tbody {
                @for item in shown {
                    tr data-item-id=(item.item_id) {
                        td { a href={ (base) "/" (item.item_id) } { (item.item_id) } }
                        td { (item.item_name) }
                        td { (serde_json::to_value(item.category).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default()) }
                        td { (usd(item.price_usd)) }
                        td.value { (usd(item.value_usd)) }
                        td.override { (item.value_override_usd.map(usd).unwrap_or_default()) }
                        td { (usd(item.effective_value_usd())) }
                    }
                }
            }
        } }
        nav.pager aria-label="Pages" {
            @if page > 1 { a href=(link(page - 1)) rel="prev" { "Previous page" } }
            @if page < pages { a href=(link(page + 1)) rel="next" { "Next page" } }
        }
        @if user.can(Role::Developer) {
            section {
                h2 { "Upload items" }
                p.muted { "A JSON array of items (or {\"items\": [...]}) or a CSV file whose header names the item fields (item_id, item_name, category, price_usd, currency_id, quantity, ...). Existing ids are updated; at most 500 items a file." }
                form method="post" action={ (base) "/upload" } enctype="multipart/form-data" {
                    (csrf(user))
                    label for="file" { "Catalogue file" }
                    input #file type="file" name="file" accept=".json,.csv,application/json,text/csv" required;
                    button type="submit" { "Upload" }
                }
            }
        }
    };
    Ok(layout::game_page(
        status,
        user,
        "Catalogue",
        (&view.game, Tab::Catalogue),
        body,
    ))
}

/// `GET /dashboard/games/{game_id}/items`.
pub async fn page(
    State(state): State<AppState>,
    user: SignedIn,
    PagePath(game_id): PagePath<Uuid>,
    PageQuery(query): PageQuery<TableQuery>,
) -> Result<Response, PageError> {
    table_page(&state, &user, game_id, &query, None, &[], StatusCode::OK).await
}

/// `POST /dashboard/games/{game_id}/items/upload` (developer): a bulk upsert of the file.
pub async fn upload(
    State(state): State<AppState>,
    PagePath(game_id): PagePath<Uuid>,
    CsrfMultipart { user, mut rest }: CsrfMultipart,
) -> Result<Response, PageError> {
    let handle = game_of(&state.services, &user, game_id).await?;
    user.require(Role::Developer)?;
    let outcome = upsert_file(&state, &handle, &mut rest).await?;
    let none = TableQuery::default();
    match outcome {
        Ok(done) => {
            table_page(
                &state,
                &user,
                game_id,
                &none,
                Some(done),
                &[],
                StatusCode::OK,
            )
            .await
        }
        Err(errors) => {
            table_page(
                &state,
                &user,
                game_id,
                &none,
                None,
                &errors,
                StatusCode::UNPROCESSABLE_ENTITY,
            )
            .await
        }
    }
}

/// Reads the upload's `file` field and upserts its items: what was done, or every error.
async fn upsert_file(
    state: &AppState,
    handle: &offer_actors::GameHandle,
    rest: &mut axum::extract::Multipart,
) -> Result<Result<String, Vec<FieldError>>, PageError> {
    let mut file = None;
    while let Some(field) = rest
        .next_field()
        .await
        .map_err(|e| PageError::BadForm(e.body_text()))?
    {
        if field.name() == Some("file") {
            let name = field.file_name().unwrap_or_default().to_owned();
            let bytes = field
                .bytes()
                .await
                .map_err(|e| PageError::BadForm(e.body_text()))?;
            file = Some((name, bytes));
        }
    }
    let Some((name, bytes)) = file else {
        return Ok(Err(vec![FieldError::new(
            "file",
            "choose a file to upload",
        )]));
    };
    let entries = match items_file::read(&name, &bytes) {
        Ok(entries) => entries,
        Err(e) => return Ok(Err(vec![e])),
    };
    match items::upsert(&state.services, handle, entries, OnConflict::Update).await {
        Ok(done) => Ok(Ok(format!(
            "Uploaded {name}: {} created, {} updated.",
            done.created, done.updated
        ))),
        Err(ServiceError::Validation(errors) | ServiceError::Conflicts(errors)) => Ok(Err(errors)),
        Err(ServiceError::PayloadTooLarge(why)) => Ok(Err(vec![FieldError::new("file", why)])),
        Err(e) => Err(e.into()),
    }
}

/// `GET /dashboard/games/{game_id}/items/{item_id}`.
pub async fn edit_form(
    State(state): State<AppState>,
    user: SignedIn,
    PagePath((game_id, item_id)): PagePath<(Uuid, String)>,
) -> Result<Response, PageError> {
    edit_page(&state, &user, game_id, &item_id, None, &[]).await
}

/// `POST /dashboard/games/{game_id}/items/{item_id}` (developer).
pub async fn edit(
    State(state): State<AppState>,
    PagePath((game_id, item_id)): PagePath<(Uuid, String)>,
    CsrfForm { user, form }: CsrfForm<EditForm>,
) -> Result<Response, PageError> {
    let handle = game_of(&state.services, &user, game_id).await?;
    user.require(Role::Developer)?;
    let patch = match form.patch() {
        Ok(patch) => patch,
        Err(errors) => {
            return edit_page(&state, &user, game_id, &item_id, Some(&form), &errors).await;
        }
    };
    match items::patch(&state.services, &handle, &item_id, patch).await {
        Ok(_) => Ok(
            Redirect::to(&format!("/dashboard/games/{game_id}/items/{item_id}")).into_response(),
        ),
        Err(ServiceError::Validation(errors)) => {
            edit_page(&state, &user, game_id, &item_id, Some(&form), &errors).await
        }
        Err(e) => Err(e.into()),
    }
}

/// `POST /dashboard/games/{game_id}/items/{item_id}/delete` (developer): a soft delete.
pub async fn delete(
    State(state): State<AppState>,
    PagePath((game_id, item_id)): PagePath<(Uuid, String)>,
    CsrfForm { user, .. }: CsrfForm<NoFields>,
) -> Result<Response, PageError> {
    let handle = game_of(&state.services, &user, game_id).await?;
    user.require(Role::Developer)?;
    items::soft_delete(&state.services, &handle, &item_id).await?;
    Ok(Redirect::to(&format!("/dashboard/games/{game_id}/items")).into_response())
}
