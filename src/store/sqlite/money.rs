//! Money in SQLite: the atomic money step and the reads of wallets, lifetime spend, the
//! ledger and the day aggregates, and the store's [`Money`] calls, which run them on the
//! writer thread or a reader.
//!
//! [`apply`] runs on the writer thread inside a savepoint of the group's transaction, so it
//! is all or nothing and sees every earlier event of its group. It makes every check before
//! its first write, in the order of the Redis script: (a) the idempotency record (a `tx_id`
//! the player used before answers `Duplicate` with the balance its ledger line recorded, or
//! `TxConflict` when the kind, currency or amount differ; another player's equal `tx_id` is
//! another event), (b) the kill level (a level that
//! turns the SDK off, or no level at all, answers `KillSwitch`; a refund, the store's own,
//! is applied whatever the level), (c) for a spend that is not
//! imported, the balance. Only then does it write the balance (or the lifetime spend, for a
//! purchase), the ledger line, the idempotency record (pointing at that line) and the day
//! aggregate. A refused event writes nothing, so its `tx_id` may be used again.
//!
//! An earned or spent event also adds its amount to the player's day total of its kind and
//! currency (`player_days`); the part of it above the event's day cap ([`MoneyOp::day_cap`])
//! moves the balance and the ledger like the rest but goes to the day's left-out totals
//! instead of its earned or spent total, and the first event of a player's day to be capped
//! counts that player once among the day's capped players.
//!
//! A refund is a purchase taken back: it writes the records a purchase writes with its
//! amount negated (the lifetime spend, the payer's day, the day's revenue of the player's
//! group), while its ledger line keeps kind code 3 and the positive amount refunded, and the
//! day's refunded total gets the amount.
//!
//! Imported spends skip the balance check (history has no opening balance) but still move
//! the balance, so a wallet may go negative while history is replayed out of order; the
//! balance always equals its ledger's sum. Sums saturate at the bounds of `i64` instead of
//! wrapping.

use async_trait::async_trait;
use chrono::{DateTime, NaiveDate};
use offer_domain::environment::Environment;
use offer_domain::kill_level::KillLevel;
use rusqlite::{Connection, OptionalExtension, params};
use uuid::Uuid;

use super::super::{
    COHORT_SEPARATOR, DayAggregate, LedgerEntry, LeftOutDay, Money, MoneyKind, MoneyOp,
    MoneyOutcome, PlayerDayTotal, Proof, StoreError, StoreResult,
};
use super::SqliteStore;
use super::schema::{DayField, day_code, env_code, kind_code, kind_from_code, tx_hash};

