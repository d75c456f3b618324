//! How the player id is resolved from the source `svc_config.json` names:
//!
//! - `device`: a random UUID made on the first launch and kept in `device_id` in the SDK's
//!   data directory, so the same install is the same player across launches.
//! - `advertising_id`: the platform's advertising id, which the game reads (the SDK has no
//!   platform access) and passes in [`crate::InitOptions::advertising_id`].
//! - `custom`: the game's own player id, passed to init (or to [`crate::Sdk::login`]).
//! - `jwt`: the `sub` claim of a JWT the game's backend issued, passed in
//!   [`crate::InitOptions::player_jwt`]. The token is decoded, not verified: the SDK holds no
//!   key to verify it with, and it needs none, since the id is only a label the engine keys
//!   the player's record by. It grants nothing: the engine authenticates the game by its SDK
//!   key, and a forged token only names another player id, as a custom id could.

use std::path::Path;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

use crate::error::InitError;
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
    /// The player's JWT.
    pub jwt: Option<&'a str>,
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
        PlayerIdSource::Jwt => jwt_subject(given(inputs.jwt, "jwt", "InitOptions::player_jwt")?),
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

/// The `sub` claim of a JWT's payload, decoded without verifying the signature (see the
/// module documentation for why that is enough for an id).
fn jwt_subject(token: &str) -> Result<String, InitError> {
    let payload = token
        .split('.')
        .nth(1)
        .ok_or(InitError::Jwt("not three dot-separated parts"))?;
    let bytes = URL_SAFE_NO_PAD
        .decode(payload.trim_end_matches('='))
        .map_err(|_| InitError::Jwt("the payload is not base64url"))?;
    let claims: serde_json::Value =
        serde_json::from_slice(&bytes).map_err(|_| InitError::Jwt("the payload is not JSON"))?;
    match claims.get("sub").and_then(serde_json::Value::as_str) {
        Some(sub) if !sub.is_empty() => Ok(sub.to_owned()),
        _ => Err(InitError::Jwt("no string `sub`")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn none() -> PlayerInputs<'static> {
        PlayerInputs {
            custom: None,
            advertising_id: None,
            jwt: None,
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
    fn a_jwt_gives_its_subject_without_verification() {
        let payload = URL_SAFE_NO_PAD.encode(br#"{"sub":"player-42","exp":1}"#);
        let token = format!("eyJhbGciOiJIUzI1NiJ9.{payload}.c2ln");
        let inputs = PlayerInputs {
            jwt: Some(&token),
            ..none()
        };
        let dir = std::env::temp_dir();
        assert_eq!(
            resolve(PlayerIdSource::Jwt, inputs, &dir).expect("sub"),
            "player-42"
        );
        let bad = PlayerInputs {
            jwt: Some("not-a-jwt"),
            ..none()
        };
        assert!(matches!(
            resolve(PlayerIdSource::Jwt, bad, &dir),
            Err(InitError::Jwt(_))
        ));
    }

    #[test]
    fn a_source_without_its_input_is_refused() {
        let dir = std::env::temp_dir();
        for source in [
            PlayerIdSource::AdvertisingId,
            PlayerIdSource::Custom,
            PlayerIdSource::Jwt,
        ] {
            assert!(matches!(
                resolve(source, none(), &dir),
                Err(InitError::MissingPlayerInput { .. })
            ));
        }
    }
}
