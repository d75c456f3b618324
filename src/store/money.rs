//! Money: the atomic wallet step (balances, lifetime spends, the ledger and the day
//! aggregates written together) and the reads of what it keeps.

use std::collections::BTreeMap;

use async_trait::async_trait;
use chrono::{DateTime, NaiveDate, Utc};
use offer_domain::environment::Environment;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::StoreResult;

/// The kind of a wallet change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MoneyKind {
    /// Currency enters the wallet (faucet).
    Earned,
    /// Currency leaves the wallet (sink); refused above the balance.
    Spent,
    /// Real-money revenue in cents; no wallet balance changes.
    Purchase,
    /// Real-money revenue a store gave back, in cents (`amount` is what was refunded, as a
    /// positive number); no wallet balance changes. It moves every record a purchase moves
    /// (lifetime spend, the payer's day, the day's revenue by group) by `-amount`, on the
    /// day of its `ts`: a refund arriving after its purchase's month closed is an adjustment
    /// of the month it arrives in.
    Refund,
}

impl MoneyKind {
    /// The name of the SDK event that records this kind, as the API and every export call it
    /// (`currency_earned`, `currency_spent`, `purchase`, `refund`). The store keeps its own
    /// shorter names (serde's), which stored data depends on.
    pub fn event_name(self) -> &'static str {
        match self {
            Self::Earned => "currency_earned",
            Self::Spent => "currency_spent",
            Self::Purchase => "purchase",
            Self::Refund => "refund",
        }
    }

    /// Whether the kind moves real-money revenue (a purchase, or a refund taking it back)
    /// rather than a wallet balance.
    pub fn is_revenue(self) -> bool {
        matches!(self, Self::Purchase | Self::Refund)
    }
}

/// How a purchase's payment was proven, when the game checks store receipts. A purchase of
/// a game that does not (verification `off`) has no proof and counts as the client reported
/// it, as every purchase did before receipts were checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Proof {
    /// A store signed for it: its revenue counts in every figure.
    Verified,
    /// Kept without a valid receipt (verification `report`): its items are granted, its
    /// revenue is kept apart and counts in no figure the bill is computed on.
    Unverified,
    /// A store's sandbox transaction accepted on a live key (App Review buys in the
    /// sandbox): its items are granted, it was never paid, so it is no revenue.
    Sandbox,
}

impl Proof {
    /// The stored code of a purchase's proof (0 when it has none).
    pub fn code(proof: Option<Proof>) -> u8 {
        match proof {
            None => 0,
            Some(Proof::Verified) => 1,
            Some(Proof::Unverified) => 2,
            Some(Proof::Sandbox) => 3,
        }
    }

    /// A stored code read back; `None` for 0 or a code this build does not know.
    pub fn from_code(code: i64) -> Option<Proof> {
        match code {
            1 => Some(Proof::Verified),
            2 => Some(Proof::Unverified),
            3 => Some(Proof::Sandbox),
            _ => None,
        }
    }
}

/// One money event to apply atomically.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MoneyOp {
    /// Game the wallet belongs to.
    pub game_id: Uuid,
    /// Production or sandbox.
    pub env: Environment,
    /// External player id.
    pub player_id: String,
    /// Idempotency key: the same `tx_id` twice counts once.
    pub tx_id: String,
    /// What happens.
    pub kind: MoneyKind,
    /// The currency (empty for purchases and refunds).
    pub currency_id: String,
    /// Units earned or spent, cents paid for a purchase or given back by a refund; always
    /// positive.
    pub amount: i64,
    /// When it happened; picks the per-day aggregate bucket.
    pub ts: DateTime<Utc>,
    /// Whether the holdout group made it (for ARPU by group).
    pub holdout: bool,
    /// Imported history: no balance check (history has no opening balance).
    pub import: bool,
    /// The player's install cohort (`YYYY-Www`, its install day's ISO week), when known:
    /// earned and spent units also count in that cohort's day aggregate, so FSR can be cut
    /// by cohort without reading the ledger.
    pub cohort: Option<String>,
    /// How a purchase was proven (`None`: not checked, or not a purchase).
    pub proof: Option<Proof>,
    /// For `Earned` and `Spent`: the most units of this kind and currency the player's UTC
    /// day (of `ts`) may count in the economy's figures. The wallet step keeps each
    /// player's day total of every kind and currency whatever the cap; the part of an
    /// event above the cap still moves the balance and is kept in the ledger, but is left
    /// out of the day aggregate (kept apart as [`DayAggregate::left_out_earned`] and
    /// [`DayAggregate::left_out_spent`]). `None`: no cap.
    #[serde(default)]
    pub day_cap: Option<i64>,
}

impl MoneyOp {
    /// What the event adds to the revenue records: `amount`, or `-amount` for a refund.
    pub fn revenue_delta(&self) -> i64 {
        match self.kind {
            MoneyKind::Refund => self.amount.saturating_neg(),
            _ => self.amount,
        }
    }

