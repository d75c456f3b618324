//! Whether an event may be applied: its fields, its time, and the catalogue items it names.
//! A batch is checked whole before any of its events is applied.

use chrono::Utc;
use offer_domain::catalogue::Item;
use offer_domain::category::Category;
use offer_domain::game::Game;
use offer_domain::validation::{FieldError, MAX_ID_LEN, is_snake_case};
use offer_wire::event::{MAX_RECEIPT_BYTES, SdkEvent};

use crate::service::{ServiceError, ServiceResult};

/// Largest amount of one money event.
const MAX_AMOUNT: i64 = 1_000_000_000;

/// How far an SDK event's `ts` may be from the server's clock. Money events land in the
/// day aggregates by `ts`, so a client must not write into another week; history goes
/// through the admin import.
const MAX_CLOCK_SKEW_HOURS: i64 = 24;

/// Checks every event of a batch before any is applied, so a bad batch changes nothing.
pub(super) fn validate_all(game: &Game, items: &[Item], events: &[SdkEvent]) -> ServiceResult<()> {
    let mut errors = Vec::new();
    for (i, e) in events.iter().enumerate() {
        if let Err(reason) = validate(game, items, e) {
            errors.push(FieldError::new("events", reason).at(i));
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(ServiceError::Validation(errors))
    }
}

/// Checks one event against the game and its catalogue (every item, sorted by `item_id`).
fn validate(game: &Game, items: &[Item], e: &SdkEvent) -> Result<(), String> {
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
pub(super) fn find_item<'a>(items: &'a [Item], item_id: &str) -> Option<&'a Item> {
    items
        .binary_search_by(|i| i.item_id.as_str().cmp(item_id))
        .ok()
        .and_then(|at| items.get(at))
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
            receipt,
            ..
        } => {
            tx(tx_id)?;
            if let Some(receipt) = receipt {
                if receipt.len() > MAX_RECEIPT_BYTES {
                    return Err(format!(
                        "receipt: at most {MAX_RECEIPT_BYTES} bytes (16 KiB)"
                    ));
                }
                if receipt.is_empty() {
                    return Err("receipt: empty".into());
                }
            }
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

#[cfg(test)]
mod tests {
    use super::super::fixtures::catalogue;
    use offer_domain::testing;
    use offer_wire::event::Receipt;

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
            receipt: None,
        };
        assert_eq!(
            validate(&game(), &[], &purchase(&["gems_100", "sword"])),
            Ok(())
        );
        assert!(validate(&game(), &[], &purchase(&["Gems 100"])).is_err());
    }

    #[test]
    fn a_receipt_is_bounded_and_not_empty() {
        let with = |receipt: Receipt| SdkEvent::Purchase {
            offer_id: None,
            item_ids: Vec::new(),
            price_cents: 99,
            tx_id: "p1".into(),
            ts: None,
            receipt: Some(receipt),
        };
        let jws = |len: usize| Receipt::AppStore {
            signed_transaction: "a".repeat(len),
        };
        assert_eq!(
            validate(&game(), &[], &with(jws(MAX_RECEIPT_BYTES))),
            Ok(())
        );
        assert!(validate(&game(), &[], &with(jws(MAX_RECEIPT_BYTES + 1))).is_err());
        assert!(validate(&game(), &[], &with(jws(0))).is_err());
        let google = Receipt::GooglePlay {
            purchase_data: "a".repeat(MAX_RECEIPT_BYTES),
            signature: "b".into(),
        };
        assert!(validate(&game(), &[], &with(google)).is_err());
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
    }
}
