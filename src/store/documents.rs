//! Documents: collections of JSON documents per game or deployment-wide, written atomically
//! in batches, with compare-and-swap for state machines, and counters that every node adds
//! to.

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
}