/// Applies one money event.
pub fn apply(conn: &Connection, op: &MoneyOp) -> StoreResult<MoneyOutcome> {
    let game = op.game_id.as_bytes().as_slice();
    let env = env_code(op.env);
    let hash = tx_hash(op.game_id, op.env, &op.player_id, &op.tx_id);
    if let Some(first) = first_application(conn, hash, game, env, &op.player_id, &op.tx_id)? {
        let same = first.kind == op.kind
            && first.currency_id == op.currency_id
            && first.amount == op.amount;
        return Ok(if same {
            MoneyOutcome::Duplicate {
                balance: first.balance_after,
            }
        } else {
            MoneyOutcome::TxConflict
        });
    }
    // A refund is the store's word on money already paid, not the game's: the kill switch
    // turns the game's SDK off, never the stores.
    if op.kind != MoneyKind::Refund && !kill_level(conn, game)?.is_some_and(KillLevel::allows_sdk) {
        return Ok(MoneyOutcome::KillSwitch);
    }
    let current = if op.kind.is_revenue() {
        0
    } else {
        balance_of(conn, game, env, &op.player_id, &op.currency_id)?
    };
    if op.kind == MoneyKind::Spent && !op.import && current < op.amount {
        return Ok(MoneyOutcome::InsufficientFunds { balance: current });
    }

    let balance_after = match op.kind {
        MoneyKind::Earned => current.saturating_add(op.amount),
        MoneyKind::Spent => current.saturating_sub(op.amount),
        MoneyKind::Purchase | MoneyKind::Refund => 0,
    };
    // A refund moves what a purchase moves, by its negated amount.
    let revenue = op.revenue_delta();
    // A purchase whose revenue does not count (unverified, sandbox) keeps only its ledger
    // line and its day total of its own.
    if op.kind.is_revenue() && op.revenue_counts() {
        let spent = spend_of(conn, game, env, &op.player_id)?;
        conn.prepare_cached(
            "INSERT INTO spend (game, env, player, cents) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT (game, env, player) DO UPDATE SET cents = excluded.cents",
        )?
        .execute(params![
            game,
            env,
            op.player_id,
            spent.saturating_add(revenue)
        ])?;
        conn.prepare_cached(
            "INSERT INTO spend_days (game, env, day, player, cents) VALUES (?1, ?2, ?3, ?4, ?5)
             ON CONFLICT (game, env, day, player) DO UPDATE SET cents = cents + excluded.cents",
        )?
        .execute(params![
            game,
            env,
            day_code(op.ts.date_naive()),
            op.player_id,
            revenue
        ])?;
    } else if !op.kind.is_revenue() {
        conn.prepare_cached(
            "INSERT INTO wallets (game, env, player, currency, balance) VALUES (?1, ?2, ?3, ?4, ?5)
             ON CONFLICT (game, env, player, currency) DO UPDATE SET balance = excluded.balance",
        )?
        .execute(params![
            game,
            env,
            op.player_id,
            op.currency_id,
            balance_after
        ])?;
    }
    conn.prepare_cached(
        "INSERT INTO ledger (game, env, tx_id, player, kind, currency, amount, balance_after,
                             ts, ts_nanos, proof)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
    )?
    .execute(params![
        game,
        env,
        op.tx_id,
        op.player_id,
        kind_code(op.kind),
        op.currency_id,
        op.amount,
        balance_after,
        op.ts.timestamp(),
        op.ts.timestamp_subsec_nanos(),
        Proof::code(op.proof),
    ])?;
    let id = conn.last_insert_rowid();
    conn.prepare_cached("INSERT INTO tx (id, hash) VALUES (?1, ?2)")?
        .execute(params![id, hash])?;
    // What the day aggregate counts: all of a purchase, the part of a currency event under
    // the player's day cap.
    let left_out = if op.kind.is_revenue() {
        0
    } else {
        count_player_day(conn, game, env, op)?
    };
    let counted = revenue.saturating_sub(left_out);
    let (field, currency) = match op.kind {
        MoneyKind::Earned => (DayField::Earned, op.currency_id.as_str()),
        MoneyKind::Spent => (DayField::Spent, op.currency_id.as_str()),
        MoneyKind::Purchase | MoneyKind::Refund if !op.revenue_counts() => {
            (DayField::RevenueUnverified, "")
        }
        MoneyKind::Purchase | MoneyKind::Refund if op.holdout => (DayField::RevenueControl, ""),
        MoneyKind::Purchase | MoneyKind::Refund => (DayField::RevenueTreatment, ""),
    };
    // A currency's day total, and for a player of a known install cohort also that
    // cohort's share of it (purchases keep no cohort split).
    let cohort_field = match &op.cohort {
        Some(cohort) if !op.kind.is_revenue() => {
            Some(format!("{currency}{COHORT_SEPARATOR}{cohort}"))
        }
        _ => None,
    };
    for day_field in std::iter::once(currency).chain(cohort_field.as_deref()) {
        add_to_day(
            conn,
            game,
            env,
            op.ts.date_naive(),
            field,
            day_field,
            counted,
        )?;
    }
    // What the stores took back, beside the net revenue it already came off.
    if op.kind == MoneyKind::Refund && op.revenue_counts() {
        add_to_day(
            conn,
            game,
            env,
            op.ts.date_naive(),
            DayField::Refunded,
            "",
            op.amount,
        )?;
    }
    Ok(MoneyOutcome::Applied {
        balance: balance_after,
        left_out,
    })
}