    /// Whether the event's revenue counts in the revenue the holdout comparison and the bill
    /// read (the lifetime spends, the payers' days, the day's revenue by group): a purchase
    /// or refund with no proof or a verified one. An unverified or sandbox purchase keeps its revenue
    /// apart, in [`DayAggregate::revenue_unverified_cents`].
    pub fn revenue_counts(&self) -> bool {
        matches!(self.proof, None | Some(Proof::Verified))
    }

    /// What a replay of this `tx_id` must match: the same player, kind, currency and
    /// amount. A different change under a used `tx_id` is a conflict, not a duplicate.
    pub fn fingerprint(&self) -> String {
        fingerprint(&self.player_id, self.kind, &self.currency_id, self.amount)
    }
}

/// The fingerprint of a change: `<player>|<Kind>|<currency>|<amount>`, the kind as its Rust
/// name (`Earned`, `Spent`, `Purchase`, `Refund`). Stored idempotency records hold it, so its
/// text never changes. Joined rather than formatted: a money event builds one, and the
/// formatter's machinery cost more than the pieces.
pub fn fingerprint(player_id: &str, kind: MoneyKind, currency_id: &str, amount: i64) -> String {
    let kind = match kind {
        MoneyKind::Earned => "Earned",
        MoneyKind::Spent => "Spent",
        MoneyKind::Purchase => "Purchase",
        MoneyKind::Refund => "Refund",
    };
    [player_id, kind, currency_id, &amount.to_string()].join("|")
}

/// The answer to a [`MoneyOp`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum MoneyOutcome {
    /// Applied now; the wallet's new balance of that currency.
    Applied {
        /// Balance after the change.
        balance: i64,
        /// Units of the event above the player's day cap ([`MoneyOp::day_cap`]): applied to
        /// the wallet, left out of the economy's figures. 0 when all of it counts.
        left_out: i64,
    },
    /// This `tx_id` was applied before; nothing changed. The stored first result.
    Duplicate {
        /// Balance recorded when it was first applied.
        balance: i64,
    },
    /// A spend above the balance; nothing changed.
    InsufficientFunds {
        /// Current balance.
        balance: i64,
    },
    /// The game's kill switch is at level 3 (SDK off); nothing changed. Never the answer to
    /// a refund: the stores' refunds are applied whatever the game's kill switch.
    KillSwitch,
    /// The player already used this `tx_id` for a different change (another kind, currency
    /// or amount); nothing changed, and the first change is not revealed.
    TxConflict,
}

/// One ledger line (append-only; the basis of FSR).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LedgerEntry {
    /// Idempotency key of the change.
    pub tx_id: String,
    /// External player id.
    pub player_id: String,
    /// What happened.
    pub kind: MoneyKind,
    /// Currency (empty for purchases).
    pub currency_id: String,
    /// Positive amount.
    pub amount: i64,
    /// Balance of that currency after the change (0 for purchases).
    pub balance_after: i64,
    /// Event time.
    pub ts: DateTime<Utc>,
    /// How a purchase was proven, when its game checks receipts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proof: Option<Proof>,
}

/// Per game, environment and UTC day: units earned and spent by currency, revenue by group.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DayAggregate {
    /// Units earned per currency.
    pub earned: BTreeMap<String, i64>,
    /// Units spent per currency.
    pub spent: BTreeMap<String, i64>,
    /// Real-money revenue in cents from treated players.
    pub revenue_treatment_cents: i64,
    /// Real-money revenue in cents from holdout players.
    pub revenue_control_cents: i64,
    /// Purchases in cents kept without a store's proof (unverified, or a sandbox transaction
    /// on a live key), from either group: shown beside the revenue, never added to it.
    #[serde(default)]
    pub revenue_unverified_cents: i64,
    /// Purchases in cents the stores took back by refunds that day (already subtracted from
    /// the day's revenue by group): shown beside the revenue so that a studio sees what the
    /// stores returned, not only the net.
    #[serde(default)]
    pub refunded_cents: i64,
    /// Earned and spent units of each install cohort (`YYYY-Www`) that moved currency.
    pub cohorts: BTreeMap<String, CohortFlows>,
    /// Units earned per currency above the players' day caps: applied to wallets, not in
    /// `earned`.
    #[serde(default)]
    pub left_out_earned: BTreeMap<String, i64>,
    /// Units spent per currency above the players' day caps: applied to wallets, not in
    /// `spent`.
    #[serde(default)]
    pub left_out_spent: BTreeMap<String, i64>,
    /// Per currency, how many players had earned units left out that day.
    #[serde(default)]
    pub capped_earned: BTreeMap<String, i64>,
    /// Per currency, how many players had spent units left out that day.
    #[serde(default)]
    pub capped_spent: BTreeMap<String, i64>,
}

