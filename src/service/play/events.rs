//! SDK events (`POST /v1/sdk/events` and the WebSocket `event` message): their wire shape,
//! validation, and what each one changes.
//!
//! Telemetry events feed the session's live features and the L1 model; money events go
//! through the store's atomic wallet step (idempotent by `tx_id`). Currency enters wallets
//! only through `currency_earned`; `purchase` records real-money revenue and puts its
//! non-currency items in the player's inventory, which `item_used` takes them out of.
//!
//! A purchase's items go through the store's inventory step after its wallet step, under
//! the same `tx_id`, when the wallet step applied it or recognised it as a replay: each step
//! is idempotent on its own, so a purchase retried after a failure between the two adds its
//! items exactly once, and a replay adds nothing. Each listed non-currency item adds its
//! catalogue `quantity` units (1 when it has none); currency packs and ids that are no
//! catalogue item add nothing.

use chrono::{DateTime, Utc};
use offer_actors::session::SessionChange;
use offer_actors::{GameHandle, SessionHandle};
use offer_domain::catalogue::Item;
use offer_domain::category::Category;
use offer_domain::environment::Environment;
use offer_domain::fsr::cohort_of;
use offer_domain::game::Game;
use offer_domain::validation::{MAX_ID_LEN, is_snake_case};
use serde::Serialize;
use utoipa::ToSchema;
use uuid::Uuid;

use crate::service::Services;
use crate::service::play::inventory::{
    self, InventoryChange, InventoryOp, InventoryOutcome, Items,
};
use crate::service::{ServiceError, ServiceResult};
use crate::store::{BusMessage, MoneyKind, MoneyOp, MoneyOutcome, StoreError};
use offer_wire::event::SdkEvent;

/// Largest amount of one money event.
const MAX_AMOUNT: i64 = 1_000_000_000;

/// A refused event.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Rejected {
    /// Position in the batch.
    pub index: usize,
    /// `insufficient_funds`, `insufficient_items`, `tx_id_reused` or `sdk_disabled`.
    pub code: &'static str,
    /// Explanation.
    pub message: String,
}

/// A wallet's balance after a money event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Balance {
    /// The currency of the wallet.
    pub currency_id: String,
    /// Its balance in units.
    pub balance: i64,
}

/// Why a well-formed event was refused; nothing changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// A spend above the wallet's balance.
    InsufficientFunds {
        /// The wallet's currency.
        currency_id: String,
        /// Its balance.
        balance: i64,
        /// The refused amount.
        amount: i64,
    },
    /// An `item_used` above the count the player holds.
    InsufficientItems {
        /// The item.
        item_id: String,
        /// How many the player holds.
        held: i64,
        /// The refused quantity.
        quantity: i64,
    },
    /// The `tx_id` was already used for a different change.
    TxIdReused {
        /// The reused id.
        tx_id: String,
    },
    /// The kill switch turned the SDK off between the check and the wallet step.
    SdkDisabled,
}

impl Refusal {
    /// The stable code clients branch on.
    pub fn code(&self) -> &'static str {
        match self {
            Self::InsufficientFunds { .. } => "insufficient_funds",
            Self::InsufficientItems { .. } => "insufficient_items",
            Self::TxIdReused { .. } => "tx_id_reused",
            Self::SdkDisabled => "sdk_disabled",
        }
    }

    /// The explanation shown to a developer.
    pub fn message(&self) -> String {
        match self {
            Self::InsufficientFunds {
                currency_id,
                balance,
                amount,
            } => format!("balance of {currency_id} is {balance}, below {amount}"),
            Self::InsufficientItems {
                item_id,
                held,
                quantity,
            } => format!("the player holds {held} of {item_id}, below {quantity}"),
            Self::TxIdReused { tx_id } => {
                format!("tx_id `{tx_id}` was already used for a different change")
            }
            Self::SdkDisabled => "the SDK is disabled for this game (kill switch level 3)".into(),
        }
    }
}

/// What applying one event did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Applied {
    /// Applied (or an idempotent replay).
    Accepted {
        /// The new balance of a currency event.
        balance: Option<Balance>,
        /// The player's inventory after a purchase or an `item_used`.
        inventory: Option<Items>,
    },
    /// Refused; nothing changed.
    Rejected(Refusal),
}

