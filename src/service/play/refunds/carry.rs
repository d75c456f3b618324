//! Carrying out one decided step on the player's records: the wallet step (a `refund`, or a
//! `purchase` again for a reversal), the inventory steps and, for a currency pack, the
//! currency's wallet steps (a `currency_spent` taking back what the balance still holds, a
//! `currency_earned` giving it back), each idempotent by a `tx_id` made of the store, the
//! transaction and the step's number; then the new inventory and balances are pushed to the
//! player's sessions on every node. Carrying out a step again (after a crash, or by two nodes
//! at once) changes nothing more.
//!
//! A production step whose revenue moved in a later UTC month than its purchase's also
//! records an adjustment line for that month's statement (`economy::adjustments`), once per
//! step, under the wallet step's `tx_id`.

use chrono::{DateTime, Utc};
use offer_domain::adjustment::{self, AdjustmentKind, Moved};
use offer_domain::environment::Environment;
use offer_domain::holdout::is_holdout;
use offer_wire::bus::BusMessage;

use super::record::{Step, StepKind, currency_of};
use super::target::Target;
use crate::service::economy::adjustments;
use crate::service::play::inventory::{self, InventoryChange, InventoryOp, InventoryOutcome};
use crate::service::{ServiceError, ServiceResult, Services};
use crate::store::{MoneyKind, MoneyOp, MoneyOutcome, Proof};

/// Carries out `step` on `player_id`'s records.
pub(super) async fn carry_out(
    state: &Services,
    target: &Target,
    player_id: &str,
    step: &Step,
) -> ServiceResult<()> {
    // One time for the wallet step and its adjustment line, so both name the same month.
    let at = Utc::now();
    let changed = match step.kind {
        StepKind::Refund => {
            let mut changed = false;
            for (line, units) in &step.items {
                match currency_of(line) {
                    Some(currency_id) => {
                        let tx = format!("refund:{}:{}:{line}", target.id(), step.number);
                        let wallet = (currency_id, MoneyKind::Spent, *units);
                        currency(state, target, player_id, &tx, wallet).await?;
                    }
                    None => changed |= take(state, target, player_id, step, line, *units).await?,
                }
            }
            if money(state, target, player_id, step, at).await? {
                adjust(state, target, player_id, step, at).await?;
            }
            changed
        }
        StepKind::Reversal => {
            if money(state, target, player_id, step, at).await? {
                adjust(state, target, player_id, step, at).await?;
            }
            for (line, units) in &step.items {
                if let Some(currency_id) = currency_of(line) {
                    let tx = format!("{}:{line}", money_tx(target, step));
                    let wallet = (currency_id, MoneyKind::Earned, *units);
                    currency(state, target, player_id, &tx, wallet).await?;
                }
            }
            restore(state, target, player_id, step).await?
        }
    };
    if changed {
        announce(state, target, player_id).await;
    }
    Ok(())
}

/// The `tx_id` of `step`'s wallet step: `refund:<store>:<transaction>` for the first step,
/// with `:<number>` for a later refund; `reversal:<store>:<transaction>:<number>`.
fn money_tx(target: &Target, step: &Step) -> String {
    match (step.kind, step.number) {
        (StepKind::Refund, 1) => format!("refund:{}", target.id()),
        (StepKind::Refund, n) => format!("refund:{}:{n}", target.id()),
        (StepKind::Reversal, n) => format!("reversal:{}:{n}", target.id()),
    }
}

/// The wallet step at `at`: a refund takes the revenue back, a reversal is a verified
/// purchase again. Whether its revenue stands recorded (now, or by an earlier attempt).
async fn money(
    state: &Services,
    target: &Target,
    player_id: &str,
    step: &Step,
    at: DateTime<Utc>,
) -> ServiceResult<bool> {
    if step.cents <= 0 {
        return Ok(false);
    }
    let kind = match step.kind {
        StepKind::Refund => MoneyKind::Refund,
        StepKind::Reversal => MoneyKind::Purchase,
    };
    let op = MoneyOp {
        ts: at,
        proof: Some(Proof::Verified),
        ..wallet_step(
            target,
            player_id,
            money_tx(target, step),
            (kind, "", step.cents),
        )
    };
    match state.store.apply_money(&op).await? {
        MoneyOutcome::Applied { .. } | MoneyOutcome::Duplicate { .. } => Ok(true),
        // The game has the SDK off (a refund is applied whatever the kill switch; a reversal
        // waits): the store retries the notification later.
        MoneyOutcome::KillSwitch => Err(ServiceError::Unavailable),
        // Only a client reusing the engine's own `tx_id` gets here: its event stands, the
        // refund's revenue is not recorded twice over it.
        outcome @ (MoneyOutcome::TxConflict | MoneyOutcome::InsufficientFunds { .. }) => {
            tracing::warn!(
                game_id = %target.game_id,
                tx_id = %op.tx_id,
                ?outcome,
                "a refund's wallet step was refused"
            );
            Ok(false)
        }
    }
}

/// Records the adjustment line of `step`, carried out at `at`, when its purchase was made in
/// an earlier UTC month of the game's production (a closed month's revenue moves in this
/// one). Nothing for the sandbox, nor for a purchase whose time its claim does not keep.
/// The line's id is the wallet step's `tx_id`: carrying the step out again records nothing
/// more.
async fn adjust(
    state: &Services,
    target: &Target,
    player_id: &str,
    step: &Step,
    at: DateTime<Utc>,
) -> ServiceResult<()> {
    let (Environment::Production, Some(bought_at)) = (target.env, step.bought_at) else {
        return Ok(());
    };
    let moved = Moved {
        kind: match step.kind {
            StepKind::Refund => AdjustmentKind::Refund,
            StepKind::Reversal => AdjustmentKind::Reversal,
        },
        store: target.store,
        transaction_id: &target.transaction_id,
        cents: step.cents,
        holdout: is_holdout(player_id, target.game_id),
        bought_at,
        at,
    };
    let Some(line) = adjustment::line(moved) else {
        return Ok(());
    };
    adjustments::record(state, target.game_id, &money_tx(target, step), &line).await
}

