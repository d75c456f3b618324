//! Short-lived documents: documents the store forgets by itself once their time to live
//! has passed, such as device sign-in codes.

use std::time::Duration;

use async_trait::async_trait;

use super::{Collection, StoreResult};

/// Documents with a time to live, kept apart from the [`Documents`](super::Documents) of
/// the same collection name.
#[async_trait]
pub trait Expiring: Send + Sync {
    /// Writes a document that the store forgets `ttl` after this write, only if no live
    /// document has this id (one past its time counts as absent); `false` when one does.
    /// Short-lived state every node must see, such as device sign-in codes, lives here.
    async fn insert_expiring(
        &self,
        coll: Collection,
        id: &str,
        value: Vec<u8>,
        ttl: Duration,
    ) -> StoreResult<bool>;

    /// A document written by [`Expiring::insert_expiring`], while it lives.
    async fn get_expiring(&self, coll: Collection, id: &str) -> StoreResult<Option<Vec<u8>>>;

    /// Replaces a live expiring document only if it still equals `expected`, keeping its
    /// expiry; `false` when another writer changed it first, or it expired or never existed.
    /// The compare-and-swap of short-lived state machines (a sign-in approved once).
    async fn swap_expiring(
        &self,
        coll: Collection,
        id: &str,
        expected: &[u8],
        new: Vec<u8>,
    ) -> StoreResult<bool>;
}
