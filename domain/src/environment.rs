//! The two environments of a game: production (live SDK keys) and sandbox (test keys).
//!
//! Sessions, wallets, ledger and telemetry of a test key never touch production: every
//! layer that keeps such data (the store's keys, the open sessions) carries the
//! environment next to the game id.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// Which environment a key, a session or a money event belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Environment {
    /// Live keys.
    Production,
    /// Test keys.
    Sandbox,
}

impl Environment {
    /// Short tag used in key names.
    pub fn tag(self) -> &'static str {
        match self {
            Self::Production => "prod",
            Self::Sandbox => "sandbox",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serialised_in_snake_case_and_tagged_short() {
        for (env, wire, tag) in [
            (Environment::Production, "\"production\"", "prod"),
            (Environment::Sandbox, "\"sandbox\"", "sandbox"),
        ] {
            assert_eq!(serde_json::to_string(&env).expect("json"), wire);
            assert_eq!(
                serde_json::from_str::<Environment>(wire).expect("back"),
                env
            );
            assert_eq!(env.tag(), tag);
        }
    }
}
