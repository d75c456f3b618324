//! Decision records in SQLite: one row per decision in `decisions`, with the time it
//! expires. A read never returns an expired record; the writer's sweep deletes them
//! ([`prune`]) in bounded chunks, oldest first, through the index by expiry. The store's
//! [`Decisions`] calls run these on the writer thread or a reader.

use std::time::Duration;

use async_trait::async_trait;
use chrono::{DateTime, TimeDelta, Utc};
use rusqlite::{Connection, OptionalExtension, params};
use uuid::Uuid;

use super::super::{Decisions, StoreError, StoreResult};
use super::SqliteStore;

/// Writes a game's records, each expiring at `expires` (the caller's savepoint makes them
/// one step).
pub fn put(
    conn: &Connection,
    game_id: Uuid,
    records: &[(Uuid, Vec<u8>)],
    expires: DateTime<Utc>,
) -> StoreResult<()> {
    let mut stmt = conn.prepare_cached(
        "INSERT INTO decisions (id, game, expires_ms, value) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (id) DO UPDATE SET game = excluded.game,
           expires_ms = excluded.expires_ms, value = excluded.value",
    )?;
    let game = game_id.as_bytes().as_slice();
    let expires = expires.timestamp_millis();
    for (id, value) in records {
        stmt.execute(params![id.as_bytes().as_slice(), game, expires, value])?;
    }
    Ok(())
}

/// A game's record, unless it expired by `now`.
pub fn get(
    conn: &Connection,
    game_id: Uuid,
    id: Uuid,
    now: DateTime<Utc>,
) -> StoreResult<Option<Vec<u8>>> {
    Ok(conn
        .prepare_cached(
            "SELECT value FROM decisions WHERE id = ?1 AND game = ?2 AND expires_ms > ?3",
        )?
        .query_row(
            params![
                id.as_bytes().as_slice(),
                game_id.as_bytes().as_slice(),
                now.timestamp_millis()
            ],
            |row| row.get(0),
        )
        .optional()?)
}

/// Deletes at most `chunk` records expired by `now`; returns how many it deleted.
pub fn prune(conn: &Connection, now: DateTime<Utc>, chunk: usize) -> StoreResult<usize> {
    let limit = i64::try_from(chunk).unwrap_or(i64::MAX);
    Ok(conn
        .prepare_cached(
            "DELETE FROM decisions WHERE id IN
               (SELECT id FROM decisions WHERE expires_ms <= ?1 ORDER BY expires_ms LIMIT ?2)",
        )?
        .execute(params![now.timestamp_millis(), limit])?)
}

#[async_trait]
impl Decisions for SqliteStore {
    async fn put_decisions(
        &self,
        game_id: Uuid,
        records: Vec<(Uuid, Vec<u8>)>,
        ttl: Duration,
    ) -> StoreResult<()> {
        if records.is_empty() {
            return Ok(());
        }
        let ttl = TimeDelta::from_std(ttl)
            .map_err(|e| StoreError::Unavailable(format!("decision time to live: {e}")))?;
        let expires = Utc::now()
            .checked_add_signed(ttl)
            .unwrap_or(DateTime::<Utc>::MAX_UTC);
        self.write("put_decisions", move |conn| {
            put(conn, game_id, &records, expires)
        })
        .await
    }

    async fn get_decision(&self, game_id: Uuid, decision_id: Uuid) -> StoreResult<Option<Vec<u8>>> {
        self.read("get_decision", move |conn| {
            get(conn, game_id, decision_id, Utc::now())
        })
        .await
    }
}
