//! Documents in Redis: each collection is one hash (`<prefix>:global:<name>` or
//! `<prefix>:{<game_id>}:<name>`), document id to JSON bytes; a counter is a field of such a
//! hash holding a decimal integer. A versioned write is one script over two hashes of one
//! game, and a write with its record one script over at most three hashes of one game, so
//! both stay legal on a Redis Cluster.

use std::collections::HashMap;

use async_trait::async_trait;

use super::{RedisStore, bounded, flag};
use crate::store::{Collection, Documents, RecordedWrite, StoreResult, VersionedWrite, Write};

/// Documents asked for per `HSCAN` page of [`Documents::list`].
const LIST_PAGE: usize = 10_000;

/// A versioned write of a collection. KEYS: the version hash, the collection's hash (one
/// game's: one slot). ARGV: version field, expect present (1/0), expected version, new
/// version, then the entries as field, value pairs. With no entries it is the
/// compare-and-swap of one hash field.
pub(super) const VERSIONED_LUA: &str = include_str!("scripts/versioned.lua");

/// A write and its record. KEYS: the hash whose field is guarded (and set or deleted), the
/// hash the entries go to, the record's hash (all of one game: one slot). ARGV: the guarded
/// field; the guard (`any`: none, `absent`, `present`, `equal`: equal to the next argument);
/// the expected value; what becomes of the field once the guard passed (`keep`, `set` to the
/// next argument, `del`); its new value; the record's id and value; then the entries as
/// field, value pairs. Answers 1 when the write landed (and the record was inserted, unless
/// one of its id was there), 0 when the guard refused it and nothing was written.
pub(super) const RECORDED_LUA: &str = include_str!("scripts/recorded.lua");

/// A [`Write`] as [`RECORDED_LUA`] takes it: its guarded hash and field, the guard and its
/// expected value, what becomes of the field, and the hash of its entries and the entries.
struct Guarded<'a> {
    guarded: (Collection, &'a str),
    guard: (&'static str, &'a [u8]),
    then: (&'static str, Vec<u8>),
    coll: Collection,
    entries: Vec<(String, Vec<u8>)>,
}

impl<'a> From<Write<'a>> for Guarded<'a> {
    fn from(write: Write<'a>) -> Self {
        let expect = |expected: Option<&'a [u8]>| match expected {
            Some(bytes) => ("equal", bytes),
            None => ("absent", &[][..]),
        };
        match write {
            Write::PutAll { coll, entries } => Guarded {
                guarded: (coll, ""),
                guard: ("any", &[]),
                then: ("keep", Vec::new()),
                coll,
                entries,
            },
            Write::InsertNew { coll, id, value } => Guarded {
                guarded: (coll, id),
                guard: ("absent", &[]),
                then: ("set", value),
                coll,
                entries: Vec::new(),
            },
            Write::CompareAndSwap {
                coll,
                id,
                expected,
                new,
            } => Guarded {
                guarded: (coll, id),
                guard: expect(expected),
                then: ("set", new),
                coll,
                entries: Vec::new(),
            },
            Write::Versioned(w) => Guarded {
                guarded: (w.version, w.version_id),
                guard: expect(w.expected),
                then: ("set", w.new_version),
                coll: w.coll,
                entries: w.entries,
            },
            Write::Delete { coll, id } => Guarded {
                guarded: (coll, id),
                guard: ("present", &[]),
                then: ("del", Vec::new()),
                coll,
                entries: Vec::new(),
            },
        }
    }
}

impl RedisStore {
    /// The versioned write script: `new_version` into `version` (a field of that hash) and
    /// `entries` into `coll`, only if the version still equals `expected`.
    async fn versioned_write(
        &self,
        (version, version_id): (Collection, &str),
        expected: Option<&[u8]>,
        new_version: Vec<u8>,
        coll: Collection,
        entries: Vec<(String, Vec<u8>)>,
    ) -> StoreResult<bool> {
        let mut invocation = self.versioned_script.key(self.keys.collection(version));
        invocation
            .key(self.keys.collection(coll))
            .arg(version_id)
            .arg(flag(expected.is_some()))
            .arg(expected.unwrap_or_default())
            .arg(new_version);
        for (id, value) in &entries {
            invocation.arg(id).arg(value);
        }
        let mut conn = self.conn.clone();
        bounded(
            self.timeout,
            "put_all_versioned",
            invocation.invoke_async(&mut conn),
        )
        .await
    }
}

