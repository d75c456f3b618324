//! Money in Redis: the wallet step and the reads of wallets, lifetime spends, the ledger and
//! the day aggregates. The scripts and the building of their calls are in `script.rs`.
//!
//! # The wallet step
//!
//! [`Money::apply_money`] is one Lua script (`script.rs`), atomic on the server, which
//! makes every check of an event before its first write: the idempotency hash, the kill
//! level, the balance. Only then does it write the balance, the idempotency record, the
//! ledger entry and the day aggregate. A call of many events runs a second script with the
//! same rules, which reads each tx hash and kill key once, keeps the balances in the call, and
//! combines the writes after the balance into one command per key (see `script.rs`).
//!
//! One game's events share script calls under load (`redis/batcher.rs`): an event of a game
//! with fewer than two calls in flight goes at once, alone; events of that game arriving
//! while two are out queue, and go together in the next call, at most 64 to a call, each
//! with its own checks and its own answer. So a busy game makes one round trip per batch
//! instead of one per event, and a quiet one waits for nothing. A refused event does not
//! touch the others of its call; a call that fails (Redis down, no answer in time) answers
//! each of its events `Unavailable`. [`RedisStore::apply_money_alone`] is the one-call-per-event path, kept as
//! the load tool's baseline.
//!
//! Imported spends skip the balance check (history has no opening balance) but still move
//! the balance, so a wallet may go negative while history is replayed out of order; the
//! ledger and the aggregates stay complete, and the balance always equals the ledger's sum.
//!
//! Lua numbers are doubles, so balances are exact up to 2^53 units.

mod script;

use std::collections::HashMap;
use std::sync::Arc;

use async_trait::async_trait;
use chrono::NaiveDate;
use offer_domain::environment::Environment;
use uuid::Uuid;

pub(super) use self::script::{MoneyCall, MoneyScripts, run};
use super::money_keys::MoneyKeys;
use super::{RedisStore, bounded, tx_layout};
use crate::store::{
    COHORT_SEPARATOR, DayAggregate, LedgerEntry, LeftOutDay, Money, MoneyKind, MoneyOp,
    MoneyOutcome, PlayerDayTotal, StoreError, StoreResult,
};

impl RedisStore {
    /// The money keys of a game and environment, once this node has brought their
    /// idempotency records to the per-player layout.
    pub(super) async fn money_keys_of(
        &self,
        game_id: Uuid,
        env: Environment,
    ) -> StoreResult<Arc<MoneyKeys>> {
        let keys = self.money_keys.get(game_id, env);
        tx_layout::ensure_per_player(&self.per_player_script, &self.conn, &keys, self.timeout)
            .await?;
        Ok(keys)
    }

    /// Applies one money event in a script call of its own, never combined with other
    /// events of its game: one round trip per event, as every event went before the
    /// batching. The engine always uses [`Money::apply_money`]; this is the baseline the
    /// load tool measures it against.
    pub async fn apply_money_alone(&self, op: &MoneyOp) -> StoreResult<MoneyOutcome> {
        let keys = self.money_keys_of(op.game_id, op.env).await?;
        self.money.apply_alone(&MoneyCall::new(&keys, op)?).await
    }
}