/// How far an SDK event's `ts` may be from the server's clock. Money events land in the
/// day aggregates by `ts`, so a client must not write into another week; history goes
/// through the admin import.
const MAX_CLOCK_SKEW_HOURS: i64 = 24;

impl Applied {
    /// Accepted, changing no wallet and no inventory.
    const NOTHING: Self = Self::Accepted {
        balance: None,
        inventory: None,
    };
}

/// Checks every event of a batch before any is applied, so a bad batch changes nothing.
pub fn validate_all(game: &Game, items: &[Item], events: &[SdkEvent]) -> ServiceResult<()> {
    let mut errors = Vec::new();
    for (i, e) in events.iter().enumerate() {
        if let Err(reason) = validate(game, items, e) {
            errors.push(offer_domain::validation::FieldError::new("events", reason).at(i));
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(ServiceError::Validation(errors))
    }
}

/// Checks one event against the game and its catalogue (every item, sorted by `item_id`).
pub fn validate(game: &Game, items: &[Item], e: &SdkEvent) -> Result<(), String> {
    validate_live(game, e)?;
    if let SdkEvent::ItemUsed { item_id, .. } = e {
        match find_item(items, item_id) {
            None => return Err(format!("item_id: unknown item `{item_id}`")),
            Some(item) if item.category == Category::Currency => {
                return Err(format!(
                    "item_id: `{item_id}` is a currency pack, never held as an item; \
                     currency leaves wallets through currency_spent"
                ));
            }
            Some(_) => {}
        }
    }
    Ok(())
}

/// A catalogue item (soft-deleted ones included: a player keeps what it bought).
fn find_item<'a>(items: &'a [Item], item_id: &str) -> Option<&'a Item> {
    items
        .binary_search_by(|i| i.item_id.as_str().cmp(item_id))
        .ok()
        .and_then(|at| items.get(at))
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

/// Checks one event's fields and its time.
fn validate_live(game: &Game, e: &SdkEvent) -> Result<(), String> {
    if let Some(ts) = e.ts()
        && (ts - Utc::now()).num_hours().abs() >= MAX_CLOCK_SKEW_HOURS
    {
        return Err(format!(
            "ts must be within {MAX_CLOCK_SKEW_HOURS} hours of the server's clock; send history through the admin import"
        ));
    }
    validate_fields(game, e)
}

