//! How the player id is resolved from the source `svc_config.json` names:
//!
//! - `device`: a random UUID made on the first launch and kept in `device_id` in the SDK's
//!   data directory, so the same install is the same player across launches.
//! - `advertising_id`: the platform's advertising id, which the game reads (the SDK has no
//!   platform access) and passes in [`crate::InitOptions::advertising_id`].
//! - `custom`: the game's own player id, passed to init (or to [`crate::Sdk::login`]).
//! - `jwt`: the `sub` claim of the player token the game's backend signed, passed in
//!   [`crate::InitOptions::player_token`] (or to [`crate::Sdk::login_with_token`]). The token
//!   is decoded, not verified: the SDK holds no key to verify it with. It is also sent to the
//!   engine (see [`crate::player_token`]), which verifies it when the game's player identity is
//!   `required`.

use std::path::Path;

use crate::error::InitError;
use crate::player_token::{PlayerToken, TokenError};
use crate::storage;
use crate::svc_config::PlayerIdSource;

/// The file, in the SDK's data directory, that keeps the device id.
const DEVICE_ID_FILE: &str = "device_id";

/// What the game passed that a source may need.
#[derive(Debug, Clone, Copy)]
pub struct PlayerInputs<'a> {
    /// The player id passed to init.
    pub custom: Option<&'a str>,
    /// The advertising id.
    pub advertising_id: Option<&'a str>,
    /// The player's token, already read.
    pub token: Option<&'a PlayerToken>,
}

/// The player id from `source`, reading or creating the device id in `data_dir`.
pub fn resolve(
    source: PlayerIdSource,
    inputs: PlayerInputs<'_>,
    data_dir: &Path,
) -> Result<String, InitError> {
    match source {
        PlayerIdSource::Device => device_id(data_dir),
        PlayerIdSource::AdvertisingId => given(
            inputs.advertising_id,
            "advertising_id",
            "InitOptions::advertising_id",
        )
        .map(str::to_owned),
        PlayerIdSource::Custom => given(inputs.custom, "custom", "a player_id").map(str::to_owned),
        PlayerIdSource::Jwt => inputs
            .token
            .map(|token| token.subject().to_owned())
            .ok_or(InitError::PlayerToken(TokenError::Missing)),
    }
}

/// The input a source needs, or the error naming the source and what to pass.
fn given<'a>(
    input: Option<&'a str>,
    source_name: &'static str,
    needed: &'static str,
) -> Result<&'a str, InitError> {
    input.ok_or(InitError::MissingPlayerInput {
        source_name,
        needed,
    })
}

/// The install's device id, made and kept on the first call.
fn device_id(data_dir: &Path) -> Result<String, InitError> {
    let path = data_dir.join(DEVICE_ID_FILE);
    match std::fs::read_to_string(&path) {
        Ok(id) if !id.trim().is_empty() => return Ok(id.trim().to_owned()),
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(source) => return Err(InitError::DataDir { path, source }),
    }
    let id = uuid::Uuid::new_v4().to_string();
    storage::write_atomically(&path, id.as_bytes())
        .map_err(|source| InitError::DataDir { path, source })?;
    Ok(id)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn none() -> PlayerInputs<'static> {
        PlayerInputs {
            custom: None,
            advertising_id: None,
            token: None,
        }
    }

    #[test]
    fn the_device_id_is_made_once_and_kept() {
        let dir = std::env::temp_dir().join(format!("offer-sdk-id-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&dir).expect("dir");
        let first = resolve(PlayerIdSource::Device, none(), &dir).expect("id");
        let again = resolve(PlayerIdSource::Device, none(), &dir).expect("id");
        assert_eq!(first, again);
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn a_jwt_gives_its_subject() {
        use base64::Engine as _;
        let payload = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .encode(br#"{"sub":"player-42","exp":1}"#);
        let token =
            PlayerToken::read(&format!("eyJhbGciOiJFUzI1NiJ9.{payload}.c2ln")).expect("readable");
        let inputs = PlayerInputs {
            token: Some(&token),
            ..none()
        };
        let dir = std::env::temp_dir();
        assert_eq!(
            resolve(PlayerIdSource::Jwt, inputs, &dir).expect("sub"),
            "player-42"
        );
    }

    #[test]
    fn a_source_without_its_input_is_refused() {
        let dir = std::env::temp_dir();
        for source in [PlayerIdSource::AdvertisingId, PlayerIdSource::Custom] {
            assert!(matches!(
                resolve(source, none(), &dir),
                Err(InitError::MissingPlayerInput { .. })
            ));
        }
        assert!(matches!(
            resolve(PlayerIdSource::Jwt, none(), &dir),
            Err(InitError::PlayerToken(TokenError::Missing))
        ));
    }
}
