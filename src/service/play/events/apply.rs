//! What each event changes, once its batch passed the checks: telemetry feeds the session's
//! live features and the L1 model; money events go through the store's atomic wallet step
//! (idempotent by `tx_id`); `item_used` takes items out of the player's inventory and a
//! purchase puts its non-currency items in, after its wallet step (see the documentation of
//! the parent module). One function per kind of event.

use chrono::{DateTime, Utc};
use offer_actors::session::SessionChange;
use offer_actors::{GameHandle, SessionHandle};
use offer_domain::catalogue::Item;
use offer_domain::category::Category;
use offer_domain::environment::Environment;
use offer_domain::fsr::cohort_of;
use offer_wire::event::SdkEvent;
use uuid::Uuid;

use super::outcome::{Applied, Balance, Refusal};
use super::validate::find_item;
use crate::service::ServiceResult;
use crate::service::Services;
use crate::service::play::inventory::{self, InventoryChange, InventoryOp, InventoryOutcome};
use crate::service::play::offers::learn;
use crate::store::{MoneyKind, MoneyOp, MoneyOutcome, StoreError};
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
        } => {
            let op = cx.money(MoneyKind::Purchase, "", *price_cents, tx_id, ts);
            purchase(cx, op, *offer_id, item_ids).await
        }
    }
}

impl Context<'_> {
    /// The wallet step of a money event of this session's player.
    fn money(
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
        }
    }

    /// An inventory step of this session's player.
    fn items(&self, tx_id: &str, change: InventoryChange) -> InventoryOp {
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

/// `currency_earned` and `currency_spent`: the wallet step, answered with the new balance.
async fn currency(cx: &Context<'_>, op: MoneyOp) -> ServiceResult<Applied> {
    cx.session.event_seen();
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

/// `purchase`: the wallet step records the revenue; when it applied the purchase or
/// recognised a replay, the inventory step adds its items under the same `tx_id`. Only a
/// purchase applied now counts as spend and teaches its offer.
async fn purchase(
    cx: &Context<'_>,
    op: MoneyOp,
    offer_id: Option<Uuid>,
    item_ids: &[String],
) -> ServiceResult<Applied> {
    cx.session.event_seen();
    let outcome = cx.state.store.apply_money(&op).await?;
    let applied_now = match outcome {
        MoneyOutcome::Applied { .. } => true,
        MoneyOutcome::Duplicate { .. } => false,
        MoneyOutcome::InsufficientFunds { balance } => {
            return Ok(Applied::Rejected(Refusal::InsufficientFunds {
                currency_id: op.currency_id,
                balance,
                amount: op.amount,
            }));
        }
        MoneyOutcome::TxConflict => {
            return Ok(Applied::Rejected(Refusal::TxIdReused { tx_id: op.tx_id }));
        }
        MoneyOutcome::KillSwitch => return Ok(Applied::Rejected(Refusal::SdkDisabled)),
    };
    let grant = granted(&cx.game.view().items, item_ids);
    let inventory = if grant.is_empty() {
        None
    } else {
        let step = cx.items(&op.tx_id, InventoryChange::Add(grant));
        match inventory::apply(cx.state.store.as_ref(), &step).await? {
            InventoryOutcome::Applied(now) => {
                announce_inventory(cx).await;
                Some(now)
            }
            InventoryOutcome::Duplicate(now) => Some(now),
            // The purchase's tx_id came again with other items (the wallet step's replay
            // does not compare them): nothing more is added.
            InventoryOutcome::TxConflict => {
                return Ok(Applied::Rejected(Refusal::TxIdReused { tx_id: op.tx_id }));
            }
            InventoryOutcome::Insufficient { .. } => {
                return Err(StoreError::Corrupt(
                    "an inventory addition answered insufficient".into(),
                )
                .into());
            }
        }
    };
    if applied_now {
        cx.session.change(SessionChange::Spent(op.amount));
        if let Some(offer_id) = offer_id {
            learn(
                cx.state,
                cx.game,
                cx.session.info().session_id,
                offer_id,
                true,
            );
        }
    }
    Ok(Applied::Accepted {
        balance: None,
        inventory,
    })
}

/// What a purchase of `item_ids` puts in the inventory: each non-currency catalogue item's
/// `quantity` units, or 1.
fn granted(items: &[Item], item_ids: &[String]) -> Vec<(String, i64)> {
    item_ids
        .iter()
        .filter_map(|id| find_item(items, id))
        .filter(|item| item.category != Category::Currency)
        .map(|item| (item.item_id.clone(), item.quantity.unwrap_or(1)))
        .collect()
}

/// Tells every node that a player's inventory changed, so that each pushes it to the
/// player's sessions there. The change is stored: a bus that fails only costs the push.
async fn announce_inventory(cx: &Context<'_>) {
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

#[cfg(test)]
mod tests {
    use super::super::fixtures::catalogue;

    use super::*;

    #[test]
    fn a_purchase_grants_its_non_currency_items_by_quantity() {
        let ids: Vec<String> = ["gems_100", "potion", "sword", "shield", "sword"]
            .iter()
            .map(|s| (*s).to_owned())
            .collect();
        assert_eq!(
            granted(&catalogue(), &ids),
            vec![
                ("potion".to_owned(), 3),
                ("sword".to_owned(), 1),
                ("sword".to_owned(), 1)
            ]
        );
    }
}