/// Checks one event's fields, whatever its time: the rules an SDK event and an imported one
/// share.
pub fn validate_fields(game: &Game, e: &SdkEvent) -> Result<(), String> {
    let currency = |id: &str| {
        if game.currencies.iter().any(|c| c.currency_id == id) {
            Ok(())
        } else {
            Err(format!("unknown currency `{id}`"))
        }
    };
    let tx = |tx: &str| {
        if tx.is_empty() || tx.chars().count() > 128 {
            Err("tx_id must be 1 to 128 characters".to_owned())
        } else {
            Ok(())
        }
    };
    let amount = |a: i64| {
        if (1..=MAX_AMOUNT).contains(&a) {
            Ok(())
        } else {
            Err(format!("amount must be between 1 and {MAX_AMOUNT}"))
        }
    };
    match e {
        SdkEvent::CurrencyLow { currency_id, .. } => currency(currency_id),
        SdkEvent::CurrencyEarned {
            currency_id,
            amount: a,
            tx_id,
            ..
        }
        | SdkEvent::CurrencySpent {
            currency_id,
            amount: a,
            tx_id,
            ..
        } => currency(currency_id).and(tx(tx_id)).and(amount(*a)),
        SdkEvent::Purchase {
            item_ids,
            price_cents,
            tx_id,
            ..
        } => {
            tx(tx_id)?;
            if item_ids.len() > 50 {
                return Err("at most 50 item_ids".into());
            }
            if let Some(id) = item_ids.iter().find(|id| !is_snake_case(id, MAX_ID_LEN)) {
                return Err(format!(
                    "item_ids: `{id}` is not a catalogue item id (snake_case)"
                ));
            }
            if !(0..=10_000_000).contains(price_cents) {
                return Err("price_cents must be between 0 and 10000000".into());
            }
            Ok(())
        }
        SdkEvent::ItemUsed {
            item_id,
            quantity,
            tx_id,
            ..
        } => {
            tx(tx_id)?;
            if !is_snake_case(item_id, MAX_ID_LEN) {
                return Err(format!(
                    "item_id: `{item_id}` is not a catalogue item id (snake_case)"
                ));
            }
            if !(1..=MAX_AMOUNT).contains(quantity) {
                return Err(format!("quantity must be between 1 and {MAX_AMOUNT}"));
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

/// Where an event came from, which decides who hears of an inventory change it makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// The session's own socket, which answers it with the inventory: the player's other
    /// sessions hear of it.
    Socket,
    /// `POST /v1/sdk/events`: every session of the player hears of it, this one included.
    Rest,
}

/// Tells every node that a player's inventory changed, so that each pushes it to the
/// player's sessions there. The change is stored: a bus that fails only costs the push.
async fn announce_inventory(state: &Services, session: &SessionHandle, origin: Origin) {
    let info = session.info();
    let msg = BusMessage::InventoryChanged {
        game_id: info.game_id,
        env: info.env,
        player_id: info.player_id.clone(),
        answered: (origin == Origin::Socket).then_some(info.session_id),
    };
    if let Err(e) = state.store.publish(&msg).await {
        tracing::warn!(game_id = %info.game_id, error = %e, "inventory push not published");
    }
}

/// Tells every node that a REST-sent money event moved a player's balance, so that each
/// pushes the balance to the player's sessions there (an event sent on a socket is answered
/// with its balance on that socket). The change is stored: a bus that fails only costs the
/// push.
async fn announce_balance(state: &Services, session: &SessionHandle, currency_id: &str) {
    let info = session.info();
    let msg = BusMessage::BalanceChanged {
        game_id: info.game_id,
        env: info.env,
        player_id: info.player_id.clone(),
        currency_id: currency_id.to_owned(),
    };
    if let Err(e) = state.store.publish(&msg).await {
        tracing::warn!(game_id = %info.game_id, error = %e, "balance push not published");
    }
}

/// Applies one validated event for a session.
pub async fn apply(
    state: &Services,
    game: &GameHandle,
    session: &SessionHandle,
    env: Environment,
    event: &SdkEvent,
    origin: Origin,
) -> ServiceResult<Applied> {
    let info = session.info();
    let player = session.player(false);
    let money = |kind: MoneyKind,
                 currency_id: &str,
                 amount: i64,
                 tx_id: &str,
                 ts: &Option<DateTime<Utc>>| MoneyOp {
        game_id: info.game_id,
        env,
        player_id: info.player_id.clone(),
        tx_id: tx_id.to_owned(),
        kind,
        currency_id: currency_id.to_owned(),
        amount,
        ts: ts.unwrap_or_else(Utc::now),
        holdout: player.holdout,
        import: false,
        cohort: player.install_day.map(cohort_of),
    };
    let items = |tx_id: &str, change: InventoryChange| InventoryOp {
        game_id: info.game_id,
        env,
        player_id: info.player_id.clone(),
        tx_id: tx_id.to_owned(),
        change,
    };
    let op = match event {
        SdkEvent::SessionStart { .. } => {
            session.touch();
            return Ok(Applied::NOTHING);
        }
        SdkEvent::OfferShown { offer_id, .. } => {
            session.event_seen();
            crate::service::play::offers::learn(state, game, *offer_id, false);
            return Ok(Applied::NOTHING);
        }
        SdkEvent::CurrencyLow { .. }
        | SdkEvent::FirstLoss { .. }
        | SdkEvent::BossRaid { .. }
        | SdkEvent::OfferDismissed { .. } => {
            session.event_seen();
            return Ok(Applied::NOTHING);
        }
        SdkEvent::ItemUsed {
            item_id,
            quantity,
            tx_id,
            ..
        } => {
            session.event_seen();
            let change = InventoryChange::Use {
                item_id: item_id.clone(),
                quantity: *quantity,
            };
            let outcome = inventory::apply(state.store.as_ref(), &items(tx_id, change)).await?;
            if let InventoryOutcome::Applied(_) = outcome {
                announce_inventory(state, session, origin).await;
            }
            return Ok(match outcome {
                InventoryOutcome::Applied(now) | InventoryOutcome::Duplicate(now) => {
                    Applied::Accepted {
                        balance: None,
                        inventory: Some(now),
                    }
                }
                InventoryOutcome::Insufficient { held } => {
                    Applied::Rejected(Refusal::InsufficientItems {
                        item_id: item_id.clone(),
                        held,
                        quantity: *quantity,
                    })
                }
                InventoryOutcome::TxConflict => Applied::Rejected(Refusal::TxIdReused {
                    tx_id: tx_id.clone(),
                }),
            });
        }
        SdkEvent::CurrencyEarned {
            currency_id,
            amount,
            tx_id,
            ts,
            ..
        } => money(MoneyKind::Earned, currency_id, *amount, tx_id, ts),
        SdkEvent::CurrencySpent {
            currency_id,
            amount,
            tx_id,
            ts,
            ..
        } => money(MoneyKind::Spent, currency_id, *amount, tx_id, ts),
        SdkEvent::Purchase {
            price_cents,
            tx_id,
            ts,
            ..
        } => money(MoneyKind::Purchase, "", *price_cents, tx_id, ts),
    };
    session.event_seen();
    let outcome = state.store.apply_money(&op).await?;
    if let (
        MoneyOutcome::Applied { .. } | MoneyOutcome::Duplicate { .. },
        SdkEvent::Purchase { item_ids, .. },
    ) = (&outcome, event)
    {
        let grant = granted(&game.view().items, item_ids);
        let inventory = if grant.is_empty() {
            None
        } else {
            let step = items(&op.tx_id, InventoryChange::Add(grant));
            match inventory::apply(state.store.as_ref(), &step).await? {
                InventoryOutcome::Applied(now) => {
                    announce_inventory(state, session, origin).await;
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
        if let (
            MoneyOutcome::Applied { .. },
            SdkEvent::Purchase {
                offer_id,
                price_cents,
                ..
            },
        ) = (&outcome, event)
        {
            session.change(SessionChange::Spent(*price_cents));
            if let Some(offer_id) = offer_id {
                crate::service::play::offers::learn(state, game, *offer_id, true);
            }
        }
        return Ok(Applied::Accepted {
            balance: None,
            inventory,
        });
    }
    if origin == Origin::Rest && matches!(outcome, MoneyOutcome::Applied { .. }) {
        announce_balance(state, session, &op.currency_id).await;
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

/// Most events one call may carry.
pub const MAX_BATCH: usize = 100;

/// What a batch of events did: how many were applied (a replayed `tx_id` counts, it is
/// idempotent) and which were refused, by index.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct BatchOutcome {
    /// Events applied.
    pub accepted: usize,
    /// Events refused, e.g. a spend above the balance.
    pub rejected: Vec<Rejected>,
}

/// Applies a batch of a session's events in order. The whole batch is checked first (size,
/// then every event, then the kill switch), so a malformed batch changes nothing; after
/// that each event stands alone and a refused one does not stop the rest.
pub async fn apply_batch(
    state: &Services,
    game: &GameHandle,
    env: Environment,
    session_id: Uuid,
    events: &[SdkEvent],
) -> ServiceResult<BatchOutcome> {
    if events.len() > MAX_BATCH {
        return Err(ServiceError::PayloadTooLarge(format!(
            "at most {MAX_BATCH} events per call"
        )));
    }
    let view = game.view();
    validate_all(&view.game, &view.items, events)?;
    drop(view);
    if !game.view().kill_switch.level.allows_sdk() {
        return Err(ServiceError::SdkDisabled);
    }
    let game_id = game.view().game.game_id;
    let session = crate::service::play::sessions::resolve(state, game_id, env, session_id).await?;
    let mut outcome = BatchOutcome {
        accepted: 0,
        rejected: Vec::new(),
    };
    for (index, event) in events.iter().enumerate() {
        match apply(state, game, &session, env, event, Origin::Rest).await? {
            Applied::Accepted { .. } => outcome.accepted += 1,
            Applied::Rejected(refusal) => outcome.rejected.push(Rejected {
                index,
                code: refusal.code(),
                message: refusal.message(),
            }),
        }
    }
    Ok(outcome)
}

#[cfg(test)]
mod tests {
    use offer_domain::testing;

    use super::*;

    /// A game with the fixture currencies `gems` and `gold`.
    fn game() -> Game {
        Game {
            currencies: testing::currencies(),
            ..testing::game("rpg")
        }
    }

    fn earned(currency_id: &str, amount: i64, tx_id: &str) -> SdkEvent {
        SdkEvent::CurrencyEarned {
            currency_id: currency_id.into(),
            amount,
            source: None,
            tx_id: tx_id.into(),
            ts: None,
        }
    }

    #[test]
    fn a_money_event_names_a_currency_of_the_game_and_a_positive_bounded_amount() {
        let game = game();
        assert_eq!(validate(&game, &[], &earned("gems", 5, "t1")), Ok(()));
        assert!(validate(&game, &[], &earned("silver", 5, "t1")).is_err());
        assert!(validate(&game, &[], &earned("gems", 0, "t1")).is_err());
        assert!(validate(&game, &[], &earned("gems", MAX_AMOUNT + 1, "t1")).is_err());
        assert!(validate(&game, &[], &earned("gems", 5, "")).is_err());
        // The length of a tx_id is counted in characters, as its schema says.
        assert_eq!(
            validate(&game, &[], &earned("gems", 5, &"é".repeat(128))),
            Ok(())
        );
        assert!(validate(&game, &[], &earned("gems", 5, &"é".repeat(129))).is_err());
    }

    #[test]
    fn a_purchase_names_catalogue_item_ids() {
        let purchase = |item_ids: &[&str]| SdkEvent::Purchase {
            offer_id: None,
            item_ids: item_ids.iter().map(|s| (*s).to_owned()).collect(),
            price_cents: 99,
            tx_id: "p1".into(),
            ts: None,
        };
        assert_eq!(
            validate(&game(), &[], &purchase(&["gems_100", "sword"])),
            Ok(())
        );
        assert!(validate(&game(), &[], &purchase(&["Gems 100"])).is_err());
    }

    #[test]
    fn a_client_clock_more_than_a_day_off_is_refused() {
        let game = game();
        let at = |hours: i64| SdkEvent::FirstLoss {
            ts: Some(Utc::now() + chrono::Duration::hours(hours)),
        };
        assert_eq!(validate(&game, &[], &at(23)), Ok(()));
        assert!(validate(&game, &[], &at(-25)).is_err());
        assert!(validate(&game, &[], &at(25)).is_err());
    }

    #[test]
    fn a_batch_reports_every_bad_event_with_its_index() {
        let game = game();
        let batch = [
            earned("silver", 1, "a"),
            earned("gems", 1, "b"),
            earned("gems", -1, "c"),
        ];
        let Err(ServiceError::Validation(errors)) = validate_all(&game, &[], &batch) else {
            panic!("expected a validation error");
        };
        let indexes: Vec<_> = errors.iter().map(|e| e.index).collect();
        assert_eq!(indexes, vec![Some(0), Some(2)]);
    }

    #[test]
    fn every_refusal_has_a_stable_code() {
        let insufficient = Refusal::InsufficientFunds {
            currency_id: "gems".into(),
            balance: 3,
            amount: 5,
        };
        assert_eq!(insufficient.code(), "insufficient_funds");
        assert!(insufficient.message().contains("gems"));
        assert_eq!(
            Refusal::TxIdReused { tx_id: "t".into() }.code(),
            "tx_id_reused"
        );
        assert_eq!(Refusal::SdkDisabled.code(), "sdk_disabled");
    }

    /// A gem pack, a stack of 3 potions and a sword, sorted by id as the game view keeps them.
    fn catalogue() -> Vec<Item> {
        vec![
            Item {
                quantity: Some(100),
                ..testing::item("gems_100", Category::Currency, 99, 1.0)
            },
            Item {
                quantity: Some(3),
                ..testing::item("potion", Category::Consumable, 99, 1.0)
            },
            testing::item("sword", Category::Equipment, 499, 5.0),
        ]
    }

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

    #[test]
    fn item_used_names_a_held_kind_of_catalogue_item() {
        let used = |item_id: &str, quantity: i64| SdkEvent::ItemUsed {
            item_id: item_id.into(),
            quantity,
            tx_id: "u1".into(),
            ts: None,
        };
        let (game, items) = (game(), catalogue());
        assert_eq!(validate(&game, &items, &used("potion", 1)), Ok(()));
        assert_eq!(validate(&game, &items, &used("sword", 2)), Ok(()));
        for bad in [
            used("shield", 1),
            used("gems_100", 1),
            used("potion", 0),
            used("Potion", 1),
        ] {
            assert!(validate(&game, &items, &bad).is_err(), "{bad:?}");
        }
        let refusal = Refusal::InsufficientItems {
            item_id: "potion".into(),
            held: 1,
            quantity: 2,
        };
        assert_eq!(refusal.code(), "insufficient_items");
    }
}
