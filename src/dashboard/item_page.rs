//! The answer of an item's page, which both the item's edit (`catalogue.rs`) and its art
//! upload (`item_art.rs`) give, so that neither page module imports the other.

use axum::response::Response;
use offer_domain::validation::FieldError;

use super::access::DashGame;
use super::failure::PageError;
use super::forms::item::EditForm;
use super::layout::{Tab, status_of};
use super::views::catalogue;
use crate::service::ServiceError;

/// An item's page, with what was typed and why it was refused when a save failed (a 422).
pub fn item_page<R>(
    at: &DashGame<R>,
    item_id: &str,
    typed: Option<&EditForm>,
    errors: &[FieldError],
) -> Result<Response, PageError> {
    let view = at.game.view();
    let item = view
        .items
        .iter()
        .find(|i| i.item_id == item_id && i.is_live())
        .ok_or(ServiceError::NotFound("item"))?;
    let form = typed.cloned().unwrap_or_else(|| EditForm::of(item));
    let body = catalogue::page(&at.user, at.game_id(), item, &form, errors);
    Ok(at.page(status_of(errors), &item.item_name, Tab::Catalogue, body))
}
