//! Publishing a custom page, which only an approval does: a publish request queues a
//! `custom_page` approval for one saved version; approving it (in
//! [`approvals::decide`]) stores that version, with its template
//! and bindings, as the game's published page in the same atomic store step as the decision.
//! The game's actor then serves it (SDK status, the `config` message) and every node reloads
//! it.
//!
//! Only a page that validates is published. The request runs every gate of the validator
//! (the secret scan and the catalogue references against the game's live catalogue
//! included) on the version, and the approval runs them again, since the catalogue may have
//! changed meanwhile; a version with a blocker is refused with the validator's answer
//! ([`ServiceError::PageInvalid`]), and the refusal queues and publishes nothing.
//!
//! The published page travels in the `config` WebSocket message, so a version is only
//! accepted for publishing when its page, as JSON, fits one frame
//! (`websocket.max_frame_bytes` less [`FRAME_HEADROOM`] for the rest of the message).

use offer_actors::GameHandle;
use offer_domain::approval::Approval;
use offer_domain::custom_page::{PageRef, PublishedPage, SharedPage};
use uuid::Uuid;

use super::{ServiceError, ServiceResult, Services, approvals, custom_pages, page_validation};
use crate::store::Collection;
use crate::store::codec::{decode, encode};

/// Bytes of a `config` message besides its page (type, seq, version, field names).
pub const FRAME_HEADROOM: usize = 256;

/// The document of the game's `config` collection holding the published page.
const KEY: &str = "custom_page";

fn config(game_id: Uuid) -> Collection {
    Collection::game(game_id, "config")
}

/// The game's published page, if one was ever approved.
pub async fn load(state: &Services, game_id: Uuid) -> ServiceResult<Option<SharedPage>> {
    match state.store.get(config(game_id), KEY).await? {
        Some(bytes) => Ok(Some(SharedPage::new(decode(&bytes)?))),
        None => Ok(None),
    }
}

/// Queues a `custom_page` approval for one saved version of a page of `game` (which the
/// caller checked is the caller's). An unknown page or version is a 404; a version too large
/// to push in one WebSocket frame a 413; a version the validator blocks a
/// [`ServiceError::PageInvalid`]. A refused request queues nothing.
pub async fn request(
    state: &Services,
    game: &GameHandle,
    page: PageRef,
) -> ServiceResult<Approval> {
    let game_id = game.view().game.game_id;
    let content = content(state, game_id, page).await?;
    let bytes = serde_json::to_vec(&content)
        .map_err(|e| ServiceError::Internal(format!("page: {e}")))?
        .len();
    let most = state
        .settings
        .websocket
        .max_frame_bytes
        .saturating_sub(FRAME_HEADROOM);
    if bytes > most {
        return Err(ServiceError::PayloadTooLarge(format!(
            "the page takes {bytes} bytes of JSON; a published page is pushed in one WebSocket frame, so at most {most}"
        )));
    }
    page_validation::require_valid(game, &content).await?;
    approvals::queue_page(state, game_id, page).await
}

/// The page as it would be published: the saved version's template and bindings.
pub async fn content(
    state: &Services,
    game_id: Uuid,
    page: PageRef,
) -> ServiceResult<PublishedPage> {
    let saved = custom_pages::version(state, game_id, page.page_id, page.version).await?;
    Ok(PublishedPage {
        page_id: page.page_id,
        version: page.version,
        template: saved.template,
        bindings: saved.bindings,
    })
}

/// Documents to write into one collection: their ids and encoded bodies.
pub type Entries = Vec<(String, Vec<u8>)>;

/// Where [`approvals::decide`] writes the published page of
/// `game_id`, beside the decision: the collection and its one entry.
pub fn entry(game_id: Uuid, page: &PublishedPage) -> ServiceResult<(Collection, Entries)> {
    Ok((config(game_id), vec![(KEY.to_owned(), encode(page)?)]))
}