/// Takes `units` of `item_id` out of the inventory; fewer when the player used some since
/// the step was decided (the record then counts them taken). Whether anything changed now.
async fn take(
    state: &Services,
    target: &Target,
    player_id: &str,
    step: &Step,
    item_id: &str,
    units: i64,
) -> ServiceResult<bool> {
    let mut quantity = units;
    // A refused use writes nothing, so the same `tx_id` may ask for fewer.
    while quantity > 0 {
        let op = inventory_op(
            target,
            player_id,
            format!("refund:{}:{}:{item_id}", target.id(), step.number),
            InventoryChange::Use {
                item_id: item_id.to_owned(),
                quantity,
            },
        );
        match inventory::apply(state.store.as_ref(), &op).await? {
            InventoryOutcome::Applied(_) => return Ok(true),
            InventoryOutcome::Duplicate(_) => return Ok(false),
            InventoryOutcome::Insufficient { held } => quantity = held.min(quantity - 1),
            // Carried out before while the player held fewer: that take stands.
            InventoryOutcome::TxConflict => return Ok(false),
        }
    }
    Ok(false)
}

/// Takes a currency pack's units back from (`Spent`), or gives them back to (`Earned`), the
/// player's wallet under `tx_id`: a take asks for what the refund decided, and for less when
/// the balance no longer holds it (a refused spend writes nothing, so the same `tx_id` may
/// ask again). The player's sessions on every node hear of the new balance.
async fn currency(
    state: &Services,
    target: &Target,
    player_id: &str,
    tx_id: &str,
    (currency_id, kind, units): (&str, MoneyKind, i64),
) -> ServiceResult<()> {
    let mut amount = units;
    while amount > 0 {
        let op = wallet_step(
            target,
            player_id,
            tx_id.to_owned(),
            (kind, currency_id, amount),
        );
        match state.store.apply_money(&op).await? {
            MoneyOutcome::Applied { .. } => {
                let msg = BusMessage::BalanceChanged {
                    game_id: target.game_id,
                    env: target.env,
                    player_id: player_id.to_owned(),
                    currency_id: currency_id.to_owned(),
                };
                if let Err(e) = state.store.publish(&msg).await {
                    tracing::warn!(game_id = %target.game_id, error = %e, "balance push not published");
                }
                return Ok(());
            }
            MoneyOutcome::InsufficientFunds { balance } => amount = balance.min(amount - 1),
            // Carried out before (perhaps for less, while the balance held less): it stands.
            MoneyOutcome::Duplicate { .. } | MoneyOutcome::TxConflict => return Ok(()),
            // The game has the SDK off: the store retries the notification later.
            MoneyOutcome::KillSwitch => return Err(ServiceError::Unavailable),
        }
    }
    Ok(())
}

/// Adds back the items a reversal restores (its item lines). Whether anything changed now.
async fn restore(
    state: &Services,
    target: &Target,
    player_id: &str,
    step: &Step,
) -> ServiceResult<bool> {
    let items: Vec<(String, i64)> = step
        .items
        .iter()
        .filter(|(line, _)| currency_of(line).is_none())
        .cloned()
        .collect();
    if items.is_empty() {
        return Ok(false);
    }
    let op = inventory_op(
        target,
        player_id,
        money_tx(target, step),
        InventoryChange::Add(items),
    );
    Ok(match inventory::apply(state.store.as_ref(), &op).await? {
        InventoryOutcome::Applied(_) => true,
        InventoryOutcome::Duplicate(_)
        | InventoryOutcome::TxConflict
        | InventoryOutcome::Insufficient { .. } => false,
    })
}

/// A wallet step of the purchase's player, now, with no proof: `kind` of `amount` in
/// `currency_id` (empty for revenue).
fn wallet_step(
    target: &Target,
    player_id: &str,
    tx_id: String,
    (kind, currency_id, amount): (MoneyKind, &str, i64),
) -> MoneyOp {
    MoneyOp {
        game_id: target.game_id,
        env: target.env,
        player_id: player_id.to_owned(),
        tx_id,
        kind,
        currency_id: currency_id.to_owned(),
        amount,
        ts: Utc::now(),
        holdout: is_holdout(player_id, target.game_id),
        import: false,
        cohort: None,
        proof: None,
        day_cap: None,
    }
}

/// An inventory step of the purchase's player.
fn inventory_op(
    target: &Target,
    player_id: &str,
    tx_id: String,
    change: InventoryChange,
) -> InventoryOp {
    InventoryOp {
        game_id: target.game_id,
        env: target.env,
        player_id: player_id.to_owned(),
        tx_id,
        change,
    }
}

/// Tells every node that the player's inventory changed, so that each pushes it to the
/// player's sessions there. The change is stored: a bus that fails only costs the push.
async fn announce(state: &Services, target: &Target, player_id: &str) {
    let msg = BusMessage::InventoryChanged {
        game_id: target.game_id,
        env: target.env,
        player_id: player_id.to_owned(),
        answered: None,
    };
    if let Err(e) = state.store.publish(&msg).await {
        tracing::warn!(game_id = %target.game_id, error = %e, "inventory push not published");
    }
}