/// Days a player's day totals ([`PlayerDayTotal`], [`LeftOutDay`]) are kept: the seven days
/// the derived caps read and the thirty the player record's flags reach back, and some more.
/// The stores forget older ones (Redis lets the day's hash expire, SQLite's sweep deletes
/// them).
pub const PLAYER_DAYS_KEPT: i64 = 40;

/// One player's units of one kind and currency on one day, every unit reported (counted
/// or left out): what a game's derived day caps are computed from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlayerDayTotal {
    /// `Earned` or `Spent`.
    pub kind: MoneyKind,
    /// The currency.
    pub currency_id: String,
    /// Units reported that day.
    pub total: i64,
}

/// Units of one player's day left out of the economy's figures, for one kind and currency.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LeftOutDay {
    /// The UTC day.
    pub day: NaiveDate,
    /// `Earned` or `Spent`.
    pub kind: MoneyKind,
    /// The currency.
    pub currency_id: String,
    /// Units left out.
    pub left_out: i64,
}

/// Units earned and spent by the players of one install cohort on one day.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CohortFlows {
    /// Units earned per currency.
    pub earned: BTreeMap<String, i64>,
    /// Units spent per currency.
    pub spent: BTreeMap<String, i64>,
}

/// Separates a cohort from a currency in a stored day-aggregate field: `gold@2026-W40`.
/// Currency ids are snake_case, so a field with it is never a game-wide total.
pub const COHORT_SEPARATOR: char = '@';

/// Wallets and the ledger: what a document store cannot express, one money event applied
/// with every check before its first write.
#[async_trait]
pub trait Money: Send + Sync {
    /// Stores a game's kill-switch level where the wallet step reads it.
    async fn set_kill_level(&self, game_id: Uuid, level: u8) -> StoreResult<()>;

    /// Applies one money event atomically: idempotency, balance and kill-switch checks
    /// before the first write, then balance (or lifetime spend, for a purchase), ledger
    /// entry and day aggregate together.
    async fn apply_money(&self, op: &MoneyOp) -> StoreResult<MoneyOutcome>;

    /// A player's lifetime real-money spend in cents (the sum of its applied purchases,
    /// kept by the same atomic step).
    async fn spend_cents(
        &self,
        game_id: Uuid,
        env: Environment,
        player_id: &str,
    ) -> StoreResult<i64>;

    /// Every player of one game and environment with a lifetime real-money spend, and that
    /// spend in cents (players who never paid are absent): the revenue side of the holdout
    /// comparison, one read for the whole game.
    async fn spends(&self, game_id: Uuid, env: Environment) -> StoreResult<Vec<(String, i64)>>;

    /// A player's balance of one currency (0 when never touched).
    async fn balance(
        &self,
        game_id: Uuid,
        env: Environment,
        player_id: &str,
        currency_id: &str,
    ) -> StoreResult<i64>;

    /// The ledger of one game and environment in append order.
    async fn ledger(&self, game_id: Uuid, env: Environment) -> StoreResult<Vec<LedgerEntry>>;

    /// Each payer's real-money spend in cents on each of the given UTC days (the day of the
    /// purchase's `ts`, as in the day aggregates), one list per day in the order asked, payers
    /// in no particular order. What lets the holdout comparison leave days out and a month be
    /// billed on its own days.
    async fn day_revenues(
        &self,
        game_id: Uuid,
        env: Environment,
        days: &[NaiveDate],
    ) -> StoreResult<Vec<Vec<(String, i64)>>>;

    /// Day aggregates for the given UTC days (missing days are empty).
    async fn day_aggregates(
        &self,
        game_id: Uuid,
        env: Environment,
        days: &[NaiveDate],
    ) -> StoreResult<Vec<DayAggregate>>;

    /// Every player's day total of each kind and currency that moved on the given days (one
    /// entry per player, day, kind and currency, in no particular order): what the derived
    /// day caps are computed from, a few times an hour per node, never per event.
    async fn player_day_totals(
        &self,
        game_id: Uuid,
        env: Environment,
        days: &[NaiveDate],
    ) -> StoreResult<Vec<PlayerDayTotal>>;

    /// What the day caps left out of one player's days among `days`, for the given
    /// currencies (days, kinds and currencies with nothing left out are absent), oldest day
    /// first.
    async fn player_left_out(
        &self,
        game_id: Uuid,
        env: Environment,
        player_id: &str,
        currencies: &[String],
        days: &[NaiveDate],
    ) -> StoreResult<Vec<LeftOutDay>>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fingerprint_keeps_the_text_stored_records_hold() {
        for kind in [
            MoneyKind::Earned,
            MoneyKind::Spent,
            MoneyKind::Purchase,
            MoneyKind::Refund,
        ] {
            for (player, currency, amount) in [("p1", "gems", 5), ("a|b", "", -120), ("", "c", 0)] {
                assert_eq!(
                    fingerprint(player, kind, currency, amount),
                    format!("{player}|{kind:?}|{currency}|{amount}")
                );
            }
        }
    }
}
