//! A game's player identity settings: whether opening a session needs a player token signed
//! by the studio's own backend (`required`), and the public keys that verify it.
//!
//! Every game starts in `none`: the SDK key alone opens a session for any player id, which is
//! all a game without a backend of its own can do. In `required`, a session opens only with a
//! JWT whose `sub` is the player id, signed by the private half of one of the game's keys (at
//! most three, so a key can be rotated: add the new one, move the backend to it, remove the
//! old one). Reading a key's PEM text needs a cryptography library and is the service's job;
//! the rules here are those of the fields' shapes.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::validation::{Errors, FieldError};

/// Most keys a game keeps at once.
pub const MAX_KEYS: usize = 3;
/// Longest PEM text of one key (an RSA key of 8192 bits is about 1.4 KiB).
pub const MAX_KEY_LEN: usize = 4096;

/// Whether opening a session needs a signed player token.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum PlayerAuthMode {
    /// The SDK key alone opens a session for any player id.
    #[default]
    None,
    /// A session opens only with a player token the game's keys verify, for its player.
    Required,
}

/// A game's player identity settings, as stored and as the API shows them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PlayerAuth {
    /// `none` (the default) or `required`.
    pub mode: PlayerAuthMode,
    /// PEM public keys (`-----BEGIN PUBLIC KEY-----`): a P-256 key verifies ES256 tokens, an
    /// RSA key RS256 ones. At most three.
    #[serde(default)]
    pub keys: Vec<String>,
}

impl PlayerAuth {
    /// Checks the shapes: at most [`MAX_KEYS`] keys, each a PEM text of at most
    /// [`MAX_KEY_LEN`] bytes, and at least one key in `required`. A key's error carries its
    /// index.
    pub fn validate(&self) -> Result<(), Vec<FieldError>> {
        let mut errors = Errors::default();
        if self.keys.len() > MAX_KEYS {
            errors.push("keys", format!("at most {MAX_KEYS} keys"));
        }
        for (i, key) in self.keys.iter().enumerate() {
            if key.len() > MAX_KEY_LEN
                || !key.trim_start().starts_with("-----BEGIN PUBLIC KEY-----")
            {
                errors.0.push(
                    FieldError::new(
                        "keys",
                        format!(
                            "a PEM public key (-----BEGIN PUBLIC KEY-----) of at most \
                             {MAX_KEY_LEN} bytes"
                        ),
                    )
                    .at(i),
                );
            }
        }
        if self.mode == PlayerAuthMode::Required && self.keys.is_empty() {
            errors.push(
                "mode",
                "`required` needs at least one key to verify player tokens with",
            );
        }
        errors.finish(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PEM: &str = "-----BEGIN PUBLIC KEY-----\nMFkw\n-----END PUBLIC KEY-----\n";

    #[test]
    fn required_needs_a_key_and_keys_are_bounded_pem_texts() {
        let auth = |mode, keys: &[&str]| PlayerAuth {
            mode,
            keys: keys.iter().map(|k| (*k).to_owned()).collect(),
        };
        assert!(auth(PlayerAuthMode::None, &[]).validate().is_ok());
        assert!(auth(PlayerAuthMode::Required, &[PEM]).validate().is_ok());
        assert!(auth(PlayerAuthMode::Required, &[]).validate().is_err());
        assert!(
            auth(PlayerAuthMode::None, &[PEM, PEM, PEM, PEM])
                .validate()
                .is_err()
        );
        let errors = auth(PlayerAuthMode::None, &[PEM, "not a key"])
            .validate()
            .expect_err("refused");
        assert_eq!(
            (errors[0].field.as_str(), errors[0].index),
            ("keys", Some(1))
        );
    }
}
