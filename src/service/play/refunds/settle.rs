//! Applying a store's notification to its transaction: the refund record's state machine,
//! one compare-and-swap at a time, so that nodes racing on one transaction (a store's retry
//! landing on another node, a purchase arriving with its refund) agree on every step.
//!
//! A step is first written into the record as pending, then carried out, then cleared; a
//! pending step found by anyone (a retry, the next notification, the purchase) is carried out
//! again before anything else, and carrying out is idempotent. A notification whose purchase
//! was never seen waits in the record (and in the game's list, [`super::waiting`]) until the
//! purchase claims its transaction.

use std::collections::BTreeMap;

use super::carry::carry_out;
use super::record::{Action, Bought, RefundRecord, Step};
use super::target::Target;
use super::waiting;
use crate::service::play::inventory;
use crate::service::play::receipts::redemptions::claim_of;
use crate::service::{ServiceError, ServiceResult, Services};
use crate::store::codec::{decode, encode};

/// Attempts against concurrent writers of one record before giving up as unavailable (the
/// store retries the notification).
const ATTEMPTS: usize = 16;

/// What a notification did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Settled {
    /// It took back or restored what `Step` says; the items the refunds standing on the
    /// purchase could not take back after it.
    Stepped(Step, BTreeMap<String, i64>),
    /// It was applied, and changed nothing (a refund of what is already refunded).
    Unchanged,
    /// It was applied before.
    Duplicate,
    /// Its purchase was never seen: it waits for it.
    Waiting,
}

/// A record as read: its bytes (for the compare-and-swap) and its value.
type Read = (Option<Vec<u8>>, RefundRecord);

async fn load(state: &Services, target: &Target) -> ServiceResult<Read> {
    let bytes = state.store.get(target.collection(), &target.id()).await?;
    let record = match &bytes {
        Some(bytes) => decode(bytes)?,
        None => RefundRecord::default(),
    };
    Ok((bytes, record))
}

/// Writes `record` if the stored one is still `read`'s.
async fn swap(
    state: &Services,
    target: &Target,
    read: &Read,
    record: &RefundRecord,
) -> ServiceResult<bool> {
    Ok(state
        .store
        .compare_and_swap(
            target.collection(),
            &target.id(),
            read.0.as_deref(),
            encode(record)?,
        )
        .await?)
}

/// Applies the notification `notice` asking `action` of `target`.
pub(super) async fn settle(
    state: &Services,
    target: &Target,
    notice: &str,
    action: Action,
) -> ServiceResult<Settled> {
    for _ in 0..ATTEMPTS {
        let read = load(state, target).await?;
        if let Some(step) = &read.1.pending {
            finish(state, target, &read, step).await?;
            continue;
        }
        if read.1.applied(notice) {
            return Ok(Settled::Duplicate);
        }
        let Some(claim) = claim_of(
            state.store.as_ref(),
            (target.game_id, target.env),
            (target.store, &target.transaction_id),
        )
        .await?
        else {
            let mut record = read.1.clone();
            if !record.wait(notice, action) {
                return Ok(Settled::Waiting);
            }
            if swap(state, target, &read, &record).await? {
                let dropped = waiting::remember(state, target).await?;
                forget_dropped(state, target, &dropped).await?;
                // The purchase may have claimed its transaction since it was looked for,
                // and found nothing waiting: look again, and apply the notice if so.
                if claim_of(
                    state.store.as_ref(),
                    (target.game_id, target.env),
                    (target.store, &target.transaction_id),
                )
                .await?
                .is_none()
                {
                    return Ok(Settled::Waiting);
                }
            }
            continue;
        };
        let held = inventory::read(
            state.store.as_ref(),
            target.game_id,
            target.env,
            &claim.player_id,
        )
        .await?;
        let mut record = read.1.clone();
        let step = record.advance(
            (notice, action),
            (&claim.player_id, Bought::from(&claim)),
            &held,
        );
        if !swap(state, target, &read, &record).await? {
            continue;
        }
        if read.1.waits(notice) && record.waiting.is_empty() {
            waiting::forget(state, target).await?;
        }
        let Some(step) = step else {
            return Ok(Settled::Unchanged);
        };
        let written = (Some(encode(&record)?), record);
        finish(state, target, &written, &step).await?;
        return Ok(Settled::Stepped(step, written.1.unrecovered));
    }
    Err(busy(target))
}

