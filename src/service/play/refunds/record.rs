//! The refund record of one store transaction, and how a store's notification moves it: pure
//! decisions, no I/O ([`super::settle`] reads and writes the record).
//!
//! What a purchase granted is a list of grant lines, each an item id or a currency pack's
//! currency as `currency:<currency_id>` (item ids are snake_case, so the two never meet),
//! with the units granted; what the player holds of each is its inventory's count or its
//! wallet's balance. Items and currency are taken back and restored alike.
//!
//! The record says how much of the purchase stands refunded now (units, cents, the items
//! taken back and those the player had already used), which notifications it has seen, which
//! wait for their purchase, and the one step decided but not yet confirmed carried out. A
//! refund takes back what is left of the purchase, or one unit's share of it; a second refund
//! of a purchase already wholly refunded decides nothing. A reversal restores what the
//! refunds took (their revenue and the items taken back), nothing of what was never taken.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::service::play::receipts::redemptions::Claim;

/// Marks a currency among the grant lines: `currency:<currency_id>`.
const CURRENCY: &str = "currency:";

/// The grant line of `currency_id`'s units.
pub fn currency_line(currency_id: &str) -> String {
    format!("{CURRENCY}{currency_id}")
}

/// The currency of a grant line, `None` for an item's.
pub fn currency_of(line: &str) -> Option<&str> {
    line.strip_prefix(CURRENCY)
}

/// The notifications one record remembers, most recent last: enough for every retry of the
/// few notifications a purchase ever gets.
const MAX_NOTICES: usize = 64;

/// What a store's notification asks of a purchase.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// Take back what is left of the purchase (App Store `REFUND` and `REVOKE`, a Google
    /// Play voided purchase refunded whole).
    Refund,
    /// Take back one unit's share of a purchase of several units (a Google Play
    /// quantity-based partial refund); the whole of a purchase of one unit.
    RefundUnit,
    /// Restore what the refunds took (App Store `REFUND_REVERSED`).
    Reverse,
}

/// A notification kept until its purchase arrives.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Waiting {
    /// The store's id of the notification.
    pub notice: String,
    /// What it asks.
    pub action: Action,
}

/// The kind of a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepKind {
    /// Revenue and items taken back.
    Refund,
    /// Revenue and items restored.
    Reversal,
}

/// One change to carry out on the player's wallet record and inventory, numbered so that
/// each step has its own idempotency keys.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Step {
    /// Its number among the transaction's steps, from 1.
    pub number: u32,
    /// Refund or reversal.
    pub kind: StepKind,
    /// The revenue it takes back or restores, in cents.
    pub cents: i64,
    /// The grant lines and units it takes back (refund) or gives back (reversal): items of
    /// the inventory, and currencies of the wallets as [`currency_line`]s.
    pub items: Vec<(String, i64)>,
    /// When the purchase was made, as its claim says, so that carrying the step out in a
    /// later month records an adjustment line; `None` when the claim does not say (written
    /// before it was kept) or the step was decided before it was kept.
    #[serde(default)]
    pub bought_at: Option<DateTime<Utc>>,
}

/// What the purchase bought, from its claim.
#[derive(Debug, Clone, Copy)]
pub struct Bought<'a> {
    /// Its revenue in cents.
    pub amount: i64,
    /// Its grant lines (items and currencies) and their units ([`grant_lines`]).
    pub grant: &'a [(String, i64)],
    /// The units bought, at least 1.
    pub quantity: u32,
    /// When it was made, if its claim says.
    pub at: Option<DateTime<Utc>>,
}

impl<'a> Bought<'a> {
    /// The purchase of `claim`, whose grant lines are `grant` ([`grant_lines`] of it).
    pub fn of(claim: &Claim, grant: &'a [(String, i64)]) -> Self {
        Self {
            amount: claim.amount,
            grant,
            quantity: claim.quantity.max(1),
            at: claim.purchased_at,
        }
    }
}

/// The grant lines of `claim`: its items, then its currencies as [`currency_line`]s.
pub fn grant_lines(claim: &Claim) -> Vec<(String, i64)> {
    claim
        .grant
        .iter()
        .cloned()
        .chain(
            claim
                .currency
                .iter()
                .map(|(currency_id, units)| (currency_line(currency_id), *units)),
        )
        .collect()
}

