//! Decision records in SQLite: one row per decision in `decisions`, keyed by its id, with
//! the time it expires. A read never returns an expired record; the writer's sweep deletes
//! them ([`prune`]) in bounded chunks, oldest first. The store's [`Decisions`] calls run
//! these on the writer thread or a reader.
//!
//! Decision ids are time-ordered (version 7 UUIDs), and every record of a deployment lives
//! as long as `offers.decision_ttl_s`, so the records that expire first are the first ids:
//! the sweep looks at the oldest ids only, and no index by expiry is kept (it cost every
//! record a second B-tree insertion). When the time to live is shortened between two runs,
//! a record written after the change may expire before older ones; it is never returned
//! once expired, and its row goes when the older rows in front of it do (at most the old
//! time to live later).

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use chrono::{DateTime, TimeDelta, Utc};
use rusqlite::{Connection, OptionalExtension, params};
use uuid::Uuid;

use super::super::{DecisionFilter, Decisions, StoreError, StoreResult};
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

/// Rows of the table one read of [`find`] walks: about 25 ms of work, so a table of any size
/// is walked in reads that each stay far inside the store's per-call deadline.
const FIND_PAGE: usize = 20_000;

/// One page of the walk for [`Decisions::find_decisions`]: among the `page` rows after the
/// id `after` (from the first when `None`), the records of a game unexpired at `now` that
/// `keep` accepts, and the last id walked (`None` once the table is done). The table has no
/// index by game, so the walk reads every game's rows, in id order.
pub fn find(
    conn: &Connection,
    (game_id, now): (Uuid, DateTime<Utc>),
    after: Option<Uuid>,
    page: usize,
    keep: &DecisionFilter,
) -> StoreResult<(Vec<Vec<u8>>, Option<Uuid>)> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, game, expires_ms, value FROM decisions WHERE id > ?1 ORDER BY id LIMIT ?2",
    )?;
    let start = after.unwrap_or_else(Uuid::nil);
    let mut rows = stmt.query(params![
        start.as_bytes().as_slice(),
        i64::try_from(page).unwrap_or(i64::MAX)
    ])?;
    let (game, now) = (game_id.as_bytes().as_slice(), now.timestamp_millis());
    let (mut kept, mut last, mut walked) = (Vec::new(), None, 0);
    while let Some(row) = rows.next()? {
        walked += 1;
        let id: Vec<u8> = row.get(0)?;
        last = Uuid::from_slice(&id).ok();
        let row_game: Vec<u8> = row.get(1)?;
        let expires: i64 = row.get(2)?;
        if row_game.as_slice() != game || expires <= now {
            continue;
        }
        let value: Vec<u8> = row.get(3)?;
        if keep(&value) {
            kept.push(value);
        }
    }
    Ok((kept, if walked < page { None } else { last }))
}

