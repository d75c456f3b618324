//! The messages between engine nodes: what one node tells the others (and itself) after a
//! change they must apply, carried as JSON by the store's bus.

use chrono::{DateTime, Utc};
use offer_domain::environment::Environment;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// A message between engine nodes (Redis pub/sub; in process for the embedded store, which
/// serves one node).
/// Every node, the sender included, applies each message; applying is idempotent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum BusMessage {
    /// A game's kill switch changed: push it to every socket of the game.
    KillSwitch {
        /// The game.
        game_id: Uuid,
        /// New level 0-3.
        level: u8,
        /// Why, shown to the SDK.
        reason: String,
        /// When it changed.
        updated_at: DateTime<Utc>,
    },
    /// A game's catalogue or offer configuration changed: reload it from the store.
    GameChanged {
        /// The game.
        game_id: Uuid,
        /// The node that made the change; it already applied it and ignores its own echo
        /// (reloading it could race with its next local change).
        origin: Uuid,
    },
    /// A money event sent over REST moved a player's balance of one currency: push the
    /// balance to the player's sessions of that environment (one sent on a socket is answered
    /// on that socket instead).
    BalanceChanged {
        /// The game.
        game_id: Uuid,
        /// Production or sandbox.
        env: Environment,
        /// The player.
        player_id: String,
        /// The currency whose balance moved.
        currency_id: String,
    },
    /// A player's inventory changed: push it to the player's sessions of that environment.
    InventoryChanged {
        /// The game.
        game_id: Uuid,
        /// Production or sandbox.
        env: Environment,
        /// The player.
        player_id: String,
        /// The session whose socket already got the inventory as its answer, if any.
        answered: Option<Uuid>,
    },
    /// A player was erased: close its sessions of the game (both environments) on every
    /// node, cutting off their sockets, and forget having counted it among today's players.
    /// The message is not stored anywhere.
    PlayerErased {
        /// The game.
        game_id: Uuid,
        /// The erased player.
        player_id: String,
    },
    /// A credential was revoked: drop it from every node's cache.
    KeyRevoked {
        /// SHA-256 of the key, hex.
        key_hash: String,
    },
    /// Local only, never published: this node's link to the bus was down, so messages may
    /// have been lost; reload every game this node serves from the store.
    Resync,
}
