//! The catalogue: its table of items (with search and paging, and the upload form for a
//! developer), and an item's page: its computed value and the value used, its art, and
//! (developer) the edit form with the expert override, the art upload and delete. The
//! catalogue's handlers show them, and the art upload shows the item's page when the image is
//! refused.

use maud::{Markup, html};
use offer_domain::catalogue::Item;
use offer_domain::validation::FieldError;
use uuid::Uuid;

use crate::auth::Role;
use crate::dashboard::forms::item::EditForm;
use crate::dashboard::layout::{csrf, field_errors, other_errors};
use crate::dashboard::session::SignedIn;
use crate::dashboard::views::products;

/// An amount in dollars, as the catalogue shows it.
fn usd(v: f64) -> String {
    format!("${v:.2}")
}

/// Where the page shows an asset of the game: the art route of [`item_art`], which checks
/// the member's session and studio.
///
/// [`item_art`]: crate::dashboard::item_art
fn art_src(game_id: Uuid, asset_id: &str) -> String {
    format!("/dashboard/games/{game_id}/assets/{asset_id}")
}

/// One page of the catalogue's table: the live items matching the search.
pub struct Table<'a> {
    /// The search as typed.
    pub q: &'a str,
    /// Whether a search narrowed the items.
    pub searched: bool,
    /// How many items match.
    pub matching: usize,
    /// The items of this page.
    pub shown: Vec<&'a Item>,
    /// This page's number, from 1.
    pub page: usize,
    /// How many pages the matching items fill.
    pub pages: usize,
}

/// The catalogue's table: the search, one page of `table` with links to the others, what an
/// upload did (`outcome`) or why it was refused (`errors`), and the upload form (developer).
pub fn table(
    user: &SignedIn,
    game_id: Uuid,
    table: &Table<'_>,
    outcome: Option<&str>,
    errors: &[FieldError],
) -> Markup {
    let base = format!("/dashboard/games/{game_id}/items");
    let (q, page, pages) = (table.q, table.page, table.pages);
    let link = |p: usize| {
        format!(
            "{base}?{}",
            serde_urlencoded::to_string([("q", q), ("page", &p.to_string())]).unwrap_or_default()
        )
    };
    html! {
        h1 { "Catalogue" }
        @if let Some(outcome) = outcome { p.notice role="status" #upload-outcome { (outcome) } }
        (field_errors(errors, "file"))
        (other_errors(errors, &["file"]))
        form role="search" method="get" action=(base) {
            label for="q" { "Search items by id or name" }
            input #q type="search" name="q" value=(q);
            button type="submit" { "Search" }
        }
        p.muted #item-count { (table.matching) " items" @if table.searched { " match" } ", page " (page) " of " (pages) "." }
        div.table-wrap { table #items {
            thead { tr {
                th { "Id" } th { "Name" } th { "Category" } th { "Price" }
                th { "Computed value" } th { "Override" } th { "Value used" }
            } }
            tbody {
                @for item in &table.shown {
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
    }
}

/// An item's page: its value, its art and, for a developer, the edit form showing `form`
/// with `errors` next to their fields, the art upload and delete.
pub fn page(
    user: &SignedIn,
    game_id: Uuid,
    item: &Item,
    form: &EditForm,
    errors: &[FieldError],
) -> Markup {
    let item_id = &item.item_id;
    let base = format!("/dashboard/games/{game_id}/items/{item_id}");
    let fields = [
        "item_name",
        "price_usd",
        "description",
        "value_override_usd",
        "art",
        "image",
        products::FIELDS[0],
        products::FIELDS[1],
    ];
    html! {
        h1 { (item.item_name) }
        p { "Computed value: " strong #computed-value { (usd(item.value_usd)) }
            " · value used: " strong { (usd(item.effective_value_usd())) } }
        @if let Some(asset_id) = &item.image {
            img #item-art src=(art_src(game_id, asset_id)) alt={ "Art of " (item.item_name) } width="128";
        }
        @if user.can(Role::Developer) {
            form.card method="post" action=(base) {
                (csrf(user))
                (other_errors(errors, &fields))
                label for="item_name" { "Name" }
                input #item_name type="text" name="item_name" required value=(form.item_name);
                (field_errors(errors, "item_name"))
                label for="price_usd" { "Price in dollars" }
                input #price_usd type="text" inputmode="decimal" name="price_usd" value=(form.price_usd);
                (field_errors(errors, "price_usd"))
                label for="description" { "Description" }
                textarea #description name="description" { (form.description) }
                (field_errors(errors, "description"))
                label for="value_override_usd" { "Expert override of the value in dollars (empty: use the computed value)" }
                input #value_override_usd type="text" inputmode="decimal" name="value_override_usd" value=(form.value_override_usd);
                (field_errors(errors, "value_override_usd"))
                (products::inputs("item", &form.app_store_product, &form.google_play_product, errors))
                button type="submit" { "Save item" }
            }
            form.card #art-form method="post" action={ (base) "/art" } enctype="multipart/form-data" {
                (csrf(user))
                label for="art" { "Item art (PNG, JPEG or WebP)" }
                input #art type="file" name="art" accept="image/png,image/jpeg,image/webp" required;
                (field_errors(errors, "art"))
                (field_errors(errors, "image"))
                button type="submit" { "Upload art" }
            }
            form method="post" action={ (base) "/delete" } data-confirm="Delete this item? It is never offered again." {
                (csrf(user))
                button.danger type="submit" { "Delete item" }
            }
        }
        p { a href={ "/dashboard/games/" (game_id) "/items" } { "Back to the catalogue" } }
    }
}