/// The refund record of one store transaction.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RefundRecord {
    /// The purchase's player, once its claim was found.
    #[serde(default)]
    pub player_id: Option<String>,
    /// The notifications applied, most recent last (at most [`MAX_NOTICES`]).
    #[serde(default)]
    pub notices: Vec<String>,
    /// The notifications waiting for the purchase, in arrival order.
    #[serde(default)]
    pub waiting: Vec<Waiting>,
    /// Steps decided so far.
    #[serde(default)]
    pub steps: u32,
    /// Units of the purchase refunded now.
    #[serde(default)]
    pub units: u32,
    /// Cents refunded now.
    #[serde(default)]
    pub cents: i64,
    /// Items taken back by the refunds standing now.
    #[serde(default)]
    pub taken: BTreeMap<String, i64>,
    /// Items the refunds standing now could not take back: the player had used them.
    #[serde(default)]
    pub unrecovered: BTreeMap<String, i64>,
    /// The step decided and written here, not yet confirmed carried out.
    #[serde(default)]
    pub pending: Option<Step>,
}

impl RefundRecord {
    /// Whether the notification `notice` was applied already.
    pub fn applied(&self, notice: &str) -> bool {
        self.notices.iter().any(|n| n == notice)
    }

    /// Whether the notification `notice` waits for the purchase.
    pub fn waits(&self, notice: &str) -> bool {
        self.waiting.iter().any(|w| w.notice == notice)
    }

    /// Keeps `notice` until the purchase arrives; `false` when it waits already.
    pub fn wait(&mut self, notice: &str, action: Action) -> bool {
        if self.waits(notice) {
            return false;
        }
        self.waiting.push(Waiting {
            notice: notice.to_owned(),
            action,
        });
        true
    }

    /// Applies the notification `notice` asking `action` of the purchase `bought` of
    /// `player_id`, whose inventory holds `held` now: records the notice, and returns the
    /// step it calls for (also kept as [`RefundRecord::pending`]), or `None` when it changes
    /// nothing (a refund of what is already refunded, a reversal of nothing).
    pub fn advance(
        &mut self,
        (notice, action): (&str, Action),
        (player_id, bought): (&str, Bought<'_>),
        held: &BTreeMap<String, i64>,
    ) -> Option<Step> {
        self.player_id = Some(player_id.to_owned());
        self.waiting.retain(|w| w.notice != notice);
        self.notices.push(notice.to_owned());
        if self.notices.len() > MAX_NOTICES {
            self.notices.remove(0);
        }
        let step = match action {
            Action::Refund => self.refund(bought, held, false),
            Action::RefundUnit => self.refund(bought, held, true),
            Action::Reverse => self.reverse(),
        }?;
        self.steps = self.steps.saturating_add(1);
        let step = Step {
            number: self.steps,
            bought_at: bought.at,
            ..step
        };
        self.pending = Some(step.clone());
        Some(step)
    }

    /// A refund of what is left of `bought` (of one unit when `one_unit` and more than one
    /// was bought): its revenue share and its items' share, taken back as far as the player
    /// still holds them.
    fn refund(
        &mut self,
        bought: Bought<'_>,
        held: &BTreeMap<String, i64>,
        one_unit: bool,
    ) -> Option<Step> {
        let left = bought.quantity.saturating_sub(self.units);
        let units = if one_unit && bought.quantity > 1 {
            left.min(1)
        } else {
            left
        };
        if units == 0 {
            return None;
        }
        // The last units take exactly what is left, so that shares rounded down add up.
        let whole = self.units + units == bought.quantity;
        let share =
            |total: i64| total.saturating_mul(i64::from(units)) / i64::from(bought.quantity);
        let cents = if whole {
            bought.amount.saturating_sub(self.cents)
        } else {
            share(bought.amount)
        };
        let mut items = Vec::new();
        for (item_id, granted) in merged(bought.grant) {
            let want = if whole {
                let gone = self.taken.get(&item_id).copied().unwrap_or(0)
                    + self.unrecovered.get(&item_id).copied().unwrap_or(0);
                granted.saturating_sub(gone)
            } else {
                share(granted)
            }
            .max(0);
            let take = want.min(held.get(&item_id).copied().unwrap_or(0).max(0));
            if take > 0 {
                *self.taken.entry(item_id.clone()).or_insert(0) += take;
                items.push((item_id.clone(), take));
            }
            if want > take {
                *self.unrecovered.entry(item_id).or_insert(0) += want - take;
            }
        }
        self.units += units;
        self.cents = self.cents.saturating_add(cents);
        Some(Step {
            number: 0,
            kind: StepKind::Refund,
            cents,
            items,
            bought_at: None,
        })
    }

    /// A reversal of the refunds standing now: their revenue and the items they took.
    fn reverse(&mut self) -> Option<Step> {
        if self.units == 0 {
            return None;
        }
        let step = Step {
            number: 0,
            kind: StepKind::Reversal,
            cents: self.cents,
            items: std::mem::take(&mut self.taken).into_iter().collect(),
            bought_at: None,
        };
        self.units = 0;
        self.cents = 0;
        self.unrecovered.clear();
        Some(step)
    }
}

/// The grant with each item once, its units summed (a purchase may name an item twice).
fn merged(grant: &[(String, i64)]) -> BTreeMap<String, i64> {
    let mut items = BTreeMap::new();
    for (item_id, units) in grant {
        let total = items.entry(item_id.clone()).or_insert(0i64);
        *total = total.saturating_add(*units);
    }
    items
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grant() -> Vec<(String, i64)> {
        vec![("potion".into(), 9), ("sword".into(), 3)]
    }

    fn bought(grant: &[(String, i64)]) -> Bought<'_> {
        Bought {
            amount: 300,
            grant,
            quantity: 3,
            at: None,
        }
    }

