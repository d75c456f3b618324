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
use super::record::{Action, Bought, RefundRecord, Step, currency_line, grant_lines};
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
        let mut held = inventory::read(
            state.store.as_ref(),
            target.game_id,
            target.env,
            &claim.player_id,
        )
        .await?;
        for (currency_id, _) in &claim.currency {
            let balance = state
                .store
                .balance(target.game_id, target.env, &claim.player_id, currency_id)
                .await?;
            held.insert(currency_line(currency_id), balance);
        }
        let lines = grant_lines(&claim);
        let mut record = read.1.clone();
        let step = record.advance(
            (notice, action),
            (&claim.player_id, Bought::of(&claim, &lines)),
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

    use chrono::{DateTime, Duration, Months, Utc};
    use offer_domain::adjustment::{AdjustmentGroup, AdjustmentKind, month_of};

    use super::super::record::Action;
    use super::super::waiting::{MAX_WAITING, listed};
    use super::*;
    use crate::service::economy::adjustments;
    use crate::service::play::receipts::redemptions::{Claim, Redeemed, redeem};
    use crate::service::test_support::{new_game, with_services};

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

    /// Claims `target`'s transaction for `player` (499 cents, one sword), bought at `at`.
    async fn bought(state: &Services, target: &Target, player: &str, at: Option<DateTime<Utc>>) {
        let claim = Claim {
            player_id: player.to_owned(),
            tx_id: format!("buy-{}", target.transaction_id),
            amount: 499,
            grant: vec![("sword".to_owned(), 1)],
            currency: Vec::new(),
            quantity: 1,
            purchased_at: at,
        };
        let redeemed = redeem(
            state.store.as_ref(),
            (target.game_id, target.env),
            (target.store, &target.transaction_id),
            &claim,
        )
        .await
        .expect("claimed");
        assert_eq!(redeemed, Redeemed::First);
    }

    #[test]
    fn a_refund_of_an_earlier_months_purchase_is_one_line_of_this_month() {
        with_services(async |state| {
            let game_id = new_game(&state, "adjusted").await.view().game.game_id;
            let now = Utc::now();
            let this_month = month_of(now);
            let two_months_ago = now.checked_sub_months(Months::new(2)).expect("a date");
            let old = target(game_id, 1);
            bought(&state, &old, "player_0", Some(two_months_ago)).await;

            let refunded = settle(&state, &old, "n-1", Action::Refund)
                .await
                .expect("settled");
            let Settled::Stepped(step, _) = refunded else {
                panic!("a step: {refunded:?}");
            };
            let lines = adjustments::of_month(&state, game_id, &this_month)
                .await
                .expect("lines")
                .lines;
            assert_eq!(lines.len(), 1, "{lines:?}");
            let line = &lines[0];
            assert_eq!(line.month, this_month);
            assert_eq!(line.purchase_month, month_of(two_months_ago));
            assert_eq!(line.kind, AdjustmentKind::Refund);
            assert_eq!(
                (line.store, line.transaction_id.as_str()),
                (Store::GooglePlay, "token-1")
            );
            assert_eq!(line.amount_usd, -4.99);
            let group = if offer_domain::holdout::is_holdout("player_0", game_id) {
                AdjustmentGroup::Holdout
            } else {
                AdjustmentGroup::Treatment
            };
            assert_eq!(line.group, group);
            // The line never names the player.
            let stored = state
                .store
                .list(crate::store::Collection::game(
                    game_id,
                    "billing_adjustments",
                ))
                .await
                .expect("listed");
            assert_eq!(stored.len(), 1);
            assert!(!String::from_utf8_lossy(&stored[0].1).contains("player_0"));

            // The same step carried out again (a crash, another node), and the store's retry:
            // still one line.
            carry_out(&state, &old, "player_0", &step)
                .await
                .expect("carried out again");
            assert_eq!(
                settle(&state, &old, "n-1", Action::Refund)
                    .await
                    .expect("again"),
                Settled::Duplicate
            );
            let lines = adjustments::of_month(&state, game_id, &this_month)
                .await
                .expect("lines")
                .lines;
            assert_eq!(lines.len(), 1, "{lines:?}");

            // Apple reverses the refund: a second line, positive; the two add up to nothing.
            let reversed = settle(&state, &old, "n-2", Action::Reverse)
                .await
                .expect("settled");
            assert!(matches!(reversed, Settled::Stepped(..)), "{reversed:?}");
            let lines = adjustments::of_month(&state, game_id, &this_month)
                .await
                .expect("lines")
                .lines;
            assert_eq!(lines.len(), 2, "{lines:?}");
            let kinds: Vec<(AdjustmentKind, f64)> =
                lines.iter().map(|l| (l.kind, l.amount_usd)).collect();
            assert!(
                kinds.contains(&(AdjustmentKind::Reversal, 4.99)),
                "{kinds:?}"
            );
            assert_eq!(offer_domain::adjustment::total_usd(&lines), 0.0);
            // Nothing lands on another month.
            let last_month = month_of(now - Duration::days(40));
            assert!(
                adjustments::of_month(&state, game_id, &last_month)
                    .await
                    .expect("lines")
                    .lines
                    .is_empty()
            );
        });
    }

    #[test]
    fn a_refund_in_its_purchases_month_an_unknown_month_or_the_sandbox_is_no_line() {
        with_services(async |state| {
            let game_id = new_game(&state, "unadjusted").await.view().game.game_id;
            let now = Utc::now();
            let long_ago = now.checked_sub_months(Months::new(3)).expect("a date");
            // Bought now; bought before purchase times were kept; a sandbox purchase.
            let this = target(game_id, 1);
            bought(&state, &this, "player_0", Some(now)).await;
            let unknown = target(game_id, 2);
            bought(&state, &unknown, "player_0", None).await;
            let sandbox = Target {
                env: Environment::Sandbox,
                ..target(game_id, 3)
            };
            bought(&state, &sandbox, "player_0", Some(long_ago)).await;
            for (n, t) in [&this, &unknown, &sandbox].into_iter().enumerate() {
                let settled = settle(&state, t, &format!("n-{n}"), Action::Refund)
                    .await
                    .expect("settled");
                assert!(matches!(settled, Settled::Stepped(..)), "{settled:?}");
            }
            let all = state
                .store
                .list(crate::store::Collection::game(
                    game_id,
                    "billing_adjustments",
                ))
                .await
                .expect("listed");
            assert!(all.is_empty(), "{} lines", all.len());
        });
    }
}