/// Deletes the records expired by `now` among the `chunk` oldest ids; returns how many it
/// deleted (`chunk` when the next chunk may hold more).
pub fn prune(conn: &Connection, now: DateTime<Utc>, chunk: usize) -> StoreResult<usize> {
    let limit = i64::try_from(chunk).unwrap_or(i64::MAX);
    Ok(conn
        .prepare_cached(
            "DELETE FROM decisions WHERE id IN (SELECT id FROM
               (SELECT id, expires_ms FROM decisions ORDER BY id LIMIT ?2)
               WHERE expires_ms <= ?1)",
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

    async fn find_decisions(
        &self,
        game_id: Uuid,
        keep: DecisionFilter,
    ) -> StoreResult<Vec<Vec<u8>>> {
        let now = Utc::now();
        let mut kept = Vec::new();
        let mut after = None;
        loop {
            let keep = Arc::clone(&keep);
            let (page, last) = self
                .read("find_decisions", move |conn| {
                    find(conn, (game_id, now), after, FIND_PAGE, &keep)
                })
                .await?;
            kept.extend(page);
            match last {
                Some(id) => after = Some(id),
                None => return Ok(kept),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use chrono::{DateTime, TimeDelta, Utc};
    use uuid::{Builder, Uuid};

    use super::super::SyncMode;
    use super::super::schema::{Location, open_writer};
    use super::*;

    /// A version 7 id of the `ms`-th millisecond.
    fn id_at(ms: u64) -> Uuid {
        Builder::from_unix_timestamp_millis(ms, &rand::random()).into_uuid()
    }

    fn count(conn: &Connection) -> i64 {
        conn.query_row("SELECT COUNT(*) FROM decisions", [], |r| r.get(0))
            .expect("count")
    }

    #[test]
    fn the_sweep_deletes_the_expired_among_the_oldest_ids() {
        let conn =
            open_writer(&Location::Memory, SyncMode::Full, Duration::from_secs(1)).expect("open");
        let game = Uuid::new_v4();
        let now = DateTime::<Utc>::from_timestamp(1_800_000_000, 0).expect("time");
        let at = |s: i64| now + TimeDelta::seconds(s);
        // Five records expired by now, then three that are not.
        let old: Vec<(Uuid, Vec<u8>)> = (0..5).map(|i| (id_at(1000 + i), vec![1])).collect();
        let young: Vec<(Uuid, Vec<u8>)> = (0..3).map(|i| (id_at(2000 + i), vec![2])).collect();
        put(&conn, game, &old, at(-1)).expect("put");
        put(&conn, game, &young, at(60)).expect("put");
        // A chunk of two takes two; the next chunk the rest of the expired.
        assert_eq!(prune(&conn, now, 2).expect("prune"), 2);
        assert_eq!(prune(&conn, now, 4).expect("prune"), 3);
        assert_eq!(prune(&conn, now, 4).expect("prune"), 0);
        assert_eq!(count(&conn), 3);
        assert!(get(&conn, game, young[0].0, now).expect("get").is_some());
        // A newer record that expires first (a shortened time to live) is never read once
        // expired, and goes once the older rows before it have.
        let newest = id_at(3000);
        put(&conn, game, &[(newest, vec![3])], at(-1)).expect("put");
        assert_eq!(get(&conn, game, newest, now).expect("get"), None);
        assert_eq!(prune(&conn, now, 3).expect("prune"), 0);
        assert_eq!(prune(&conn, at(61), 3).expect("prune"), 3);
        assert_eq!(prune(&conn, at(61), 3).expect("prune"), 1);
        assert_eq!(count(&conn), 0);
    }

    #[test]
    fn the_walk_pages_through_every_game_and_keeps_the_games_unexpired_records() {
        let conn =
            open_writer(&Location::Memory, SyncMode::Full, Duration::from_secs(1)).expect("open");
        let (game, other) = (Uuid::new_v4(), Uuid::new_v4());
        let now = DateTime::<Utc>::from_timestamp(1_800_000_000, 0).expect("time");
        let later = now + TimeDelta::seconds(60);
        let records = |from: u64, n: u64| -> Vec<(Uuid, Vec<u8>)> {
            (0..n)
                .map(|i| (id_at(from + i), vec![u8::try_from(i).unwrap_or(0)]))
                .collect()
        };
        put(&conn, game, &records(1000, 3), later).expect("put");
        put(&conn, other, &records(2000, 2), later).expect("put");
        put(&conn, game, &records(3000, 1), now).expect("expired");
        put(&conn, game, &records(4000, 2), later).expect("put");
        let keep: DecisionFilter = Arc::new(|v: &[u8]| v != [1]);
        let (mut all, mut after, mut reads) = (Vec::new(), None, 0);
        loop {
            let (page, last) = find(&conn, (game, now), after, 2, &keep).expect("find");
            reads += 1;
            all.extend(page);
            match last {
                Some(id) => after = Some(id),
                None => break,
            }
        }
        // Eight rows in pages of two: five reads (the last finds none); of the game's five
        // unexpired records, the three the filter keeps, in id order.
        assert_eq!(reads, 5);
        assert_eq!(all, vec![vec![0], vec![2], vec![0]]);
    }

    #[test]
    fn a_file_of_layout_7_loses_the_index_by_expiry() {
        let dir = std::env::temp_dir().join(format!("decisions-{}", Uuid::new_v4()));
        std::fs::create_dir_all(&dir).expect("dir");
        let location = Location::File(dir.join("store.db"));
        let indexes = |conn: &Connection| -> i64 {
            conn.query_row(
                "SELECT COUNT(*) FROM sqlite_master WHERE name = 'decisions_by_expiry'",
                [],
                |r| r.get(0),
            )
            .expect("indexes")
        };
        {
            let conn =
                open_writer(&location, SyncMode::Full, Duration::from_secs(1)).expect("open");
            assert_eq!(indexes(&conn), 0);
            conn.execute_batch(
                "CREATE INDEX decisions_by_expiry ON decisions (expires_ms); PRAGMA user_version = 7;",
            )
            .expect("layout 7");
        }
        let conn = open_writer(&location, SyncMode::Full, Duration::from_secs(1)).expect("reopen");
        assert_eq!(indexes(&conn), 0);
        drop(conn);
        std::fs::remove_dir_all(&dir).expect("clean up");
    }
}