/// Adds an earned or spent event to its player's day total and answers the part of it above
/// the event's day cap, which it adds to the day's left-out total (and counts the player
/// among the day's capped players on their first capped event of the day).
fn count_player_day(conn: &Connection, game: &[u8], env: i64, op: &MoneyOp) -> StoreResult<i64> {
    let day = op.ts.date_naive();
    let kind = kind_code(op.kind);
    let (total, left_before): (i64, i64) = conn
        .prepare_cached(
            "SELECT total, left_out FROM player_days
             WHERE game = ?1 AND env = ?2 AND day = ?3 AND player = ?4 AND kind = ?5
               AND currency = ?6",
        )?
        .query_row(
            params![game, env, day_code(day), op.player_id, kind, op.currency_id],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )
        .optional()?
        .unwrap_or((0, 0));
    let left = left_over(total, op.amount, op.day_cap);
    conn.prepare_cached(
        "INSERT INTO player_days (game, env, day, player, kind, currency, total, left_out)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
         ON CONFLICT (game, env, day, player, kind, currency)
         DO UPDATE SET total = excluded.total, left_out = excluded.left_out",
    )?
    .execute(params![
        game,
        env,
        day_code(day),
        op.player_id,
        kind,
        op.currency_id,
        total.saturating_add(op.amount),
        left_before.saturating_add(left)
    ])?;
    if left > 0 {
        let (left_field, capped_field) = match op.kind {
            MoneyKind::Earned => (DayField::LeftOutEarned, DayField::CappedEarned),
            _ => (DayField::LeftOutSpent, DayField::CappedSpent),
        };
        add_to_day(conn, game, env, day, left_field, &op.currency_id, left)?;
        if left_before == 0 {
            add_to_day(conn, game, env, day, capped_field, &op.currency_id, 1)?;
        }
    }
    Ok(left)
}

/// The part of `amount` above `cap` once the day already holds `before` units (all of it
/// when the day was at or above the cap; none without a cap).
fn left_over(before: i64, amount: i64, cap: Option<i64>) -> i64 {
    match cap {
        Some(cap) => {
            let room = cap.saturating_sub(before).max(0);
            amount.saturating_sub(room).max(0)
        }
        None => 0,
    }
}

/// What the first application of a player's `tx_id` recorded, while its idempotency record is
/// kept: the records with its hash lead to candidate ledger lines, and only the line of exactly
/// this game, environment, player and `tx_id` counts (a `tx_id` is the player's own: another
/// player's equal `tx_id` is another event). `CROSS JOIN` keeps the hash index as the outer
/// loop: left to itself the planner may walk the whole game's ledger by its index instead.
fn first_application(
    conn: &Connection,
    hash: i64,
    game: &[u8],
    env: i64,
    player_id: &str,
    tx_id: &str,
) -> StoreResult<Option<LedgerEntry>> {
    let mut stmt = conn.prepare_cached(
        "SELECT l.tx_id, l.player, l.kind, l.currency, l.amount, l.balance_after, l.ts, l.ts_nanos,
                l.proof
         FROM tx t CROSS JOIN ledger l ON l.id = t.id
         WHERE t.hash = ?1 AND l.game = ?2 AND l.env = ?3 AND l.player = ?4 AND l.tx_id = ?5",
    )?;
    let row = stmt
        .query_row(params![hash, game, env, player_id, tx_id], LedgerRow::read)
        .optional()?;
    row.map(LedgerRow::entry).transpose()
}

/// A game's kill level as the money step reads it: never set is 0; a number that is no
/// level is `None` (and refuses, like the Redis script).
fn kill_level(conn: &Connection, game: &[u8]) -> StoreResult<Option<KillLevel>> {
    let level: Option<i64> = conn
        .prepare_cached("SELECT level FROM kill WHERE game = ?1")?
        .query_row(params![game], |row| row.get(0))
        .optional()?;
    Ok(u8::try_from(level.unwrap_or(0))
        .ok()
        .and_then(|l| KillLevel::try_from(l).ok()))
}

/// Adds `amount` to one total of a day aggregate.
fn add_to_day(
    conn: &Connection,
    game: &[u8],
    env: i64,
    day: NaiveDate,
    field: DayField,
    currency: &str,
    amount: i64,
) -> StoreResult<()> {
    let day = day_code(day);
    let total: i64 = conn
        .prepare_cached(
            "SELECT total FROM days
             WHERE game = ?1 AND env = ?2 AND day = ?3 AND field = ?4 AND currency = ?5",
        )?
        .query_row(params![game, env, day, field.code(), currency], |row| {
            row.get(0)
        })
        .optional()?
        .unwrap_or(0);
    conn.prepare_cached(
        "INSERT INTO days (game, env, day, field, currency, total) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
         ON CONFLICT (game, env, day, field, currency) DO UPDATE SET total = excluded.total",
    )?
    .execute(params![
        game,
        env,
        day,
        field.code(),
        currency,
        total.saturating_add(amount)
    ])?;
    Ok(())
}

