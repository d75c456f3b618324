//! How long a money event's `tx_id`, and its raw ledger line, are kept.
//!
//! Ledger ids only grow, so the time an event was received is kept coarsely, for a whole
//! range of ids at once: at most once a minute the writer's group also writes a `received`
//! mark, "every ledger line up to this id had been received by now" ([`mark`]). A record is
//! expired once a mark covering its line is older than the retention; the sweep ([`prune`])
//! then deletes records by id range, in bounded chunks, between groups of writes, so a large
//! backlog never holds the writer for long. A record is therefore kept at least the retention
//! from when the engine received its event, and about a minute more at most.
//!
//! Within the retention a retried event counts once; after it, a retry with the same `tx_id`
//! counts again: the trade-off that keeps the file from growing by a record per event
//! forever.
//!
//! The raw ledger lines are kept forever unless a ledger retention is configured; then the
//! same marks date them and [`prune_ledger`] deletes the lines received before it, once no
//! idempotency record points at them any more (the ledger retention is never shorter than
//! the idempotency retention). The day aggregates, balances and lifetime spends, which every
//! economy figure reads, are separate tables and are never pruned. The players' day totals
//! (what the day caps count against) are forgotten [`PLAYER_DAYS_KEPT`] days on
//! ([`prune_player_days`]). Marks are forgotten
//! ([`forget_marks`]) only when no sweep can need them again.
//!
//! So the store's [`Retention`] calls, which the Redis backend needs, have nothing to do here
//! and answer 0.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use rusqlite::{Connection, OptionalExtension, params};

use super::super::{PLAYER_DAYS_KEPT, Retention, StoreResult, Sweep};
use super::SqliteStore;
use super::schema::day_code;

/// Most records deleted in one transaction.
pub const CHUNK: usize = 10_000;

/// Deletes up to [`CHUNK`] players' day totals of days more than [`PLAYER_DAYS_KEPT`] days
/// before `now`'s.
pub fn prune_player_days(conn: &Connection, now: DateTime<Utc>) -> StoreResult<usize> {
    let Some(first_kept) = now
        .date_naive()
        .checked_sub_days(chrono::Days::new(PLAYER_DAYS_KEPT.unsigned_abs()))
    else {
        return Ok(0);
    };
    let limit = i64::try_from(CHUNK).unwrap_or(i64::MAX);
    Ok(conn
        .prepare_cached(
            "DELETE FROM player_days WHERE (game, env, day, player, kind, currency) IN (
               SELECT game, env, day, player, kind, currency FROM player_days
               WHERE day < ?1 LIMIT ?2)",
        )?
        .execute(params![day_code(first_kept), limit])?)
}

/// Notes that every ledger line written so far was received by `now` (nothing when the
/// ledger is empty; the first mark of an id is kept, the earliest time that covers it).
pub fn mark(conn: &Connection, now: DateTime<Utc>) -> StoreResult<()> {
    conn.prepare_cached(
        "INSERT INTO received (id, at_ms)
         SELECT id, ?1 FROM ledger WHERE true ORDER BY id DESC LIMIT 1
         ON CONFLICT (id) DO NOTHING",
    )?
    .execute(params![now.timestamp_millis()])?;
    Ok(())
}

/// The last ledger id every line up to which had been received by `cutoff`.
fn received_by(conn: &Connection, cutoff: DateTime<Utc>) -> StoreResult<Option<i64>> {
    Ok(conn
        .prepare_cached("SELECT max(id) FROM received WHERE at_ms <= ?1")?
        .query_row(params![cutoff.timestamp_millis()], |row| row.get(0))
        .optional()?
        .flatten())
}

/// Deletes at most [`CHUNK`] idempotency records whose events were all received at or before
/// `cutoff`; returns how many it deleted (fewer than [`CHUNK`]: none of them is left).
pub fn prune(conn: &Connection, cutoff: DateTime<Utc>) -> StoreResult<usize> {
    let Some(upto) = received_by(conn, cutoff)? else {
        return Ok(0);
    };
    let limit = i64::try_from(CHUNK).unwrap_or(i64::MAX);
    Ok(conn
        .prepare_cached(
            "DELETE FROM tx WHERE id IN (SELECT id FROM tx WHERE id <= ?1 ORDER BY id LIMIT ?2)",
        )?
        .execute(params![upto, limit])?)
}

/// Deletes at most [`CHUNK`] raw ledger lines received at or before `cutoff` that no
/// idempotency record points at; returns how many it deleted.
pub fn prune_ledger(conn: &Connection, cutoff: DateTime<Utc>) -> StoreResult<usize> {
    let Some(upto) = received_by(conn, cutoff)? else {
        return Ok(0);
    };
    let limit = i64::try_from(CHUNK).unwrap_or(i64::MAX);
    Ok(conn
        .prepare_cached(
            "DELETE FROM ledger WHERE id IN (
               SELECT id FROM ledger
               WHERE id <= ?1 AND id < coalesce((SELECT min(id) FROM tx), ?1 + 1)
               ORDER BY id LIMIT ?2)",
        )?
        .execute(params![upto, limit])?)
}

/// Forgets the marks older than the last one at or before `cutoff`, the oldest time any
/// sweep still asks about (sweep cutoffs only move forward, so they are never needed again).
pub fn forget_marks(conn: &Connection, cutoff: DateTime<Utc>) -> StoreResult<()> {
    if let Some(upto) = received_by(conn, cutoff)? {
        conn.prepare_cached("DELETE FROM received WHERE id < ?1")?
            .execute(params![upto])?;
    }
    Ok(())
}

#[async_trait]
impl Retention for SqliteStore {
    async fn forget_tx_before(&self, _: Sweep) -> StoreResult<usize> {
        // The writer's own sweep forgets this store's records (see the module's documentation).
        Ok(0)
    }

    async fn trim_ledger_before(&self, _: Sweep) -> StoreResult<usize> {
        // The writer's own sweep drops this store's lines (see the module's documentation).
        Ok(0)
    }
}
