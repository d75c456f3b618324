//! `svc_config.json`, the game's SDK settings shipped with the build: whether init logs the
//! player in at once, and where the player id comes from.

use std::path::Path;

use serde::Deserialize;

use crate::error::InitError;

/// The file's name in the directory the game passes to init.
pub const FILE_NAME: &str = "svc_config.json";

/// Where the player id comes from (see [`crate::identity`] for how each resolves).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PlayerIdSource {
    /// A random id made on the first launch and kept in the SDK's data directory.
    Device,
    /// The platform's advertising id, which the game reads and passes in.
    AdvertisingId,
    /// The game's own player id, passed to init (or to login).
    Custom,
    /// The `sub` claim of a JWT the game's own backend issued to the player.
    Jwt,
}

/// The settings of `svc_config.json`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SvcConfig {
    /// When true, init opens the session with the resolved player id at once; when false,
    /// the session opens when the game calls [`crate::Sdk::login`].
    pub auto_login: bool,
    /// Where the player id comes from.
    pub player_id_source: PlayerIdSource,
}

impl SvcConfig {
    /// Reads `svc_config.json` from `dir` (a small local file: reading it on the caller's
    /// thread is the one file read init makes besides the cache).
    pub fn read(dir: &Path) -> Result<Self, InitError> {
        let path = dir.join(FILE_NAME);
        let text = std::fs::read_to_string(&path).map_err(|e| InitError::SvcConfig {
            path: path.clone(),
            message: e.to_string(),
        })?;
        serde_json::from_str(&text).map_err(|e| InitError::SvcConfig {
            path,
            message: e.to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_four_sources_parse_in_snake_case() {
        for (name, source) in [
            ("device", PlayerIdSource::Device),
            ("advertising_id", PlayerIdSource::AdvertisingId),
            ("custom", PlayerIdSource::Custom),
            ("jwt", PlayerIdSource::Jwt),
        ] {
            let c: SvcConfig = serde_json::from_str(&format!(
                r#"{{"auto_login": true, "player_id_source": "{name}"}}"#
            ))
            .expect("parse");
            assert_eq!(c.player_id_source, source);
        }
    }

    #[test]
    fn a_missing_file_names_its_path() {
        let dir = std::env::temp_dir().join(format!("offer-sdk-none-{}", uuid::Uuid::new_v4()));
        let err = SvcConfig::read(&dir).expect_err("missing");
        assert!(err.to_string().contains(FILE_NAME), "{err}");
    }
}