/// Carries out the pending `step` of the record `read`, then clears it (unless someone
/// else did meanwhile).
async fn finish(state: &Services, target: &Target, read: &Read, step: &Step) -> ServiceResult<()> {
    let Some(player_id) = read.1.player_id.as_deref() else {
        return Err(ServiceError::Internal(format!(
            "refund record `{}` has a step and no player",
            target.id()
        )));
    };
    carry_out(state, target, player_id, step).await?;
    let mut current = (read.0.clone(), read.1.clone());
    for _ in 0..ATTEMPTS {
        if current.1.pending.as_ref() != Some(step) {
            return Ok(());
        }
        let mut done = current.1.clone();
        done.pending = None;
        if swap(state, target, &current, &done).await? {
            return Ok(());
        }
        current = load(state, target).await?;
    }
    Err(busy(target))
}

/// Applies every notification waiting for `target`'s purchase, now that it claimed its
/// transaction, and takes the transaction off the game's waiting list.
pub(super) async fn drain(state: &Services, target: &Target) -> ServiceResult<()> {
    // Each round applies one notice (or carries out a pending step): a record holds at most
    // a few. A transaction nobody refunded (nearly every one) costs one read.
    let mut applied = false;
    for _ in 0..ATTEMPTS {
        let read = load(state, target).await?;
        if let Some(step) = &read.1.pending {
            finish(state, target, &read, step).await?;
            continue;
        }
        let Some(next) = read.1.waiting.first() else {
            if applied {
                waiting::forget(state, target).await?;
            }
            return Ok(());
        };
        settle(state, target, &next.notice, next.action).await?;
        applied = true;
    }
    Err(busy(target))
}

/// Forgets the notifications waiting for `target` (the game keeps too many); how many.
pub(super) async fn drop_waiting(state: &Services, target: &Target) -> ServiceResult<usize> {
    for _ in 0..ATTEMPTS {
        let read = load(state, target).await?;
        if read.1.waiting.is_empty() {
            return Ok(0);
        }
        let mut record = read.1.clone();
        let dropped = std::mem::take(&mut record.waiting).len();
        if swap(state, target, &read, &record).await? {
            return Ok(dropped);
        }
    }
    Err(busy(target))
}

/// Forgets the notifications of the transactions the game's waiting list let go of when
/// `target` joined it, and says so with their count.
async fn forget_dropped(
    state: &Services,
    target: &Target,
    dropped: &[Target],
) -> ServiceResult<()> {
    if dropped.is_empty() {
        return Ok(());
    }
    let mut notices = 0;
    for old in dropped {
        notices += drop_waiting(state, old).await?;
    }
    tracing::warn!(
        game_id = %target.game_id,
        transactions = dropped.len(),
        notices,
        "refund notifications waiting for a purchase dropped: the game keeps {}",
        waiting::MAX_WAITING
    );
    Ok(())
}

/// A record that kept changing under every attempt.
fn busy(target: &Target) -> ServiceError {
    tracing::warn!(
        game_id = %target.game_id,
        "a refund record kept changing under {ATTEMPTS} attempts"
    );
    ServiceError::Unavailable
}

#[cfg(test)]
mod tests {
    use offer_domain::environment::Environment;
    use offer_domain::product_ids::Store;
    use uuid::Uuid;

    use super::super::record::Action;
    use super::super::waiting::{MAX_WAITING, listed};
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
            let kept = listed(&state, game_id).await.expect("the list");
            assert_eq!(kept.len(), MAX_WAITING);
            assert_eq!(kept[0], target(game_id, 1));
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