/// Stores a game's kill level for the money step.
pub fn set_kill_level(conn: &Connection, game_id: Uuid, level: u8) -> StoreResult<()> {
    conn.prepare_cached(
        "INSERT INTO kill (game, level) VALUES (?1, ?2)
         ON CONFLICT (game) DO UPDATE SET level = excluded.level",
    )?
    .execute(params![game_id.as_bytes().as_slice(), level])?;
    Ok(())
}

/// A balance, 0 when never touched.
fn balance_of(
    conn: &Connection,
    game: &[u8],
    env: i64,
    player: &str,
    currency: &str,
) -> StoreResult<i64> {
    Ok(conn
        .prepare_cached(
            "SELECT balance FROM wallets
             WHERE game = ?1 AND env = ?2 AND player = ?3 AND currency = ?4",
        )?
        .query_row(params![game, env, player, currency], |row| row.get(0))
        .optional()?
        .unwrap_or(0))
}

/// A lifetime spend in cents, 0 when the player never paid.
fn spend_of(conn: &Connection, game: &[u8], env: i64, player: &str) -> StoreResult<i64> {
    Ok(conn
        .prepare_cached("SELECT cents FROM spend WHERE game = ?1 AND env = ?2 AND player = ?3")?
        .query_row(params![game, env, player], |row| row.get(0))
        .optional()?
        .unwrap_or(0))
}

