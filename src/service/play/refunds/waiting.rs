//! The game's list of transactions with notifications waiting for their purchase, oldest
//! first, so that a game keeps at most [`MAX_WAITING`] of them: a store may refund a
//! purchase the engine never saw (made before the game sent receipts, or never reported),
//! and such notifications must not pile up for good. Past the bound the oldest are dropped,
//! and the drop is logged with its count.
//!
//! One document per game, changed by compare-and-swap.

use offer_domain::environment::Environment;
use offer_domain::product_ids::Store;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::target::Target;
use crate::service::{ServiceError, ServiceResult, Services};
use crate::store::Collection;
use crate::store::codec::{decode, encode};

/// The most transactions one game keeps notifications waiting for.
pub const MAX_WAITING: usize = 1_000;

/// Attempts against concurrent writers of the list.
const ATTEMPTS: usize = 16;

/// The id of the list in its collection.
const DOCUMENT: &str = "waiting";

/// One transaction of the list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Entry {
    /// The environment its notifications named.
    env: Environment,
    /// The store.
    store: Store,
    /// The store's transaction id.
    transaction_id: String,
}

impl Entry {
    fn of(target: &Target) -> Self {
        Self {
            env: target.env,
            store: target.store,
            transaction_id: target.transaction_id.clone(),
        }
    }

    fn target(&self, game_id: Uuid) -> Target {
        Target {
            game_id,
            env: self.env,
            store: self.store,
            transaction_id: self.transaction_id.clone(),
        }
    }
}

fn collection(game_id: Uuid) -> Collection {
    Collection::game(game_id, "refunds_waiting")
}

/// Changes the game's list with `change`, which answers whether it changed anything; the
/// entries it pushed out past the bound.
async fn update(
    state: &Services,
    game_id: Uuid,
    change: impl Fn(&mut Vec<Entry>) -> bool,
) -> ServiceResult<Vec<Entry>> {
    let coll = collection(game_id);
    for _ in 0..ATTEMPTS {
        let stored = state.store.get(coll, DOCUMENT).await?;
        let mut list: Vec<Entry> = match &stored {
            Some(bytes) => decode(bytes)?,
            None => Vec::new(),
        };
        if !change(&mut list) {
            return Ok(Vec::new());
        }
        let over = list.len().saturating_sub(MAX_WAITING);
        let dropped: Vec<Entry> = list.drain(..over).collect();
        if state
            .store
            .compare_and_swap(coll, DOCUMENT, stored.as_deref(), encode(&list)?)
            .await?
        {
            return Ok(dropped);
        }
    }
    tracing::warn!(%game_id, "the waiting refunds kept changing under {ATTEMPTS} attempts");
    Err(ServiceError::Unavailable)
}

/// Adds `target` to its game's list (once); the oldest transactions pushed out past
/// [`MAX_WAITING`], whose notifications the caller forgets.
pub(super) async fn remember(state: &Services, target: &Target) -> ServiceResult<Vec<Target>> {
    let entry = Entry::of(target);
    let dropped = update(state, target.game_id, |list| {
        if list.contains(&entry) {
            return false;
        }
        list.push(entry.clone());
        true
    })
    .await?;
    Ok(dropped
        .iter()
        .map(|old| old.target(target.game_id))
        .collect())
}

/// Takes `target` off its game's list.
pub(super) async fn forget(state: &Services, target: &Target) -> ServiceResult<()> {
    let entry = Entry::of(target);
    update(state, target.game_id, |list| {
        let before = list.len();
        list.retain(|e| *e != entry);
        list.len() != before
    })
    .await
    .map(|_| ())
}

/// The game's list, oldest first.
#[cfg(test)]
pub(super) async fn listed(state: &Services, game_id: Uuid) -> ServiceResult<Vec<Target>> {
    Ok(
        match state.store.get(collection(game_id), DOCUMENT).await? {
            Some(bytes) => decode::<Vec<Entry>>(&bytes)?
                .iter()
                .map(|e| e.target(game_id))
                .collect(),
            None => Vec::new(),
        },
    )
}
