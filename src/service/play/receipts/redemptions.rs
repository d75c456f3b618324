//! Which player redeemed each store transaction of a game: a receipt grants once. The first
//! purchase presenting a transaction claims it for its player and `tx_id`; the same player
//! presenting it again (a retry, a replay) is sent back to that first purchase, which answers
//! as a replay; another player presenting it is sharing a receipt and gains nothing.
//!
//! A claim is a document created only if absent ([`Documents::insert_new`]), so two nodes
//! racing on one transaction agree on its one owner, on every store backend and across
//! restarts. Claims are kept for good: one is about a hundred bytes per real purchase, and a
//! transaction forgotten would grant again.

use chrono::{DateTime, Utc};
use offer_domain::environment::Environment;
use offer_domain::product_ids::Store;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::service::ServiceResult;
use crate::store::{Collection, Documents, StoreError};

/// The purchase that first redeemed a transaction.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Claim {
    /// Its player.
    pub player_id: String,
    /// Its `tx_id`, under which the wallet and inventory steps ran.
    pub tx_id: String,
    /// The revenue it recorded in cents, so a replay repeats the very same wallet step even
    /// after the catalogue price changed.
    pub amount: i64,
    /// The items and units it granted, which a replay grants again (the inventory step
    /// recognises its `tx_id`) and a refund takes back.
    #[serde(default)]
    pub grant: Vec<(String, i64)>,
    /// The currency units it credited (a currency pack's currency, its catalogue `quantity`
    /// times the receipt's), which a replay credits again under the same `tx_id`s.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub currency: Vec<(String, i64)>,
    /// The units the receipt bought (its `quantity`), so that a refund of some units takes
    /// back their share; a claim written before it was kept counts as one unit.
    #[serde(default = "one_unit")]
    pub quantity: u32,
    /// When the purchase was made: the time its wallet step recorded its revenue at, so that
    /// a refund of it in a later month is an adjustment line of that month. `None` in a
    /// claim written before it was kept: such a purchase's month is unknown, and its refunds
    /// make no line.
    #[serde(default)]
    pub purchased_at: Option<DateTime<Utc>>,
}

/// The quantity of a claim that does not say.
fn one_unit() -> u32 {
    1
}

/// Whose a presented transaction is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Redeemed {
    /// Nobody's before: this purchase claimed it.
    First,
    /// The same player's: the first purchase, to answer again.
    Again(Claim),
    /// Another player's: a shared receipt.
    Other,
}

/// The claims of one game and environment, keyed by `<store>:<transaction>`.
pub fn collection(game_id: Uuid, env: Environment) -> Collection {
    Collection::game(
        game_id,
        match env {
            Environment::Production => "redemptions",
            Environment::Sandbox => "redemptions_sandbox",
        },
    )
}

/// The claim on `transaction_id` of `store` in a game and environment, if a purchase made
/// one.
pub async fn claim_of(
    store: &dyn Documents,
    (game_id, env): (Uuid, Environment),
    (shop, transaction_id): (Store, &str),
) -> ServiceResult<Option<Claim>> {
    let id = format!("{}:{transaction_id}", shop.as_str());
    let Some(stored) = store.get(collection(game_id, env), &id).await? else {
        return Ok(None);
    };
    let claim = serde_json::from_slice(&stored)
        .map_err(|e| StoreError::Corrupt(format!("redemption `{id}`: {e}")))?;
    Ok(Some(claim))
}

/// The store transactions `player_id` redeemed in a game's environment, each as
/// `(store:transaction id, claim)`. It reads every claim of the environment: for a player's
/// data request, not a hot path.
pub async fn of_player(
    store: &dyn Documents,
    (game_id, env): (Uuid, Environment),
    player_id: &str,
) -> ServiceResult<Vec<(String, Claim)>> {
    let mut out = Vec::new();
    for (id, bytes) in store.list(collection(game_id, env)).await? {
        let claim: Claim = serde_json::from_slice(&bytes)
            .map_err(|e| StoreError::Corrupt(format!("redemption `{id}`: {e}")))?;
        if claim.player_id == player_id {
            out.push((id, claim));
        }
    }
    Ok(out)
}

/// Claims `transaction_id` of `store` in a game for `claim`, or says whose it already is.
pub async fn redeem(
    store: &dyn Documents,
    (game_id, env): (Uuid, Environment),
    (shop, transaction_id): (Store, &str),
    claim: &Claim,
) -> ServiceResult<Redeemed> {
    let coll = collection(game_id, env);
    // The store's name keeps one store's ids from meeting the other's.
    let id = format!("{}:{transaction_id}", shop.as_str());
    let bytes = serde_json::to_vec(claim)
        .map_err(|e| StoreError::Corrupt(format!("redemption claim: {e}")))?;
    if store.insert_new(coll, &id, bytes).await? {
        return Ok(Redeemed::First);
    }
    let Some(stored) = store.get(coll, &id).await? else {
        // Claims are never deleted: one that vanished is a store that lost data.
        return Err(StoreError::Corrupt(format!("redemption `{id}` vanished")).into());
    };
    let first: Claim = serde_json::from_slice(&stored)
        .map_err(|e| StoreError::Corrupt(format!("redemption `{id}`: {e}")))?;
    Ok(if first.player_id == claim.player_id {
        Redeemed::Again(first)
    } else {
        Redeemed::Other
    })
}
