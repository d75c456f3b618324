//! Secrets the engine makes for itself and keeps in the store, so that every node of a
//! deployment signs and checks with the same one: made at first use with `insert_new` (two
//! nodes making one at once keep the first), then read back, never changed.

use rand::RngExt;

use crate::service::{ServiceError, ServiceResult, Services};
use crate::store::Collection;

/// The 32-byte secret `name` of `coll`, made now when it does not exist yet.
pub async fn get_or_make(
    services: &Services,
    coll: Collection,
    name: &str,
) -> ServiceResult<Vec<u8>> {
    let fresh: [u8; 32] = rand::rng().random();
    services
        .store
        .insert_new(coll, name, fresh.to_vec())
        .await?;
    services
        .store
        .get(coll, name)
        .await?
        .ok_or_else(|| ServiceError::Internal(format!("the secret `{name}` vanished")))
}