/// Reads one day hash back into its aggregate.
fn parse_day(fields: HashMap<String, i64>) -> DayAggregate {
    let mut day = DayAggregate::default();
    for (field, value) in fields {
        let (side, rest) = match field.split_once(':') {
            Some((side @ ("earned" | "spent"), rest)) => (side, rest),
            Some((day_cap, currency)) => {
                let map = match day_cap {
                    "xearned" => Some(&mut day.left_out_earned),
                    "xspent" => Some(&mut day.left_out_spent),
                    "cearned" => Some(&mut day.capped_earned),
                    "cspent" => Some(&mut day.capped_spent),
                    _ => None,
                };
                if let Some(map) = map {
                    map.insert(currency.to_owned(), value);
                }
                continue;
            }
            _ => ("", field.as_str()),
        };
        let target = match rest.split_once(COHORT_SEPARATOR) {
            Some((cur, cohort)) if !side.is_empty() => {
                let flows = day.cohorts.entry(cohort.to_owned()).or_default();
                Some((
                    cur,
                    if side == "earned" {
                        &mut flows.earned
                    } else {
                        &mut flows.spent
                    },
                ))
            }
            None if side == "earned" => Some((rest, &mut day.earned)),
            None if side == "spent" => Some((rest, &mut day.spent)),
            _ => None,
        };
        if let Some((cur, map)) = target {
            map.insert(cur.to_owned(), value);
        } else if field == "rev_t" {
            day.revenue_treatment_cents = value;
        } else if field == "rev_c" {
            day.revenue_control_cents = value;
        } else if field == "refunded" {
            day.refunded_cents = value;
        }
    }
    day
}

#[async_trait]
impl Money for RedisStore {
    async fn set_kill_level(&self, game_id: Uuid, level: u8) -> StoreResult<()> {
        let mut cmd = ::redis::cmd("SET");
        cmd.arg(self.keys.kill(game_id)).arg(level);
        self.query::<String>("set_kill_level", &cmd).await?;
        Ok(())
    }

    /// Applies the event at once when nothing of its game is in flight, else in the game's
    /// next batch (see the module documentation).
    async fn apply_money(&self, op: &MoneyOp) -> StoreResult<MoneyOutcome> {
        let call = MoneyCall::new(&*self.money_keys_of(op.game_id, op.env).await?, op)?;
        self.money.apply(op.game_id, call).await
    }

    async fn spend_cents(
        &self,
        game_id: Uuid,
        env: Environment,
        player_id: &str,
    ) -> StoreResult<i64> {
        let mut cmd = ::redis::cmd("HGET");
        cmd.arg(self.keys.spend(game_id, env)).arg(player_id);
        let spend: Option<i64> = self.query("spend_cents", &cmd).await?;
        Ok(spend.unwrap_or(0))
    }

    async fn spends(&self, game_id: Uuid, env: Environment) -> StoreResult<Vec<(String, i64)>> {
        let mut cmd = ::redis::cmd("HGETALL");
        cmd.arg(self.keys.spend(game_id, env));
        self.query("spends", &cmd).await
    }

    async fn balance(
        &self,
        game_id: Uuid,
        env: Environment,
        player_id: &str,
        currency_id: &str,
    ) -> StoreResult<i64> {
        let mut cmd = ::redis::cmd("HGET");
        cmd.arg(self.keys.wallet(game_id, env, player_id))
            .arg(currency_id);
        let balance: Option<i64> = self.query("balance", &cmd).await?;
        Ok(balance.unwrap_or(0))
    }

    async fn ledger(&self, game_id: Uuid, env: Environment) -> StoreResult<Vec<LedgerEntry>> {
        let mut cmd = ::redis::cmd("LRANGE");
        cmd.arg(self.keys.ledger(game_id, env)).arg(0).arg(-1);
        let lines: Vec<Vec<u8>> = self.query("ledger", &cmd).await?;
        lines
            .iter()
            .map(|line| {
                serde_json::from_slice(line)
                    .map_err(|err| StoreError::Corrupt(format!("ledger entry: {err}")))
            })
            .collect()
    }

