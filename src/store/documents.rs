//! Documents: collections of JSON documents per game or deployment-wide, written atomically
//! in batches, with compare-and-swap for state machines, and counters that every node adds
//! to. Any of the writes may carry a record ([`Documents::write_recorded`]): a document of
//! another collection of the same game, inserted in the same atomic step exactly when the
//! write lands (the audit trail's record of a change of a game's objects).

use async_trait::async_trait;

use super::{Collection, StoreResult};

/// A versioned write ([`Documents::put_all_versioned`]): entries of one collection, written
/// only if a version document still holds what the writer read.
#[derive(Debug)]
pub struct VersionedWrite<'a> {
    /// The collection of the version document.
    pub version: Collection,
    /// The version document's id.
    pub version_id: &'a str,
    /// What the version document must still hold (`None`: absent).
    pub expected: Option<&'a [u8]>,
    /// The version document's new value.
    pub new_version: Vec<u8>,
    /// The collection the entries go to, of the same game as `version`.
    pub coll: Collection,
    /// The entries, by id.
    pub entries: Vec<(String, Vec<u8>)>,
}

impl VersionedWrite<'_> {
    /// Refuses a write whose two collections belong to different games (on a Redis Cluster
    /// they would not share a slot): a bug of the caller, answered as
    /// [`StoreError::Corrupt`](super::StoreError::Corrupt).
    pub fn checked(self) -> StoreResult<Self> {
        self.version.same_game(self.coll)?;
        Ok(self)
    }
}

/// A document write as [`Documents::write_recorded`] takes it: one of the plain writes of
/// [`Documents`], with the same arguments and the same answer.
#[derive(Debug)]
pub enum Write<'a> {
    /// [`Documents::put_all`]: always lands.
    PutAll {
        /// The collection.
        coll: Collection,
        /// The entries, by id.
        entries: Vec<(String, Vec<u8>)>,
    },
    /// [`Documents::insert_new`]: lands when the document was absent.
    InsertNew {
        /// The collection.
        coll: Collection,
        /// The document's id.
        id: &'a str,
        /// Its value.
        value: Vec<u8>,
    },
    /// [`Documents::compare_and_swap`]: lands when the document still held `expected`.
    CompareAndSwap {
        /// The collection.
        coll: Collection,
        /// The document's id.
        id: &'a str,
        /// What it must still hold (`None`: absent).
        expected: Option<&'a [u8]>,
        /// Its new value.
        new: Vec<u8>,
    },
    /// [`Documents::put_all_versioned`]: lands when the version document still held what the
    /// writer read.
    Versioned(VersionedWrite<'a>),
    /// [`Documents::delete`]: lands when the document was present.
    Delete {
        /// The collection.
        coll: Collection,
        /// The document's id.
        id: &'a str,
    },
}

impl Write<'_> {
    /// The collections the write touches.
    fn collections(&self) -> [Collection; 2] {
        match self {
            Write::PutAll { coll, .. }
            | Write::InsertNew { coll, .. }
            | Write::CompareAndSwap { coll, .. }
            | Write::Delete { coll, .. } => [*coll, *coll],
            Write::Versioned(w) => [w.version, w.coll],
        }
    }
}

/// A document inserted together with a [`Write`] ([`Documents::write_recorded`]).
#[derive(Debug, Clone)]
pub struct Record {
    /// Its collection, of the same game as the write's.
    pub coll: Collection,
    /// Its id: a record already there under it is kept (inserting it again is a no-op).
    pub id: String,
    /// Its value.
    pub value: Vec<u8>,
}

/// A write and its record, checked to belong to one game ([`RecordedWrite::checked`]).
#[derive(Debug)]
pub struct RecordedWrite<'a> {
    /// The write.
    pub write: Write<'a>,
    /// The document inserted with it.
    pub record: Record,
}

impl RecordedWrite<'_> {
    /// Refuses a write and record that are not all of one game (on a Redis Cluster they
    /// would not share a slot, and a deployment-wide collection would not either): a bug of
    /// the caller, answered as [`StoreError::Corrupt`](super::StoreError::Corrupt). A
    /// versioned write's own collections are checked as [`VersionedWrite::checked`] does.
    pub fn checked(self) -> StoreResult<Self> {
        for coll in self.write.collections() {
            coll.same_game(self.record.coll)?;
        }
        Ok(self)
    }
}

/// The document store: everything the service keeps as documents of a [`Collection`].
#[async_trait]
pub trait Documents: Send + Sync {
    /// One document, if present.
    async fn get(&self, coll: Collection, id: &str) -> StoreResult<Option<Vec<u8>>>;

    /// Every document of a collection, in no particular order.
    async fn list(&self, coll: Collection) -> StoreResult<Vec<(String, Vec<u8>)>>;

    /// Writes every entry in one atomic step: all or nothing.
    async fn put_all(&self, coll: Collection, entries: Vec<(String, Vec<u8>)>) -> StoreResult<()>;

    /// Writes the document only if absent; `false` when it already existed.
    async fn insert_new(&self, coll: Collection, id: &str, value: Vec<u8>) -> StoreResult<bool>;

    /// Replaces the document only if it still equals `expected` (`None`: absent); `false`
    /// when someone else changed it first. The basis of every state machine (approvals).
    async fn compare_and_swap(
        &self,
        coll: Collection,
        id: &str,
        expected: Option<&[u8]>,
        new: Vec<u8>,
    ) -> StoreResult<bool>;

    /// Writes every entry of the write's `coll` and sets the document `version_id` of
    /// `version` to `new_version`, in one atomic step, only if that document still equals `expected`
    /// (`None`: absent); `false`, with nothing written, when another writer changed it first.
    /// The compare-and-swap of a read-modify-write over a whole collection across nodes (the
    /// catalogue, whose values depend on every item): read the version, then the
    /// collection, compute, write here, and start again on `false`. Both collections must
    /// belong to the same game (on a Redis Cluster, one slot); anything else is refused as
    /// [`StoreError::Corrupt`](super::StoreError::Corrupt) (a bug of the caller).
    async fn put_all_versioned(&self, write: VersionedWrite<'_>) -> StoreResult<bool>;

    /// Adds each delta to the counter of that name in `coll`, in one atomic step, and
    /// returns every counter of `coll` after it (an empty `deltas` only reads them). A
    /// counter is a document holding a decimal integer; one never written counts 0. Counts
    /// that every node adds to and reads back (the L1 model's statistics) live here.
    async fn add_counters(
        &self,
        coll: Collection,
        deltas: Vec<(String, i64)>,
    ) -> StoreResult<Vec<(String, i64)>>;

    /// Removes a document; `false` when it was absent.
    async fn delete(&self, coll: Collection, id: &str) -> StoreResult<bool>;

    /// Makes `write` as its plain call would, answering the same, and inserts its record in
    /// the same atomic step exactly when the write lands (`true`): a write refused (a
    /// compare-and-swap lost, a document already there or already gone) writes neither.
    /// The write's collections and the record's must all belong to one game (on a Redis
    /// Cluster, one slot); anything else is refused as
    /// [`StoreError::Corrupt`](super::StoreError::Corrupt) before anything is written.
    async fn write_recorded(&self, write: RecordedWrite<'_>) -> StoreResult<bool>;
}
