//! The store transaction a refund notification is about: its game, environment, store and
//! the store's id of it, where its purchase's claim and its refund record are kept.

use offer_domain::environment::Environment;
use offer_domain::product_ids::Store;
use uuid::Uuid;

use crate::store::Collection;

/// The store transaction a notification is about, where its purchase's claim would be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Target {
    /// The game.
    pub game_id: Uuid,
    /// The environment the notification names.
    pub env: Environment,
    /// The store.
    pub store: Store,
    /// The store's id of the transaction.
    pub transaction_id: String,
}

impl Target {
    /// `<store>:<transaction>`, as the claim's id.
    pub fn id(&self) -> String {
        format!("{}:{}", self.store.as_str(), self.transaction_id)
    }

    /// The collection of the game's refund records in the environment.
    pub(super) fn collection(&self) -> Collection {
        records(self.game_id, self.env)
    }
}

/// The collection of a game's refund records in `env`, keyed by `<store>:<transaction>`.
pub fn records(game_id: Uuid, env: Environment) -> Collection {
    Collection::game(
        game_id,
        match env {
            Environment::Production => "refunds",
            Environment::Sandbox => "refunds_sandbox",
        },
    )
}
