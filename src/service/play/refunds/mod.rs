//! Store refunds: what the App Store and Google Play say they refunded (or revoked, or
//! un-refunded) is taken back from the player who redeemed the transaction.
//!
//! - [`notifications`] judges a store's notification and says what it asks of which
//!   transaction;
//! - `settle` applies that to the transaction's refund record (`record`, the pure state
//!   machine), once per notification and once per unit of the purchase, whatever retries or
//!   nodes race;
//! - `carry` carries out each decided step on the player's wallet record and inventory and
//!   pushes the new inventory to the player's sessions;
//! - `waiting` bounds the notifications kept for purchases the engine has not seen yet,
//!   which [`after_redemption`] applies once the purchase claims its transaction;
//! - `target` names the transaction a notification is about.
//!
//! A refund takes back the items the player still holds (never below zero; what was used is
//! recorded as unrecovered) and records a `refund` of its revenue on the day it arrives. A
//! reversal is a verified purchase again, and gives back the items the refund took.
//! `docs/refunds.md` tells the whole behaviour.

mod carry;
pub mod notifications;
mod record;
mod settle;
mod target;
mod waiting;

use offer_domain::environment::Environment;
use offer_domain::product_ids::Store;
use uuid::Uuid;

pub use notifications::{Handled, Outcome, app_store, google_play};
pub use target::records;
pub use waiting::MAX_WAITING;

use crate::service::Services;

/// Applies the notifications that arrived for `transaction_id` of `store` before its
/// purchase, now that the purchase claimed it (a purchase calls it after its grant was
/// recorded). A failure is logged, not answered: the purchase itself stands.
pub async fn after_redemption(
    state: &Services,
    (game_id, env): (Uuid, Environment),
    (store, transaction_id): (Store, &str),
) {
    let target = target::Target {
        game_id,
        env,
        store,
        transaction_id: transaction_id.to_owned(),
    };
    if let Err(e) = settle::drain(state, &target).await {
        tracing::warn!(%game_id, error = %e, "refunds waiting for a purchase not applied");
    }
}
