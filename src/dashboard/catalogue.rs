//! The catalogue: a table of the game's live items with search and paging (thousands of
//! items), each with its computed value and its expert override; bulk upload of a JSON or CSV
//! file (developer); the save of an item's edit form with the override control, and soft
//! delete. The table and an item's page are drawn by
//! [`views::catalogue`](super::views::catalogue); an item's art is uploaded and served by the
//! item art handlers. The catalogue service (`service/items.rs`) validates and
//! recomputes every value.

use axum::extract::State;
use axum::response::{IntoResponse, Redirect, Response};
use offer_domain::catalogue::Item;
use offer_domain::validation::FieldError;
use serde::Deserialize;
use uuid::Uuid;

use super::access::{DashGame, Developer, Viewer};
use super::extract::{PagePath, PageQuery};
use super::failure::PageError;
use super::forms::item::EditForm;
use super::forms::items_file;
use super::item_page::item_page;
use super::layout::{Tab, status_of};
use super::session::{CsrfForm, CsrfMultipart, NoFields, UploadedFile};
use super::views::catalogue::{self, Table};
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

/// The table's page `query` asks for, with what an upload did or why it was refused.
fn table_page<R>(
    at: &DashGame<R>,
    query: &TableQuery,
    outcome: Option<&str>,
    errors: &[FieldError],
) -> Response {
    let view = at.game.view();
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
    let table = Table {
        q: &query.q,
        searched: !needle.is_empty(),
        matching: matching.len(),
        shown: matching
            .iter()
            .skip((page - 1) * PAGE_SIZE)
            .take(PAGE_SIZE)
            .copied()
            .collect(),
        page,
        pages,
    };
    let body = catalogue::table(&at.user, at.game_id(), &table, outcome, errors);
    at.page(status_of(errors), "Catalogue", Tab::Catalogue, body)
}

/// `GET /dashboard/games/{game_id}/items`.
pub async fn page(at: DashGame<Viewer>, PageQuery(query): PageQuery<TableQuery>) -> Response {
    table_page(&at, &query, None, &[])
}

/// `POST /dashboard/games/{game_id}/items/upload` (developer): a bulk upsert of the file.
pub async fn upload(
    at: DashGame<Developer>,
    State(state): State<AppState>,
    mut upload: CsrfMultipart,
) -> Result<Response, PageError> {
    let none = TableQuery::default();
    Ok(match upsert_file(&state, &at, &mut upload).await? {
        Ok(done) => table_page(&at, &none, Some(&done), &[]),
        Err(errors) => table_page(&at, &none, None, &errors),
    })
}

/// Reads the upload's `file` field and upserts its items: what was done, or every error.
async fn upsert_file<R>(
    state: &AppState,
    at: &DashGame<R>,
    upload: &mut CsrfMultipart,
) -> Result<Result<String, Vec<FieldError>>, PageError> {
    let Some(UploadedFile { name, bytes }) = upload.file("file").await? else {
        return Ok(Err(vec![FieldError::new(
            "file",
            "choose a file to upload",
        )]));
    };
    let entries = match items_file::read(&name, &bytes) {
        Ok(entries) => entries,
        Err(e) => return Ok(Err(vec![e])),
    };
    match items::upsert(
        &state.services,
        &at.user.by(),
        &at.game,
        entries,
        OnConflict::Update,
    )
    .await
    {
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
    at: DashGame<Viewer>,
    PagePath((_, item_id)): PagePath<(Uuid, String)>,
) -> Result<Response, PageError> {
    item_page(&at, &item_id, None, &[])
}

/// `POST /dashboard/games/{game_id}/items/{item_id}` (developer).
pub async fn edit(
    at: DashGame<Developer>,
    State(state): State<AppState>,
    PagePath((game_id, item_id)): PagePath<(Uuid, String)>,
    CsrfForm { form, .. }: CsrfForm<EditForm>,
) -> Result<Response, PageError> {
    let patch = match form.patch() {
        Ok(patch) => patch,
        Err(errors) => return item_page(&at, &item_id, Some(&form), &errors),
    };
    match items::patch(&state.services, &at.user.by(), &at.game, &item_id, patch).await {
        Ok(_) => Ok(
            Redirect::to(&format!("/dashboard/games/{game_id}/items/{item_id}")).into_response(),
        ),
        Err(ServiceError::Validation(errors) | ServiceError::Conflicts(errors)) => {
            item_page(&at, &item_id, Some(&form), &errors)
        }
        Err(e) => Err(e.into()),
    }
}

/// `POST /dashboard/games/{game_id}/items/{item_id}/delete` (developer): a soft delete.
pub async fn delete(
    at: DashGame<Developer>,
    State(state): State<AppState>,
    PagePath((_, item_id)): PagePath<(Uuid, String)>,
    _: CsrfForm<NoFields>,
) -> Result<Response, PageError> {
    items::soft_delete(&state.services, &at.user.by(), &at.game, &item_id).await?;
    Ok(Redirect::to(&Tab::Catalogue.href(at.game_id())).into_response())
}
