//! Validation of a custom offer page (`POST .../custom-pages/validate`): the domain's
//! validator run against the game's live catalogue. Publishing runs the same check
//! ([`require_valid`]) on the version it publishes, at the request and again at the approval.
//!
//! The validator is pure: it parses the template once and runs every gate on the tree; this
//! module only gives it the game's items (live, deleted or unknown, and what a page may show
//! of each) and runs it on a blocking thread, since a 64 KiB template is a few milliseconds
//! of CPU that must not hold up the request threads serving offers.

use std::sync::Arc;

use offer_actors::{GameHandle, GameView};
use offer_domain::custom_page::PublishedPage;
use offer_domain::template::catalogue::{Catalogue, ItemLookup, ItemSummary};
use offer_domain::template::validate::{Validation, validate};
use serde_json::Value;

use crate::service::{ServiceError, ServiceResult};

/// The catalogue of one game as the validator and the preview builds read it.
pub(crate) struct GameCatalogue(pub(crate) Arc<GameView>);

impl Catalogue for GameCatalogue {
    fn lookup(&self, item_id: &str) -> ItemLookup {
        // The view keeps every item, soft-deleted ones included, sorted by id.
        let items = &self.0.items;
        match items.binary_search_by(|i| i.item_id.as_str().cmp(item_id)) {
            Ok(at) => match items.get(at) {
                Some(item) if item.deleted_at.is_none() => ItemLookup::Live(ItemSummary::of(item)),
                Some(_) => ItemLookup::Deleted,
                None => ItemLookup::Unknown,
            },
            Err(_) => ItemLookup::Unknown,
        }
    }
}

/// Runs every gate of the validator on `template` and `bindings` against `game`'s catalogue.
pub async fn check(
    game: &GameHandle,
    template: String,
    bindings: Value,
) -> ServiceResult<Validation> {
    let catalogue = GameCatalogue(game.view());
    tokio::task::spawn_blocking(move || validate(&template, &bindings, &catalogue))
        .await
        .map_err(|e| ServiceError::Internal(format!("template validation: {e}")))
}

/// Runs every gate on a page as it would be published; a page with any blocker is refused
/// with the validator's whole answer ([`ServiceError::PageInvalid`]).
pub async fn require_valid(game: &GameHandle, page: &PublishedPage) -> ServiceResult<()> {
    let bindings = Value::Object(page.bindings.clone());
    let verdict = check(game, page.template.clone(), bindings).await?;
    if verdict.valid {
        Ok(())
    } else {
        Err(ServiceError::PageInvalid(Box::new(verdict)))
    }
}
