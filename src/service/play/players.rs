//! A player's record, for support staff and the dashboard: its group, install day,
//! balances, inventory, lifetime spend, most recent ledger entries and the days its
//! currency events were capped.
//!
//! The group is the holdout hash's answer, whether or not the player ever had a session.
//! The ledger entries are found by reading the environment's ledger and keeping the
//! player's lines, so this costs O(ledger): a support view, not a hot path.

use chrono::{DateTime, NaiveDate, Utc};
use offer_actors::GameHandle;
use offer_domain::environment::Environment;
use offer_domain::holdout::is_holdout;
use offer_domain::schema::SnakeCaseId;
use serde::Serialize;
use std::collections::BTreeMap;
use utoipa::ToSchema;

use crate::service::play::inventory;
use crate::service::{ServiceError, ServiceResult, Services, economy::population};
use crate::store::{LedgerEntry, MoneyKind, Proof};
use offer_wire::socket::InventoryItem;

/// Most ledger entries one page holds.
pub const MAX_PAGE: usize = 100;

/// The player's group.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum PlayerGroup {
    /// The permanent holdout: never served AI offers.
    Holdout,
    /// Everyone else.
    Treatment,
}

impl PlayerGroup {
    /// The group the holdout hash puts `player_id` of `game_id` in.
    pub fn of(player_id: &str, game_id: uuid::Uuid) -> Self {
        if is_holdout(player_id, game_id) {
            Self::Holdout
        } else {
            Self::Treatment
        }
    }
}

/// One ledger entry of the player, newest first.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct PlayerLedgerLine {
    /// Idempotency key of the change.
    pub tx_id: String,
    /// `currency_earned`, `currency_spent`, `purchase` or `refund` (a store's refund of a
    /// purchase, in cents).
    pub kind: &'static str,
    /// The currency (`null` for purchases).
    #[schema(value_type = Option<SnakeCaseId>)]
    pub currency_id: Option<String>,
    /// Amount in units (in cents for purchases).
    pub amount: i64,
    /// The currency's balance after the change (0 for purchases).
    pub balance_after: i64,
    /// Event time.
    pub ts: DateTime<Utc>,
    /// For a purchase of a game that checks receipts: `verified` (a store signed for it),
    /// `unverified` (kept without a valid receipt, counted in no billing figure) or `sandbox`
    /// (a sandbox transaction accepted on a live key, never revenue). Absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>, example = "verified")]
    pub proof: Option<Proof>,
}

impl From<LedgerEntry> for PlayerLedgerLine {
    fn from(l: LedgerEntry) -> Self {
        Self {
            tx_id: l.tx_id,
            kind: l.kind.event_name(),
            currency_id: (!l.currency_id.is_empty()).then_some(l.currency_id),
            amount: l.amount,
            balance_after: l.balance_after,
            ts: l.ts,
            proof: l.proof,
        }
    }
}

/// A player's record.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct PlayerRecord {
    /// The player.
    pub player_id: String,
    /// Holdout or treatment.
    pub group: PlayerGroup,
    /// The UTC day it first played (`null`: it never played in this environment).
    #[schema(value_type = Option<String>, format = Date)]
    pub install_day: Option<NaiveDate>,
    /// The UTC day it last played.
    #[schema(value_type = Option<String>, format = Date)]
    pub last_seen: Option<NaiveDate>,
    /// Balance of each of the game's currencies.
    pub balances: BTreeMap<String, i64>,
    /// Lifetime real-money spend in cents.
    pub lifetime_spend_cents: i64,
    /// The items the player holds, by `item_id` (an item used up is absent).
    pub inventory: Vec<InventoryItem>,
    /// The page of ledger entries, newest first.
    pub ledger: Vec<PlayerLedgerLine>,
    /// The player's ledger entries in all.
    pub ledger_total: usize,
    /// The player's purchases by how they were proven, side by side, over the ledger lines
    /// kept (raw lines older than the ledger's retention are gone).
    pub purchases: PurchaseTotals,
    /// The days of the last [`CAPPED_DAYS`] on which the player's day cap left units of a
    /// currency out of the economy's figures (applied to the wallet all the same), oldest
    /// first; empty when none.
    pub capped_days: Vec<CappedDay>,
}

/// Days back (today included) the record looks for capped days.
pub const CAPPED_DAYS: u64 = 30;

