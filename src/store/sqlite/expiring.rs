//! Short-lived documents in SQLite: one row per document in `expiring`, keyed like `docs`
//! (scope, collection, id), with the time it expires. A read never returns an expired
//! document and a write treats one as absent; the writer's sweep deletes them ([`prune`])
//! in bounded chunks through the index by expiry. The store's [`Expiring`] calls run these on
//! the writer thread or a reader.

use std::time::Duration;

use async_trait::async_trait;
use chrono::{DateTime, TimeDelta, Utc};
use rusqlite::{Connection, OptionalExtension, params};

use super::super::{Collection, Expiring, StoreError, StoreResult};
use super::SqliteStore;
use super::schema::scope_key;

/// The live document, if any.
pub fn get(
    conn: &Connection,
    coll: Collection,
    id: &str,
    now: DateTime<Utc>,
) -> StoreResult<Option<Vec<u8>>> {
    Ok(conn
        .prepare_cached(
            "SELECT value FROM expiring
             WHERE scope = ?1 AND coll = ?2 AND id = ?3 AND expires_ms > ?4",
        )?
        .query_row(
            params![scope_key(coll.scope), coll.name, id, now.timestamp_millis()],
            |row| row.get(0),
        )
        .optional()?)
}

/// Writes the document expiring at `expires` unless a live one has this id (an expired
/// one is replaced); `false` when a live one does.
pub fn insert(
    conn: &Connection,
    coll: Collection,
    id: &str,
    value: &[u8],
    (now, expires): (DateTime<Utc>, DateTime<Utc>),
) -> StoreResult<bool> {
    let written = conn
        .prepare_cached(
            "INSERT INTO expiring (scope, coll, id, expires_ms, value) VALUES (?1, ?2, ?3, ?4, ?5)
             ON CONFLICT (scope, coll, id) DO UPDATE SET
               expires_ms = excluded.expires_ms, value = excluded.value
             WHERE expiring.expires_ms <= ?6",
        )?
        .execute(params![
            scope_key(coll.scope),
            coll.name,
            id,
            expires.timestamp_millis(),
            value,
            now.timestamp_millis()
        ])?;
    Ok(written == 1)
}

/// Replaces the live document only if it still equals `expected`, keeping its expiry.
pub fn swap(
    conn: &Connection,
    coll: Collection,
    id: &str,
    (expected, new): (&[u8], &[u8]),
    now: DateTime<Utc>,
) -> StoreResult<bool> {
    let written = conn
        .prepare_cached(
            "UPDATE expiring SET value = ?4
             WHERE scope = ?1 AND coll = ?2 AND id = ?3 AND value = ?5 AND expires_ms > ?6",
        )?
        .execute(params![
            scope_key(coll.scope),
            coll.name,
            id,
            new,
            expected,
            now.timestamp_millis()
        ])?;
    Ok(written == 1)
}

/// Deletes at most `chunk` documents expired by `now`; returns how many it deleted.
pub fn prune(conn: &Connection, now: DateTime<Utc>, chunk: usize) -> StoreResult<usize> {
    let limit = i64::try_from(chunk).unwrap_or(i64::MAX);
    Ok(conn
        .prepare_cached(
            "DELETE FROM expiring WHERE (scope, coll, id) IN
               (SELECT scope, coll, id FROM expiring WHERE expires_ms <= ?1
                ORDER BY expires_ms LIMIT ?2)",
        )?
        .execute(params![now.timestamp_millis(), limit])?)
}

#[async_trait]
impl Expiring for SqliteStore {
    async fn insert_expiring(
        &self,
        coll: Collection,
        id: &str,
        value: Vec<u8>,
        ttl: Duration,
    ) -> StoreResult<bool> {
        let ttl = TimeDelta::from_std(ttl)
            .map_err(|e| StoreError::Unavailable(format!("time to live: {e}")))?;
        let id = id.to_owned();
        self.write("insert_expiring", move |conn| {
            let now = Utc::now();
            let expires = now
                .checked_add_signed(ttl)
                .unwrap_or(DateTime::<Utc>::MAX_UTC);
            insert(conn, coll, &id, &value, (now, expires))
        })
        .await
    }

    async fn get_expiring(&self, coll: Collection, id: &str) -> StoreResult<Option<Vec<u8>>> {
        let id = id.to_owned();
        self.read("get_expiring", move |conn| get(conn, coll, &id, Utc::now()))
            .await
    }

    async fn swap_expiring(
        &self,
        coll: Collection,
        id: &str,
        expected: &[u8],
        new: Vec<u8>,
    ) -> StoreResult<bool> {
        let id = id.to_owned();
        let expected = expected.to_vec();
        self.write("swap_expiring", move |conn| {
            swap(conn, coll, &id, (&expected, &new), Utc::now())
        })
        .await
    }
}