    fn held(pairs: &[(&str, i64)]) -> BTreeMap<String, i64> {
        pairs.iter().map(|(i, n)| ((*i).to_owned(), *n)).collect()
    }

    #[test]
    fn a_refund_takes_back_what_is_held_and_records_the_rest() {
        let g = grant();
        let mut record = RefundRecord::default();
        let step = record
            .advance(
                ("n1", Action::Refund),
                ("p", bought(&g)),
                &held(&[("potion", 4)]),
            )
            .expect("a step");
        assert_eq!(step.number, 1);
        assert_eq!(step.cents, 300);
        assert_eq!(step.items, vec![("potion".to_owned(), 4)]);
        assert_eq!(record.unrecovered, held(&[("potion", 5), ("sword", 3)]));
        // Again, by another notice: nothing left to refund.
        assert_eq!(
            record.advance(("n2", Action::Refund), ("p", bought(&g)), &held(&[])),
            None
        );
        assert!(record.applied("n1") && record.applied("n2"));
    }

    #[test]
    fn unit_refunds_take_a_share_and_the_last_takes_the_rest() {
        let g = grant();
        let all = held(&[("potion", 9), ("sword", 3)]);
        let mut record = RefundRecord::default();
        let first = record
            .advance(("n1", Action::RefundUnit), ("p", bought(&g)), &all)
            .expect("a step");
        assert_eq!(first.cents, 100);
        assert_eq!(
            first.items,
            vec![("potion".to_owned(), 3), ("sword".to_owned(), 1)]
        );
        let rest = record
            .advance(("n2", Action::Refund), ("p", bought(&g)), &all)
            .expect("a step");
        assert_eq!(rest.cents, 200);
        assert_eq!(
            rest.items,
            vec![("potion".to_owned(), 6), ("sword".to_owned(), 2)]
        );
        assert_eq!(record.units, 3);
    }

    #[test]
    fn a_unit_refund_of_a_single_unit_is_the_whole_purchase() {
        let g = vec![("sword".to_owned(), 1)];
        let bought_at = DateTime::from_timestamp(1_780_000_000, 0);
        let single = Bought {
            amount: 499,
            grant: &g,
            quantity: 1,
            at: bought_at,
        };
        let mut record = RefundRecord::default();
        let step = record
            .advance(
                ("n1", Action::RefundUnit),
                ("p", single),
                &held(&[("sword", 1)]),
            )
            .expect("a step");
        assert_eq!((step.cents, step.items.len()), (499, 1));
        // The step keeps the purchase's time, for an adjustment line when carried out later.
        assert_eq!(step.bought_at, bought_at);
    }

    #[test]
    fn a_reversal_restores_what_was_taken_only() {
        let g = grant();
        let mut record = RefundRecord::default();
        record.advance(
            ("n1", Action::Refund),
            ("p", bought(&g)),
            &held(&[("sword", 3)]),
        );
        let step = record
            .advance(("n2", Action::Reverse), ("p", bought(&g)), &held(&[]))
            .expect("a step");
        assert_eq!(step.kind, StepKind::Reversal);
        assert_eq!((step.number, step.cents), (2, 300));
        assert_eq!(step.items, vec![("sword".to_owned(), 3)]);
        assert_eq!(record.units, 0);
        assert!(record.unrecovered.is_empty());
        // Nothing stands refunded: a second reversal does nothing.
        assert_eq!(
            record.advance(("n3", Action::Reverse), ("p", bought(&g)), &held(&[])),
            None
        );
    }
}
