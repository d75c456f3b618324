//! What each event changes, once its batch passed the checks: telemetry feeds the session's
//! live features and the L1 model (and a show counts in its price experiment); money events
//! go through the store's atomic wallet step (idempotent by `tx_id`); `item_used` takes items
//! out of the player's inventory; a purchase is the `purchase` module's. One function per
//! kind of event.

use offer_wire::event::SdkEvent;

use super::context::{Context, Origin, announce_balance, announce_inventory};
use super::outcome::{Applied, Balance, Refusal};
use super::purchase::{Purchase, purchase};
use crate::service::ServiceResult;
use crate::service::economy::day_caps;
use crate::service::play::exposures;
use crate::service::play::inventory::{self, InventoryChange, InventoryOutcome};
use crate::service::play::offers::learn;
use crate::store::{ExposureTotals, MoneyKind, MoneyOp, MoneyOutcome};

/// Applies one checked event.
pub(super) async fn apply(cx: &Context<'_>, event: &SdkEvent) -> ServiceResult<Applied> {
    match event {
        SdkEvent::SessionStart { .. } => {
            cx.session.touch();
            Ok(Applied::NOTHING)
        }
        SdkEvent::OfferShown { offer_id, .. } => {
            cx.session.event_seen();
            learn(
                cx.state,
                cx.game,
                cx.session.info().session_id,
                *offer_id,
                false,
            );
            let shown = ExposureTotals {
                shown: 1,
                ..ExposureTotals::default()
            };
            exposures::count(cx.state, cx.session.info(), cx.env, *offer_id, shown).await;
            Ok(Applied::NOTHING)
        }
        SdkEvent::CurrencyLow { .. }
        | SdkEvent::FirstLoss { .. }
        | SdkEvent::BossRaid { .. }
        | SdkEvent::OfferDismissed { .. } => {
            cx.session.event_seen();
            Ok(Applied::NOTHING)
        }
        SdkEvent::ItemUsed {
            item_id,
            quantity,
            tx_id,
            ..
        } => item_used(cx, item_id, *quantity, tx_id).await,
        SdkEvent::CurrencyEarned {
            currency_id,
            amount,
            tx_id,
            ts,
            ..
        } => {
            let op = cx.money(MoneyKind::Earned, currency_id, *amount, tx_id, ts);
            currency(cx, op).await
        }
        SdkEvent::CurrencySpent {
            currency_id,
            amount,
            tx_id,
            ts,
            ..
        } => {
            let op = cx.money(MoneyKind::Spent, currency_id, *amount, tx_id, ts);
            currency(cx, op).await
        }
        SdkEvent::Purchase {
            offer_id,
            item_ids,
            price_cents,
            tx_id,
            ts,
            receipt,
        } => {
            let event = Purchase {
                offer_id: *offer_id,
                item_ids,
                price_cents: *price_cents,
                tx_id,
                ts,
                receipt: receipt.as_ref(),
            };
            purchase(cx, &event).await
        }
    }
}

/// `item_used`: takes the items out of the inventory, refused above the count held.
async fn item_used(
    cx: &Context<'_>,
    item_id: &str,
    quantity: i64,
    tx_id: &str,
) -> ServiceResult<Applied> {
    cx.session.event_seen();
    let change = InventoryChange::Use {
        item_id: item_id.to_owned(),
        quantity,
    };
    let store = cx.state.store.as_ref();
    let outcome = inventory::apply(store, &cx.items(tx_id, change)).await?;
    if let InventoryOutcome::Applied(_) = outcome {
        announce_inventory(cx).await;
    }
    Ok(match outcome {
        InventoryOutcome::Applied(now) | InventoryOutcome::Duplicate(now) => Applied::Accepted {
            balance: None,
            inventory: Some(now),
        },
        InventoryOutcome::Insufficient { held } => Applied::Rejected(Refusal::InsufficientItems {
            item_id: item_id.to_owned(),
            held,
            quantity,
        }),
        InventoryOutcome::TxConflict => Applied::Rejected(Refusal::TxIdReused {
            tx_id: tx_id.to_owned(),
        }),
    })
}

/// `currency_earned` and `currency_spent`: refused above the currency's `max_per_event`, else
/// the wallet step under the player's day cap of the currency (what is above it moves the
/// balance but is left out of the economy's figures), answered with the new balance.
async fn currency(cx: &Context<'_>, op: MoneyOp) -> ServiceResult<Applied> {
    cx.session.event_seen();
    let bound = cx
        .game
        .view()
        .game
        .currencies
        .iter()
        .find(|c| c.currency_id == op.currency_id)
        .and_then(|c| c.max_per_event);
    if let Some(max) = bound
        && op.amount > max
    {
        return Ok(Applied::Rejected(Refusal::AmountOutOfBounds {
            currency_id: op.currency_id,
            amount: op.amount,
            max,
        }));
    }
    let mut op = op;
    op.day_cap = day_caps::cap_for(
        cx.state,
        &cx.game.view().game,
        cx.env,
        op.kind,
        &op.currency_id,
    )
    .await?;
    let outcome = cx.state.store.apply_money(&op).await?;
    if cx.origin == Origin::Rest && matches!(outcome, MoneyOutcome::Applied { .. }) {
        announce_balance(cx, &op.currency_id).await;
    }
    Ok(match outcome {
        MoneyOutcome::Applied { balance, .. } | MoneyOutcome::Duplicate { balance } => {
            Applied::Accepted {
                balance: Some(Balance {
                    currency_id: op.currency_id,
                    balance,
                }),
                inventory: None,
            }
        }
        MoneyOutcome::InsufficientFunds { balance } => {
            Applied::Rejected(Refusal::InsufficientFunds {
                currency_id: op.currency_id,
                balance,
                amount: op.amount,
            })
        }
        MoneyOutcome::TxConflict => Applied::Rejected(Refusal::TxIdReused { tx_id: op.tx_id }),
        MoneyOutcome::KillSwitch => Applied::Rejected(Refusal::SdkDisabled),
    })
}