#[async_trait]
impl Documents for RedisStore {
    async fn get(&self, coll: Collection, id: &str) -> StoreResult<Option<Vec<u8>>> {
        let mut cmd = ::redis::cmd("HGET");
        cmd.arg(self.keys.collection(coll)).arg(id);
        self.query("get", &cmd).await
    }

    /// Pages through the collection with `HSCAN`, each page one round trip bounded by the
    /// store's timeout: a game's population of a million players is read in about a hundred
    /// pages instead of one `HGETALL` that no timeout fits and that would hold Redis up for
    /// every other client meanwhile. A small collection comes back in one page. The pages are
    /// not one snapshot: a document written during the scan is read with either value, and
    /// one that is there from start to end is read once (a repeat from a rehash is merged).
    async fn list(&self, coll: Collection) -> StoreResult<Vec<(String, Vec<u8>)>> {
        let key = self.keys.collection(coll);
        let mut all: HashMap<String, Vec<u8>> = HashMap::new();
        let mut cursor: u64 = 0;
        loop {
            let mut cmd = ::redis::cmd("HSCAN");
            cmd.arg(&key).arg(cursor).arg("COUNT").arg(LIST_PAGE);
            let (next, page): (u64, HashMap<String, Vec<u8>>) = self.query("list", &cmd).await?;
            all.extend(page);
            if next == 0 {
                return Ok(all.into_iter().collect());
            }
            cursor = next;
        }
    }

    async fn put_all(&self, coll: Collection, entries: Vec<(String, Vec<u8>)>) -> StoreResult<()> {
        if entries.is_empty() {
            return Ok(());
        }
        let mut cmd = ::redis::cmd("HSET");
        cmd.arg(self.keys.collection(coll));
        for (id, value) in &entries {
            cmd.arg(id).arg(value);
        }
        self.query::<i64>("put_all", &cmd).await?;
        Ok(())
    }

    async fn insert_new(&self, coll: Collection, id: &str, value: Vec<u8>) -> StoreResult<bool> {
        let mut cmd = ::redis::cmd("HSETNX");
        cmd.arg(self.keys.collection(coll)).arg(id).arg(value);
        self.query("insert_new", &cmd).await
    }

    async fn compare_and_swap(
        &self,
        coll: Collection,
        id: &str,
        expected: Option<&[u8]>,
        new: Vec<u8>,
    ) -> StoreResult<bool> {
        // A versioned write of no entries: the version field is the document itself (one
        // key, so any collection, global ones too).
        self.versioned_write((coll, id), expected, new, coll, Vec::new())
            .await
    }

    async fn put_all_versioned(&self, write: VersionedWrite<'_>) -> StoreResult<bool> {
        let w = write.checked()?;
        self.versioned_write(
            (w.version, w.version_id),
            w.expected,
            w.new_version,
            w.coll,
            w.entries,
        )
        .await
    }

    async fn add_counters(
        &self,
        coll: Collection,
        deltas: Vec<(String, i64)>,
    ) -> StoreResult<Vec<(String, i64)>> {
        let key = self.keys.collection(coll);
        // One transaction on one key: its slot on a cluster.
        let mut pipe = ::redis::pipe();
        pipe.atomic();
        for (name, delta) in &deltas {
            pipe.cmd("HINCRBY").arg(&key).arg(name).arg(*delta).ignore();
        }
        pipe.cmd("HGETALL").arg(&key);
        let mut conn = self.conn.clone();
        let (all,): (Vec<(String, i64)>,) =
            bounded(self.timeout, "add_counters", pipe.query_async(&mut conn)).await?;
        Ok(all)
    }

    async fn delete(&self, coll: Collection, id: &str) -> StoreResult<bool> {
        let mut cmd = ::redis::cmd("HDEL");
        cmd.arg(self.keys.collection(coll)).arg(id);
        self.query("delete", &cmd).await
    }

    async fn write_recorded(&self, write: RecordedWrite<'_>) -> StoreResult<bool> {
        let RecordedWrite { write, record } = write.checked()?;
        let w = Guarded::from(write);
        let mut invocation = self.recorded_script.key(self.keys.collection(w.guarded.0));
        invocation
            .key(self.keys.collection(w.coll))
            .key(self.keys.collection(record.coll))
            .arg(w.guarded.1)
            .arg(w.guard.0)
            .arg(w.guard.1)
            .arg(w.then.0)
            .arg(w.then.1)
            .arg(&record.id)
            .arg(record.value);
        for (id, value) in &w.entries {
            invocation.arg(id).arg(value);
        }
        let mut conn = self.conn.clone();
        bounded(
            self.timeout,
            "write_recorded",
            invocation.invoke_async(&mut conn),
        )
        .await
    }
}