/// Every player's lifetime spend in one game and environment (payers only).
pub fn spends(
    conn: &Connection,
    game_id: Uuid,
    env: Environment,
) -> StoreResult<Vec<(String, i64)>> {
    let mut stmt =
        conn.prepare_cached("SELECT player, cents FROM spend WHERE game = ?1 AND env = ?2")?;
    let rows = stmt.query_map(
        params![game_id.as_bytes().as_slice(), env_code(env)],
        |row| Ok((row.get(0)?, row.get(1)?)),
    )?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// A player's balance of one currency.
pub fn balance(
    conn: &Connection,
    game_id: Uuid,
    env: Environment,
    player_id: &str,
    currency_id: &str,
) -> StoreResult<i64> {
    balance_of(
        conn,
        game_id.as_bytes(),
        env_code(env),
        player_id,
        currency_id,
    )
}

/// A player's lifetime real-money spend in cents.
pub fn spend_cents(
    conn: &Connection,
    game_id: Uuid,
    env: Environment,
    player_id: &str,
) -> StoreResult<i64> {
    spend_of(conn, game_id.as_bytes(), env_code(env), player_id)
}

/// The ledger of one game and environment in append order.
pub fn ledger(conn: &Connection, game_id: Uuid, env: Environment) -> StoreResult<Vec<LedgerEntry>> {
    let mut stmt = conn.prepare_cached(
        "SELECT tx_id, player, kind, currency, amount, balance_after, ts, ts_nanos, proof
         FROM ledger WHERE game = ?1 AND env = ?2 ORDER BY id",
    )?;
    let rows = stmt.query_map(
        params![game_id.as_bytes().as_slice(), env_code(env)],
        LedgerRow::read,
    )?;
    rows.map(|row| row.map_err(StoreError::from).and_then(LedgerRow::entry))
        .collect()
}

/// Each payer's real-money spend on each of the given days (a day without purchases is
/// empty).
pub fn day_revenues(
    conn: &Connection,
    game_id: Uuid,
    env: Environment,
    days: &[NaiveDate],
) -> StoreResult<Vec<Vec<(String, i64)>>> {
    rows_by_day(
        conn,
        "SELECT player, cents FROM spend_days WHERE game = ?1 AND env = ?2 AND day = ?3",
        (game_id, env, days),
        |row| Ok((row.get(0)?, row.get(1)?)),
    )
}

/// A row of `(code, currency, total)`: a day aggregate's field or a player day's kind, with
/// its currency and units.
fn code_currency_total(row: &rusqlite::Row<'_>) -> rusqlite::Result<(i64, String, i64)> {
    Ok((row.get(0)?, row.get(1)?, row.get(2)?))
}

/// The day aggregates of the given days (missing days are empty).
pub fn day_aggregates(
    conn: &Connection,
    game_id: Uuid,
    env: Environment,
    days: &[NaiveDate],
) -> StoreResult<Vec<DayAggregate>> {
    let by_day = rows_by_day(
        conn,
        "SELECT field, currency, total FROM days WHERE game = ?1 AND env = ?2 AND day = ?3",
        (game_id, env, days),
        code_currency_total,
    )?;
    by_day
        .into_iter()
        .map(|rows| {
            let mut aggregate = DayAggregate::default();
            for (field, currency, total) in rows {
                add_to_aggregate(&mut aggregate, DayField::from_code(field)?, currency, total);
            }
            Ok(aggregate)
        })
        .collect()
}

/// Every player's day totals on the given days.
pub fn player_day_totals(
    conn: &Connection,
    game_id: Uuid,
    env: Environment,
    days: &[NaiveDate],
) -> StoreResult<Vec<PlayerDayTotal>> {
    let by_day = rows_by_day(
        conn,
        "SELECT kind, currency, total FROM player_days WHERE game = ?1 AND env = ?2 AND day = ?3",
        (game_id, env, days),
        code_currency_total,
    )?;
    by_day
        .into_iter()
        .flatten()
        .map(|(kind, currency_id, total)| {
            Ok(PlayerDayTotal {
                kind: kind_from_code(kind)?,
                currency_id,
                total,
            })
        })
        .collect()
}

/// What the day caps left out of one player's days.
pub fn player_left_out(
    conn: &Connection,
    (game_id, env, player_id): (Uuid, Environment, &str),
    currencies: &[String],
    days: &[NaiveDate],
) -> StoreResult<Vec<LeftOutDay>> {
    let mut stmt = conn.prepare_cached(
        "SELECT kind, currency, left_out FROM player_days
         WHERE game = ?1 AND env = ?2 AND day = ?3 AND player = ?4 AND left_out > 0",
    )?;
    let game = game_id.as_bytes().as_slice();
    let mut out = Vec::new();
    let mut sorted = days.to_vec();
    sorted.sort_unstable();
    for day in sorted {
        let rows = stmt.query_map(
            params![game, env_code(env), day_code(day), player_id],
            |row| {
                Ok((
                    row.get::<_, i64>(0)?,
                    row.get::<_, String>(1)?,
                    row.get::<_, i64>(2)?,
                ))
            },
        )?;
        for row in rows {
            let (kind, currency_id, left_out) = row?;
            if currencies.contains(&currency_id) {
                out.push(LeftOutDay {
                    day,
                    kind: kind_from_code(kind)?,
                    currency_id,
                    left_out,
                });
            }
        }
    }
    Ok(out)
}

/// Files one `days` row into its day's aggregate: a currency named `currency@cohort` is
/// that install cohort's share, beside the game's totals.
fn add_to_aggregate(aggregate: &mut DayAggregate, field: DayField, currency: String, total: i64) {
    let cohort = currency
        .split_once(COHORT_SEPARATOR)
        .map(|(c, cohort)| (c.to_owned(), cohort.to_owned()));
    match (field, cohort) {
        (DayField::Earned, Some((currency, cohort))) => {
            let flows = aggregate.cohorts.entry(cohort).or_default();
            flows.earned.insert(currency, total);
        }
        (DayField::Spent, Some((currency, cohort))) => {
            let flows = aggregate.cohorts.entry(cohort).or_default();
            flows.spent.insert(currency, total);
        }
        (DayField::Earned, None) => {
            aggregate.earned.insert(currency, total);
        }
        (DayField::Spent, None) => {
            aggregate.spent.insert(currency, total);
        }
        (DayField::RevenueTreatment, _) => aggregate.revenue_treatment_cents = total,
        (DayField::RevenueControl, _) => aggregate.revenue_control_cents = total,
        (DayField::RevenueUnverified, _) => aggregate.revenue_unverified_cents = total,
        (DayField::Refunded, _) => aggregate.refunded_cents = total,
        (DayField::LeftOutEarned, _) => {
            aggregate.left_out_earned.insert(currency, total);
        }
        (DayField::LeftOutSpent, _) => {
            aggregate.left_out_spent.insert(currency, total);
        }
        (DayField::CappedEarned, _) => {
            aggregate.capped_earned.insert(currency, total);
        }
        (DayField::CappedSpent, _) => {
            aggregate.capped_spent.insert(currency, total);
        }
    }
}

/// The rows `sql` selects for each of the given days, in their order; `sql` takes the
/// game, the environment and the day as `?1`, `?2` and `?3`.
fn rows_by_day<R>(
    conn: &Connection,
    sql: &str,
    (game_id, env, days): (Uuid, Environment, &[NaiveDate]),
    read: impl Fn(&rusqlite::Row<'_>) -> rusqlite::Result<R>,
) -> StoreResult<Vec<Vec<R>>> {
    let mut stmt = conn.prepare_cached(sql)?;
    let game = game_id.as_bytes().as_slice();
    let env = env_code(env);
    let mut out = Vec::with_capacity(days.len());
    for day in days {
        let rows = stmt.query_map(params![game, env, day_code(*day)], &read)?;
        out.push(rows.collect::<Result<Vec<_>, _>>()?);
    }
    Ok(out)
}

/// A ledger row as read, before its codes are checked.
struct LedgerRow {
    tx_id: String,
    player_id: String,
    kind: i64,
    currency_id: String,
    amount: i64,
    balance_after: i64,
    ts: i64,
    ts_nanos: u32,
    proof: i64,
}

impl LedgerRow {
    /// Reads the columns `tx_id, player, kind, currency, amount, balance_after, ts, ts_nanos,
    /// proof`.
    fn read(row: &rusqlite::Row<'_>) -> rusqlite::Result<Self> {
        Ok(Self {
            tx_id: row.get(0)?,
            player_id: row.get(1)?,
            kind: row.get(2)?,
            currency_id: row.get(3)?,
            amount: row.get(4)?,
            balance_after: row.get(5)?,
            ts: row.get(6)?,
            ts_nanos: row.get(7)?,
            proof: row.get(8)?,
        })
    }

    /// The ledger entry; an unknown kind or an impossible time is corrupt data.
    fn entry(self) -> StoreResult<LedgerEntry> {
        let ts = DateTime::from_timestamp(self.ts, self.ts_nanos).ok_or_else(|| {
            StoreError::Corrupt(format!(
                "ledger time {}.{} out of range",
                self.ts, self.ts_nanos
            ))
        })?;
        Ok(LedgerEntry {
            tx_id: self.tx_id,
            player_id: self.player_id,
            kind: kind_from_code(self.kind)?,
            currency_id: self.currency_id,
            amount: self.amount,
            balance_after: self.balance_after,
            ts,
            proof: Proof::from_code(self.proof),
        })
    }
}

#[async_trait]
impl Money for SqliteStore {
    async fn set_kill_level(&self, game_id: Uuid, level: u8) -> StoreResult<()> {
        self.write("set_kill_level", move |conn| {
            set_kill_level(conn, game_id, level)
        })
        .await
    }

    async fn apply_money(&self, op: &MoneyOp) -> StoreResult<MoneyOutcome> {
        let op = op.clone();
        self.write("apply_money", move |conn| apply(conn, &op))
            .await
    }

    async fn spend_cents(
        &self,
        game_id: Uuid,
        env: Environment,
        player_id: &str,
    ) -> StoreResult<i64> {
        let player_id = player_id.to_owned();
        self.read("spend_cents", move |conn| {
            spend_cents(conn, game_id, env, &player_id)
        })
        .await
    }

    async fn spends(&self, game_id: Uuid, env: Environment) -> StoreResult<Vec<(String, i64)>> {
        self.read("spends", move |conn| spends(conn, game_id, env))
            .await
    }

    async fn balance(
        &self,
        game_id: Uuid,
        env: Environment,
        player_id: &str,
        currency_id: &str,
    ) -> StoreResult<i64> {
        let player_id = player_id.to_owned();
        let currency_id = currency_id.to_owned();
        self.read("balance", move |conn| {
            balance(conn, game_id, env, &player_id, &currency_id)
        })
        .await
    }

    async fn ledger(&self, game_id: Uuid, env: Environment) -> StoreResult<Vec<LedgerEntry>> {
        self.read("ledger", move |conn| ledger(conn, game_id, env))
            .await
    }

    async fn day_aggregates(
        &self,
        game_id: Uuid,
        env: Environment,
        days: &[NaiveDate],
    ) -> StoreResult<Vec<DayAggregate>> {
        let days = days.to_vec();
        self.read("day_aggregates", move |conn| {
            day_aggregates(conn, game_id, env, &days)
        })
        .await
    }

    async fn day_revenues(
        &self,
        game_id: Uuid,
        env: Environment,
        days: &[chrono::NaiveDate],
    ) -> StoreResult<Vec<Vec<(String, i64)>>> {
        let days = days.to_vec();
        self.read("day_revenues", move |conn| {
            day_revenues(conn, game_id, env, &days)
        })
        .await
    }

    async fn player_day_totals(
        &self,
        game_id: Uuid,
        env: Environment,
        days: &[NaiveDate],
    ) -> StoreResult<Vec<PlayerDayTotal>> {
        let days = days.to_vec();
        self.read("player_day_totals", move |conn| {
            player_day_totals(conn, game_id, env, &days)
        })
        .await
    }

    async fn player_left_out(
        &self,
        game_id: Uuid,
        env: Environment,
        player_id: &str,
        currencies: &[String],
        days: &[NaiveDate],
    ) -> StoreResult<Vec<LeftOutDay>> {
        let player_id = player_id.to_owned();
        let currencies = currencies.to_vec();
        let days = days.to_vec();
        self.read("player_left_out", move |conn| {
            player_left_out(conn, (game_id, env, &player_id), &currencies, &days)
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use chrono::Utc;

    use super::*;
    use crate::store::sqlite::SyncMode;
    use crate::store::sqlite::schema::{Location, open_writer};

    fn earn(game_id: Uuid, tx_id: &str, amount: i64) -> MoneyOp {
        MoneyOp {
            game_id,
            env: Environment::Production,
            player_id: "p1".into(),
            tx_id: tx_id.into(),
            kind: MoneyKind::Earned,
            currency_id: "gold".into(),
            amount,
            ts: Utc::now(),
            holdout: false,
            import: false,
            cohort: None,
            proof: None,
            day_cap: None,
        }
    }

    #[test]
    fn players_day_totals_past_their_keeping_are_forgotten() {
        let conn =
            open_writer(&Location::Memory, SyncMode::Full, Duration::from_secs(1)).expect("open");
        let game = Uuid::new_v4();
        let now = Utc::now();
        let mut old = earn(game, "old", 5);
        old.ts = now - chrono::Duration::days(crate::store::PLAYER_DAYS_KEPT + 1);
        apply(&conn, &old).expect("apply");
        apply(&conn, &earn(game, "new", 7)).expect("apply");
        let deleted = super::super::retention::prune_player_days(&conn, now).expect("prune");
        assert_eq!(deleted, 1);
        let days = [old.ts.date_naive(), now.date_naive()];
        let kept = player_day_totals(&conn, game, Environment::Production, &days).expect("read");
        assert_eq!(kept.len(), 1);
        assert_eq!(kept[0].total, 7);
    }

    #[test]
    fn a_hash_collision_never_answers_for_another_tx_id() {
        let conn =
            open_writer(&Location::Memory, SyncMode::Full, Duration::from_secs(1)).expect("open");
        let game = Uuid::new_v4();
        assert_eq!(
            apply(&conn, &earn(game, "c", 5)).expect("apply"),
            MoneyOutcome::Applied {
                balance: 5,
                left_out: 0
            }
        );
        // Make the record of `c` collide with `b`'s hash.
        let b_hash = tx_hash(game, Environment::Production, "p1", "b");
        conn.execute("UPDATE tx SET hash = ?1", params![b_hash])
            .expect("collide");
        assert_eq!(
            apply(&conn, &earn(game, "b", 7)).expect("apply"),
            MoneyOutcome::Applied {
                balance: 12,
                left_out: 0
            }
        );
        assert_eq!(
            apply(&conn, &earn(game, "b", 7)).expect("apply"),
            MoneyOutcome::Duplicate { balance: 12 }
        );
        assert_eq!(
            apply(&conn, &earn(game, "b", 8)).expect("apply"),
            MoneyOutcome::TxConflict
        );
    }
}
