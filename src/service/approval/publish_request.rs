//! A publish request: a `custom_page` approval queued for one saved version of a page, which
//! approving (in [`approvals::decide`]) publishes.
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

use crate::service::access::approvals_collection;
use crate::service::audit::{Audit, Watched, audited};
use offer_actors::GameHandle;
use offer_domain::approval::Approval;
use offer_domain::audit::{ChangedBy, ObjectRef};
use offer_domain::custom_page::PageRef;
use uuid::Uuid;

use crate::service::authoring::published_page::content;
use crate::service::{
    ServiceError, ServiceResult, Services, approval::approvals, authoring::page_validation,
};

/// Bytes of a `config` message besides its page (type, seq, version, field names).
pub const FRAME_HEADROOM: usize = 256;

/// Queues a `custom_page` approval for one saved version of a page of `game` (which the
/// caller checked is the caller's). An unknown page or version is a 404; a version too large
/// to push in one WebSocket frame a 413; a version the validator blocks a
/// [`ServiceError::PageInvalid`]. A refused request queues nothing.
pub async fn request(
    state: &Services,
    by: &ChangedBy,
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
    let approval_id = Uuid::new_v4();
    let studio_id = game.view().game.studio_id.clone();
    let audit = Audit::of_game(
        &studio_id,
        game_id,
        "custom_page.request_publish",
        ObjectRef::new("approval", approval_id),
        vec![Watched::new(approvals_collection(game_id), approval_id)],
    );
    audited(&*state.store, by, audit, async || {
        approvals::queue_page(state, game_id, approval_id, page).await
    })
    .await
}
