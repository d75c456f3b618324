//! The document collections in SQLite: one row per document in `docs`, keyed by scope,
//! collection and id. Each function runs on a connection it is handed: the writes on the
//! writer thread inside the group's transaction (each in its own savepoint, so
//! [`put_all`] is all or nothing, and a write and its record one step), the reads on a
//! reader; the store's [`Documents`] calls hand them there.

use async_trait::async_trait;
use rusqlite::{Connection, OptionalExtension, params};

use super::super::{
    Collection, Documents, Record, RecordedWrite, StoreError, StoreResult, VersionedWrite, Write,
};
use super::SqliteStore;
use super::schema::scope_key;

/// One document, if present.
pub fn get(conn: &Connection, coll: Collection, id: &str) -> StoreResult<Option<Vec<u8>>> {
    let mut stmt =
        conn.prepare_cached("SELECT value FROM docs WHERE scope = ?1 AND coll = ?2 AND id = ?3")?;
    Ok(stmt
        .query_row(params![scope_key(coll.scope), coll.name, id], |row| {
            row.get(0)
        })
        .optional()?)
}

/// Every document of a collection.
pub fn list(conn: &Connection, coll: Collection) -> StoreResult<Vec<(String, Vec<u8>)>> {
    let mut stmt =
        conn.prepare_cached("SELECT id, value FROM docs WHERE scope = ?1 AND coll = ?2")?;
    let rows = stmt.query_map(params![scope_key(coll.scope), coll.name], |row| {
        Ok((row.get(0)?, row.get(1)?))
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Writes every entry (the caller's savepoint makes them one step).
pub fn put_all(
    conn: &Connection,
    coll: Collection,
    entries: &[(String, Vec<u8>)],
) -> StoreResult<()> {
    for (id, value) in entries {
        upsert(conn, coll, id, value)?;
    }
    Ok(())
}

/// Writes one document, replacing it when present.
fn upsert(conn: &Connection, coll: Collection, id: &str, value: &[u8]) -> StoreResult<()> {
    let mut stmt = conn.prepare_cached(
        "INSERT INTO docs (scope, coll, id, value) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (scope, coll, id) DO UPDATE SET value = excluded.value",
    )?;
    stmt.execute(params![scope_key(coll.scope), coll.name, id, value])?;
    Ok(())
}

/// Writes the document only if absent; `false` when it existed.
pub fn insert_new(
    conn: &Connection,
    coll: Collection,
    id: &str,
    value: &[u8],
) -> StoreResult<bool> {
    let mut stmt = conn.prepare_cached(
        "INSERT INTO docs (scope, coll, id, value) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (scope, coll, id) DO NOTHING",
    )?;
    Ok(stmt.execute(params![scope_key(coll.scope), coll.name, id, value])? == 1)
}

/// Replaces the document only if it still equals `expected` (`None`: absent).
pub fn compare_and_swap(
    conn: &Connection,
    coll: Collection,
    id: &str,
    expected: Option<&[u8]>,
    new: &[u8],
) -> StoreResult<bool> {
    if get(conn, coll, id)?.as_deref() != expected {
        return Ok(false);
    }
    upsert(conn, coll, id, new)?;
    Ok(true)
}

/// Writes `entries` into `coll` and `new_version` into `version_id` of `version`, only if
/// that document still equals `expected` (the caller's savepoint makes it one step).
pub fn put_all_versioned(
    conn: &Connection,
    (version, version_id): (Collection, &str),
    expected: Option<&[u8]>,
    new_version: &[u8],
    coll: Collection,
    entries: &[(String, Vec<u8>)],
) -> StoreResult<bool> {
    if get(conn, version, version_id)?.as_deref() != expected {
        return Ok(false);
    }
    put_all(conn, coll, entries)?;
    upsert(conn, version, version_id, new_version)?;
    Ok(true)
}

/// Removes a document; `false` when it was absent.
pub fn delete(conn: &Connection, coll: Collection, id: &str) -> StoreResult<bool> {
    let mut stmt =
        conn.prepare_cached("DELETE FROM docs WHERE scope = ?1 AND coll = ?2 AND id = ?3")?;
    Ok(stmt.execute(params![scope_key(coll.scope), coll.name, id])? == 1)
}

/// A [`Write`] with everything it borrows copied, to travel to the writer thread.
enum OwnedWrite {
    PutAll(Collection, Vec<(String, Vec<u8>)>),
    InsertNew(Collection, String, Vec<u8>),
    CompareAndSwap(Collection, String, Option<Vec<u8>>, Vec<u8>),
    Versioned {
        version: (Collection, String),
        expected: Option<Vec<u8>>,
        new_version: Vec<u8>,
        coll: Collection,
        entries: Vec<(String, Vec<u8>)>,
    },
    Delete(Collection, String),
}

impl From<Write<'_>> for OwnedWrite {
    fn from(write: Write<'_>) -> Self {
        match write {
            Write::PutAll { coll, entries } => Self::PutAll(coll, entries),
            Write::InsertNew { coll, id, value } => Self::InsertNew(coll, id.to_owned(), value),
            Write::CompareAndSwap {
                coll,
                id,
                expected,
                new,
            } => Self::CompareAndSwap(coll, id.to_owned(), expected.map(<[u8]>::to_vec), new),
            Write::Versioned(w) => Self::Versioned {
                version: (w.version, w.version_id.to_owned()),
                expected: w.expected.map(<[u8]>::to_vec),
                new_version: w.new_version,
                coll: w.coll,
                entries: w.entries,
            },
            Write::Delete { coll, id } => Self::Delete(coll, id.to_owned()),
        }
    }
}

/// Makes `write` and, when it lands, inserts `record` (the caller's savepoint makes them one
/// step); whether the write landed.
fn write_recorded(conn: &Connection, write: &OwnedWrite, record: &Record) -> StoreResult<bool> {
    let landed = match write {
        OwnedWrite::PutAll(coll, entries) => {
            put_all(conn, *coll, entries)?;
            true
        }
        OwnedWrite::InsertNew(coll, id, value) => insert_new(conn, *coll, id, value)?,
        OwnedWrite::CompareAndSwap(coll, id, expected, new) => {
            compare_and_swap(conn, *coll, id, expected.as_deref(), new)?
        }
        OwnedWrite::Versioned {
            version: (version, version_id),
            expected,
            new_version,
            coll,
            entries,
        } => put_all_versioned(
            conn,
            (*version, version_id),
            expected.as_deref(),
            new_version,
            *coll,
            entries,
        )?,
        OwnedWrite::Delete(coll, id) => delete(conn, *coll, id)?,
    };
    if landed {
        insert_new(conn, record.coll, &record.id, &record.value)?;
    }
    Ok(landed)
}

/// Adds each delta to its counter (a document holding a decimal integer; absent counts 0)
/// and returns every counter of the collection (the caller's savepoint makes it one step).
pub fn add_counters(
    conn: &Connection,
    coll: Collection,
    deltas: &[(String, i64)],
) -> StoreResult<Vec<(String, i64)>> {
    for (name, delta) in deltas {
        let now = match get(conn, coll, name)? {
            Some(bytes) => counter(name, &bytes)?,
            None => 0,
        };
        upsert(
            conn,
            coll,
            name,
            now.saturating_add(*delta).to_string().as_bytes(),
        )?;
    }
    counters(conn, coll)
}

/// Every counter of a collection.
pub fn counters(conn: &Connection, coll: Collection) -> StoreResult<Vec<(String, i64)>> {
    list(conn, coll)?
        .into_iter()
        .map(|(name, bytes)| {
            let value = counter(&name, &bytes)?;
            Ok((name, value))
        })
        .collect()
}

/// A counter document's value.
fn counter(name: &str, bytes: &[u8]) -> StoreResult<i64> {
    std::str::from_utf8(bytes)
        .ok()
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| StoreError::Corrupt(format!("counter {name} is not an integer")))
}

#[async_trait]
impl Documents for SqliteStore {
    async fn get(&self, coll: Collection, id: &str) -> StoreResult<Option<Vec<u8>>> {
        let id = id.to_owned();
        self.read("get", move |conn| get(conn, coll, &id)).await
    }

    async fn list(&self, coll: Collection) -> StoreResult<Vec<(String, Vec<u8>)>> {
        self.read("list", move |conn| list(conn, coll)).await
    }

    async fn put_all(&self, coll: Collection, entries: Vec<(String, Vec<u8>)>) -> StoreResult<()> {
        if entries.is_empty() {
            return Ok(());
        }
        self.write("put_all", move |conn| put_all(conn, coll, &entries))
            .await
    }

    async fn insert_new(&self, coll: Collection, id: &str, value: Vec<u8>) -> StoreResult<bool> {
        let id = id.to_owned();
        self.write("insert_new", move |conn| {
            insert_new(conn, coll, &id, &value)
        })
        .await
    }

    async fn compare_and_swap(
        &self,
        coll: Collection,
        id: &str,
        expected: Option<&[u8]>,
        new: Vec<u8>,
    ) -> StoreResult<bool> {
        let id = id.to_owned();
        let expected = expected.map(<[u8]>::to_vec);
        self.write("compare_and_swap", move |conn| {
            compare_and_swap(conn, coll, &id, expected.as_deref(), &new)
        })
        .await
    }

    async fn put_all_versioned(&self, write: VersionedWrite<'_>) -> StoreResult<bool> {
        let VersionedWrite {
            version,
            version_id,
            expected,
            new_version,
            coll,
            entries,
        } = write.checked()?;
        let version_id = version_id.to_owned();
        let expected = expected.map(<[u8]>::to_vec);
        self.write("put_all_versioned", move |conn| {
            put_all_versioned(
                conn,
                (version, &version_id),
                expected.as_deref(),
                &new_version,
                coll,
                &entries,
            )
        })
        .await
    }

    async fn add_counters(
        &self,
        coll: Collection,
        deltas: Vec<(String, i64)>,
    ) -> StoreResult<Vec<(String, i64)>> {
        if deltas.is_empty() {
            return self
                .read("add_counters", move |conn| counters(conn, coll))
                .await;
        }
        self.write("add_counters", move |conn| {
            add_counters(conn, coll, &deltas)
        })
        .await
    }

    async fn delete(&self, coll: Collection, id: &str) -> StoreResult<bool> {
        let id = id.to_owned();
        self.write("delete", move |conn| delete(conn, coll, &id))
            .await
    }

    async fn write_recorded(&self, write: RecordedWrite<'_>) -> StoreResult<bool> {
        let RecordedWrite { write, record } = write.checked()?;
        let write = OwnedWrite::from(write);
        self.write("write_recorded", move |conn| {
            write_recorded(conn, &write, &record)
        })
        .await
    }
}