/// A day on which the player's day cap of a currency left units out of the figures.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct CappedDay {
    /// The UTC day.
    #[schema(value_type = String, format = Date)]
    pub date: NaiveDate,
    /// `currency_earned` or `currency_spent`.
    pub kind: &'static str,
    /// The currency.
    #[schema(value_type = SnakeCaseId)]
    pub currency_id: String,
    /// Units left out of the figures that day.
    pub left_out: i64,
}

/// A player's purchases in cents, by proof.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, ToSchema)]
pub struct PurchaseTotals {
    /// Taken as the game reported them (receipts not checked).
    pub reported_cents: i64,
    /// Signed for by a store.
    pub verified_cents: i64,
    /// Kept without a valid receipt: counted in no billing figure.
    pub unverified_cents: i64,
    /// Sandbox transactions accepted on a live key: never revenue.
    pub sandbox_cents: i64,
    /// Taken back by the stores' refunds (a reversed refund shows again as a verified
    /// purchase).
    pub refunded_cents: i64,
}

impl PurchaseTotals {
    /// The totals of `lines`' purchases.
    pub fn of<'a>(lines: impl IntoIterator<Item = &'a LedgerEntry>) -> Self {
        let mut totals = Self::default();
        for line in lines {
            if line.kind == MoneyKind::Refund {
                totals.refunded_cents = totals.refunded_cents.saturating_add(line.amount);
                continue;
            }
            if line.kind != MoneyKind::Purchase {
                continue;
            }
            let slot = match line.proof {
                None => &mut totals.reported_cents,
                Some(Proof::Verified) => &mut totals.verified_cents,
                Some(Proof::Unverified) => &mut totals.unverified_cents,
                Some(Proof::Sandbox) => &mut totals.sandbox_cents,
            };
            *slot = slot.saturating_add(line.amount);
        }
        totals
    }
}

/// The record of `player_id` with the ledger page `[offset, offset + limit)`, newest first;
/// 404 when the player never played (an accepted event beyond `session_start`) nor has a
/// ledger entry in this environment.
pub async fn record(
    state: &Services,
    game: &GameHandle,
    env: Environment,
    player_id: &str,
    offset: usize,
    limit: usize,
) -> ServiceResult<PlayerRecord> {
    let view = game.view();
    let game_id = view.game.game_id;
    let entry = population::entry(state, game_id, env, player_id).await?;
    let mut lines: Vec<_> = state
        .store
        .ledger(game_id, env)
        .await?
        .into_iter()
        .filter(|l| l.player_id == player_id)
        .collect();
    if entry.is_none() && lines.is_empty() {
        return Err(ServiceError::NotFound("player"));
    }
    let mut balances = BTreeMap::new();
    for currency in &view.game.currencies {
        let id = currency.currency_id.clone();
        let balance = state.store.balance(game_id, env, player_id, &id).await?;
        balances.insert(id, balance);
    }
    let ledger_total = lines.len();
    let purchases = PurchaseTotals::of(&lines);
    lines.reverse();
    let ledger = lines
        .into_iter()
        .skip(offset)
        .take(limit.min(MAX_PAGE))
        .map(PlayerLedgerLine::from)
        .collect();
    let currencies: Vec<String> = view
        .game
        .currencies
        .iter()
        .map(|c| c.currency_id.clone())
        .collect();
    let today = Utc::now().date_naive();
    let days: Vec<NaiveDate> = (0..CAPPED_DAYS)
        .filter_map(|back| today.checked_sub_days(chrono::Days::new(back)))
        .collect();
    let capped_days = state
        .store
        .player_left_out(game_id, env, player_id, &currencies, &days)
        .await?
        .into_iter()
        .map(|d| CappedDay {
            date: d.day,
            kind: d.kind.event_name(),
            currency_id: d.currency_id,
            left_out: d.left_out,
        })
        .collect();
    Ok(PlayerRecord {
        capped_days,
        player_id: player_id.to_owned(),
        group: PlayerGroup::of(player_id, game_id),
        install_day: entry.as_ref().map(|e| e.install_day),
        last_seen: entry.and_then(|e| e.last_seen),
        balances,
        lifetime_spend_cents: state.store.spend_cents(game_id, env, player_id).await?,
        inventory: InventoryItem::list(
            inventory::read(state.store.as_ref(), game_id, env, player_id).await?,
        ),
        ledger,
        ledger_total,
        purchases,
    })
}
