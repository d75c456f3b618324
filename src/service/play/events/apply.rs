//! What each event changes, once its batch passed the checks: telemetry feeds the session's
//! live features and the L1 model; money events go through the store's atomic wallet step
//! (idempotent by `tx_id`); `item_used` takes items out of the player's inventory; a
//! purchase is the `purchase` module's. One function per kind of event.

use chrono::{DateTime, Utc};
use offer_actors::{GameHandle, SessionHandle};
use offer_domain::environment::Environment;
use offer_domain::fsr::cohort_of;
use offer_wire::event::SdkEvent;

use super::outcome::{Applied, Balance, Refusal};
use super::purchase::{Purchase, purchase};
use crate::service::ServiceResult;
use crate::service::Services;
use crate::service::play::inventory::{self, InventoryChange, InventoryOp, InventoryOutcome};
use crate::service::play::offers::learn;
use crate::store::{MoneyKind, MoneyOp, MoneyOutcome};
use offer_wire::bus::BusMessage;

/// Where an event came from, which decides who hears of a change it makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Origin {
    /// The session's own socket, which answers it with the inventory and the balance: the
    /// player's other sessions hear of an inventory change.
    Socket,
    /// `POST /v1/sdk/events`: every session of the player hears of an inventory or balance
    /// change, this one included.
    Rest,
}

/// One event of one session, and what applying it works with.
pub(super) struct Context<'a> {
    /// The use cases' shared parts.
    pub state: &'a Services,
    /// The session's game.
    pub game: &'a GameHandle,
    /// The session.
    pub session: &'a SessionHandle,
    /// The session's environment.
    pub env: Environment,
    /// Where the event came from.
    pub origin: Origin,
}

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

impl Context<'_> {
    /// The wallet step of a money event of this session's player.
    pub(super) fn money(
        &self,
        kind: MoneyKind,
        currency_id: &str,
        amount: i64,
        tx_id: &str,
        ts: &Option<DateTime<Utc>>,
    ) -> MoneyOp {
        let info = self.session.info();
        let player = self.session.player(false);
        MoneyOp {
            game_id: info.game_id,
            env: self.env,
            player_id: info.player_id.clone(),
            tx_id: tx_id.to_owned(),
            kind,
            currency_id: currency_id.to_owned(),
            amount,
            ts: ts.unwrap_or_else(Utc::now),
            holdout: player.holdout,
            import: false,
            cohort: player.install_day.map(cohort_of),
            proof: None,
        }
    }

    /// An inventory step of this session's player.
    pub(super) fn items(&self, tx_id: &str, change: InventoryChange) -> InventoryOp {
        let info = self.session.info();
        InventoryOp {
            game_id: info.game_id,
            env: self.env,
            player_id: info.player_id.clone(),
            tx_id: tx_id.to_owned(),
            change,
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
/// the wallet step, answered with the new balance.
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
    let outcome = cx.state.store.apply_money(&op).await?;
    if cx.origin == Origin::Rest && matches!(outcome, MoneyOutcome::Applied { .. }) {
        announce_balance(cx, &op.currency_id).await;
    }
    Ok(match outcome {
        MoneyOutcome::Applied { balance } | MoneyOutcome::Duplicate { balance } => {
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

/// Tells every node that a player's inventory changed, so that each pushes it to the
/// player's sessions there. The change is stored: a bus that fails only costs the push.
pub(super) async fn announce_inventory(cx: &Context<'_>) {
    let info = cx.session.info();
    let msg = BusMessage::InventoryChanged {
        game_id: info.game_id,
        env: info.env,
        player_id: info.player_id.clone(),
        answered: (cx.origin == Origin::Socket).then_some(info.session_id),
    };
    if let Err(e) = cx.state.store.publish(&msg).await {
        tracing::warn!(game_id = %info.game_id, error = %e, "inventory push not published");
    }
}

/// Tells every node that a REST-sent money event moved a player's balance, so that each
/// pushes the balance to the player's sessions there (an event sent on a socket is answered
/// with its balance on that socket). The change is stored: a bus that fails only costs the
/// push.
async fn announce_balance(cx: &Context<'_>, currency_id: &str) {
    let info = cx.session.info();
    let msg = BusMessage::BalanceChanged {
        game_id: info.game_id,
        env: info.env,
        player_id: info.player_id.clone(),
        currency_id: currency_id.to_owned(),
    };
    if let Err(e) = cx.state.store.publish(&msg).await {
        tracing::warn!(game_id = %info.game_id, error = %e, "balance push not published");
    }
}