    async fn day_aggregates(
        &self,
        game_id: Uuid,
        env: Environment,
        days: &[NaiveDate],
    ) -> StoreResult<Vec<DayAggregate>> {
        if days.is_empty() {
            return Ok(Vec::new());
        }
        let mut pipe = ::redis::pipe();
        for day in days {
            pipe.cmd("HGETALL").arg(self.keys.day(game_id, env, *day));
            pipe.cmd("HGETALL")
                .arg(self.keys.day_unverified(game_id, env, *day));
        }
        let mut conn = self.conn.clone();
        let hashes: Vec<HashMap<String, i64>> =
            bounded(self.timeout, "day_aggregates", pipe.query_async(&mut conn)).await?;
        let mut hashes = hashes.into_iter();
        let mut out = Vec::with_capacity(days.len());
        while let (Some(counted), Some(unverified)) = (hashes.next(), hashes.next()) {
            let mut day = parse_day(counted);
            day.revenue_unverified_cents = unverified.values().sum();
            out.push(day);
        }
        Ok(out)
    }

    async fn player_day_totals(
        &self,
        game_id: Uuid,
        env: Environment,
        days: &[NaiveDate],
    ) -> StoreResult<Vec<PlayerDayTotal>> {
        if days.is_empty() {
            return Ok(Vec::new());
        }
        let mut pipe = ::redis::pipe();
        for day in days {
            pipe.cmd("HGETALL")
                .arg(self.keys.player_days(game_id, env, *day));
        }
        let mut conn = self.conn.clone();
        let hashes: Vec<Vec<(String, i64)>> = bounded(
            self.timeout,
            "player_day_totals",
            pipe.query_async(&mut conn),
        )
        .await?;
        Ok(hashes
            .into_iter()
            .flatten()
            .filter_map(|(field, total)| {
                let (kind, rest) = field.split_once('|')?;
                let kind = match kind {
                    "e" => MoneyKind::Earned,
                    "s" => MoneyKind::Spent,
                    _ => return None,
                };
                let (currency, _player) = rest.split_once('|')?;
                Some(PlayerDayTotal {
                    kind,
                    currency_id: currency.to_owned(),
                    total,
                })
            })
            .collect())
    }

    async fn player_left_out(
        &self,
        game_id: Uuid,
        env: Environment,
        player_id: &str,
        currencies: &[String],
        days: &[NaiveDate],
    ) -> StoreResult<Vec<LeftOutDay>> {
        let mut days = days.to_vec();
        days.sort_unstable();
        let asked: Vec<(NaiveDate, MoneyKind, &String)> = days
            .iter()
            .flat_map(|day| {
                currencies.iter().flat_map(move |currency| {
                    [MoneyKind::Earned, MoneyKind::Spent].map(|kind| (*day, kind, currency))
                })
            })
            .collect();
        if asked.is_empty() {
            return Ok(Vec::new());
        }
        let mut pipe = ::redis::pipe();
        for (day, kind, currency) in &asked {
            let side = if *kind == MoneyKind::Earned { "e" } else { "s" };
            pipe.cmd("HGET")
                .arg(self.keys.player_days(game_id, env, *day))
                .arg(format!("x{side}|{currency}|{player_id}"));
        }
        let mut conn = self.conn.clone();
        let got: Vec<Option<i64>> =
            bounded(self.timeout, "player_left_out", pipe.query_async(&mut conn)).await?;
        Ok(asked
            .into_iter()
            .zip(got)
            .filter_map(|((day, kind, currency), left_out)| {
                left_out.filter(|l| *l > 0).map(|left_out| LeftOutDay {
                    day,
                    kind,
                    currency_id: currency.clone(),
                    left_out,
                })
            })
            .collect())
    }

    async fn day_revenues(
        &self,
        game_id: Uuid,
        env: Environment,
        days: &[NaiveDate],
    ) -> StoreResult<Vec<Vec<(String, i64)>>> {
        if days.is_empty() {
            return Ok(Vec::new());
        }
        let mut pipe = ::redis::pipe();
        for day in days {
            pipe.cmd("HGETALL")
                .arg(self.keys.spend_day(game_id, env, *day));
        }
        let mut conn = self.conn.clone();
        let hashes: Vec<Vec<(String, i64)>> =
            bounded(self.timeout, "day_revenues", pipe.query_async(&mut conn)).await?;
        Ok(hashes)
    }
}
