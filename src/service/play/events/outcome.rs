//! What receiving events did: per event, [`Applied`] (accepted, with the balance or the
//! inventory it left, or refused with its [`Refusal`]); per REST batch, the
//! [`BatchOutcome`] the route answers.

use serde::Serialize;
use utoipa::ToSchema;

use crate::service::play::inventory::Items;

/// A refused event.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Rejected {
    /// Position in the batch.
    pub index: usize,
    /// `insufficient_funds`, `insufficient_items`, `tx_id_reused`, `sdk_disabled`,
    /// `receipt_invalid`, `receipt_already_redeemed`, `receipt_required` or
    /// `amount_out_of_bounds`.
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
    /// The purchase's receipt does not prove it: a signature, certificate chain, app,
    /// environment or purchase state the store did not sign for, or a product that is
    /// nothing of this game.
    ReceiptInvalid {
        /// The short stable reason (`signature`, `wrong_bundle`, `unknown_product`, ...).
        reason: &'static str,
        /// What was wrong, for the developer.
        detail: String,
    },
    /// The store transaction was already redeemed by another player of the game: a shared
    /// receipt grants nothing twice.
    ReceiptAlreadyRedeemed,
    /// The game verifies receipts (`enforce`) and the purchase carried none.
    ReceiptRequired,
    /// A currency event above the currency's `max_per_event`.
    AmountOutOfBounds {
        /// The currency.
        currency_id: String,
        /// The refused amount.
        amount: i64,
        /// The currency's bound.
        max: i64,
    },
}

impl Refusal {
    /// The stable code clients branch on.
    pub fn code(&self) -> &'static str {
        match self {
            Self::InsufficientFunds { .. } => "insufficient_funds",
            Self::InsufficientItems { .. } => "insufficient_items",
            Self::TxIdReused { .. } => "tx_id_reused",
            Self::SdkDisabled => "sdk_disabled",
            Self::ReceiptInvalid { .. } => "receipt_invalid",
            Self::ReceiptAlreadyRedeemed => "receipt_already_redeemed",
            Self::ReceiptRequired => "receipt_required",
            Self::AmountOutOfBounds { .. } => "amount_out_of_bounds",
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
            Self::ReceiptInvalid { reason, detail } => {
                format!("the receipt does not prove the purchase ({reason}): {detail}")
            }
            Self::ReceiptAlreadyRedeemed => {
                "the receipt's store transaction was already redeemed by another player".into()
            }
            Self::ReceiptRequired => {
                "this game grants purchases only with a store receipt, and none was sent".into()
            }
            Self::AmountOutOfBounds {
                currency_id,
                amount,
                max,
            } => format!("{amount} {currency_id} is above the currency's max_per_event of {max}"),
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

impl Applied {
    /// Accepted, changing no wallet and no inventory.
    pub(super) const NOTHING: Self = Self::Accepted {
        balance: None,
        inventory: None,
    };
}

/// What a batch of events did: how many were applied (a replayed `tx_id` counts, it is
/// idempotent) and which were refused, by index.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct BatchOutcome {
    /// Events applied.
    pub accepted: usize,
    /// Events refused, e.g. a spend above the balance.
    pub rejected: Vec<Rejected>,
}

impl From<Vec<Applied>> for BatchOutcome {
    /// Counts the accepted events and lists the refused ones by their index in the batch.
    fn from(applied: Vec<Applied>) -> Self {
        let mut outcome = Self {
            accepted: 0,
            rejected: Vec::new(),
        };
        for (index, applied) in applied.into_iter().enumerate() {
            match applied {
                Applied::Accepted { .. } => outcome.accepted += 1,
                Applied::Rejected(refusal) => outcome.rejected.push(Rejected {
                    index,
                    code: refusal.code(),
                    message: refusal.message(),
                }),
            }
        }
        outcome
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let refusal = Refusal::InsufficientItems {
            item_id: "potion".into(),
            held: 1,
            quantity: 2,
        };
        assert_eq!(refusal.code(), "insufficient_items");
    }

    #[test]
    fn a_batch_counts_the_accepted_and_lists_the_refused_by_index() {
        let outcome = BatchOutcome::from(vec![
            Applied::NOTHING,
            Applied::Rejected(Refusal::SdkDisabled),
            Applied::NOTHING,
        ]);
        assert_eq!(outcome.accepted, 2);
        let indexes: Vec<_> = outcome.rejected.iter().map(|r| (r.index, r.code)).collect();
        assert_eq!(indexes, vec![(1, "sdk_disabled")]);
    }
}
