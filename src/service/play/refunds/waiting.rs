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

use super::settle::{Target, drop_waiting};
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

/// Adds `target` to its game's list (once), dropping the oldest transactions past
/// [`MAX_WAITING`].
pub(super) async fn remember(state: &Services, target: &Target) -> ServiceResult<()> {
    let entry = Entry::of(target);
    let dropped = update(state, target.game_id, |list| {
        if list.contains(&entry) {
            return false;
        }
        list.push(entry.clone());
        true
    })
    .await?;
    if dropped.is_empty() {
        return Ok(());
    }
    let mut notices = 0;
    for old in &dropped {
        notices += drop_waiting(state, &old.target(target.game_id)).await?;
    }
    tracing::warn!(
        game_id = %target.game_id,
        transactions = dropped.len(),
        notices,
        "refund notifications waiting for a purchase dropped: the game keeps {MAX_WAITING}"
    );
    Ok(())
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

#[cfg(test)]
mod tests {
    use super::super::record::Action;
    use super::super::settle::{Settled, settle};
    use super::*;
    use crate::service::test_support::with_services;

    fn target(game_id: Uuid, n: usize) -> Target {
        Target {
            game_id,
            env: Environment::Production,
            store: Store::GooglePlay,
            transaction_id: format!("token-{n}"),
        }
    }

    async fn list(state: &Services, game_id: Uuid) -> Vec<Entry> {
        let bytes = state
            .store
            .get(collection(game_id), DOCUMENT)
            .await
            .expect("read")
            .expect("a list");
        decode(&bytes).expect("decode")
    }

    #[test]
    fn past_the_bound_the_oldest_waiting_notifications_are_dropped() {
        with_services(async |state| {
            let game_id = Uuid::new_v4();
            for n in 0..=MAX_WAITING {
                let settled = settle(
                    &state,
                    &target(game_id, n),
                    &format!("m-{n}"),
                    Action::Refund,
                )
                .await
                .expect("settled");
                assert_eq!(settled, Settled::Waiting);
            }
            let kept = list(&state, game_id).await;
            assert_eq!(kept.len(), MAX_WAITING);
            assert_eq!(kept[0], Entry::of(&target(game_id, 1)));
            // The oldest transaction's notification is gone from its record: nothing would
            // apply it. The newest still waits.
            assert_eq!(
                drop_waiting(&state, &target(game_id, 0))
                    .await
                    .expect("read"),
                0
            );
            assert_eq!(
                drop_waiting(&state, &target(game_id, MAX_WAITING))
                    .await
                    .expect("read"),
                1
            );
        });
    }
}
