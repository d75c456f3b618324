//! The configuration JSON of `SVC_Init`: the SDK configuration (`api_key`, `game_id`,
//! `environment`, `base_url`) plus the keys a C game has no other way to pass: `data_dir`,
//! `player_id`, `session_id`, `advertising_id` and `player_token` (`player_jwt`, its older
//! name, is read too), each optional. They are taken out here; the rest is checked as
//! [`crate::SdkConfig`] is everywhere else, so an unknown key is still refused.

use std::path::PathBuf;

use serde_json::{Map, Value};
use uuid::Uuid;

use super::result::{SVC_ERR_INVALID_CONFIG, SVC_Result};
use crate::options::InitOptions;

/// The data directory when the configuration names none: `offer_sdk` in the process's
/// working directory. It must hold the game's `svc_config.json`.
const DEFAULT_DATA_DIR: &str = "offer_sdk";

/// `SVC_Init`'s configuration, split into what [`crate::Sdk::init`] takes.
#[derive(Debug)]
pub(super) struct InitConfig {
    /// The SDK configuration JSON, without the keys below.
    pub sdk_json: String,
    /// The game's own player id (for `player_id_source: custom`).
    pub player_id: Option<String>,
    /// The session's id, when the game chose it (a new one is made otherwise).
    pub session_id: Option<Uuid>,
    /// Where the SDK keeps its files and reads `svc_config.json`.
    pub options: InitOptions,
}

/// Splits `json`; [`SVC_ERR_INVALID_CONFIG`] when it is no JSON object, or one of the keys
/// taken here is neither a string nor null (or `data_dir` is empty, or `session_id` no UUID,
/// or both `player_token` and `player_jwt` are given).
pub(super) fn parse(json: &str) -> Result<InitConfig, SVC_Result> {
    let mut map: Map<String, Value> =
        serde_json::from_str(json).map_err(|_| SVC_ERR_INVALID_CONFIG)?;
    let mut take = |key: &str| match map.remove(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) => Ok(Some(text)),
        Some(_) => Err(SVC_ERR_INVALID_CONFIG),
    };
    let data_dir = match take("data_dir")? {
        Some(dir) if dir.is_empty() => return Err(SVC_ERR_INVALID_CONFIG),
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(DEFAULT_DATA_DIR),
    };
    let player_id = take("player_id")?;
    let session_id = take("session_id")?
        .map(|id| Uuid::parse_str(&id).map_err(|_| SVC_ERR_INVALID_CONFIG))
        .transpose()?;
    let mut options = InitOptions::new(data_dir.clone(), data_dir);
    options.advertising_id = take("advertising_id")?;
    options.player_token = match (take("player_token")?, take("player_jwt")?) {
        (Some(_), Some(_)) => return Err(SVC_ERR_INVALID_CONFIG),
        (token, older) => token.or(older),
    };
    Ok(InitConfig {
        sdk_json: Value::Object(map).to_string(),
        player_id,
        session_id,
        options,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = r#""api_key": "ofr_live_sk_abc", "game_id": "6f9c2d1e-4b7a-4c2e-9d3f-1a2b3c4d5e6f", "environment": "production", "base_url": "http://127.0.0.1:1""#;

    #[test]
    fn the_init_keys_are_taken_out_and_the_rest_is_the_sdk_configuration() {
        let parsed = parse(&format!(
            r#"{{{BASE}, "data_dir": "/tmp/game", "player_id": "player_0", "advertising_id": "ad-1", "player_token": null, "session_id": "0b7e8f6a-3c2d-4e1f-8a9b-7c6d5e4f3a2b"}}"#
        ))
        .expect("valid");
        assert_eq!(parsed.player_id.as_deref(), Some("player_0"));
        assert_eq!(
            parsed.session_id.map(|id| id.to_string()).as_deref(),
            Some("0b7e8f6a-3c2d-4e1f-8a9b-7c6d5e4f3a2b")
        );
        assert_eq!(parsed.options.data_dir, PathBuf::from("/tmp/game"));
        assert_eq!(parsed.options.svc_config_dir, PathBuf::from("/tmp/game"));
        assert_eq!(parsed.options.advertising_id.as_deref(), Some("ad-1"));
        assert_eq!(parsed.options.player_token, None);
        let older = parse(&format!(r#"{{{BASE}, "player_jwt": "a.b.c"}}"#)).expect("valid");
        assert_eq!(older.options.player_token.as_deref(), Some("a.b.c"));
        crate::SdkConfig::parse(&parsed.sdk_json).expect("the SDK configuration alone");
    }

    #[test]
    fn without_the_init_keys_the_defaults_apply() {
        let parsed = parse(&format!("{{{BASE}}}")).expect("valid");
        assert_eq!(parsed.player_id, None);
        assert_eq!(parsed.session_id, None);
        assert_eq!(parsed.options.data_dir, PathBuf::from(DEFAULT_DATA_DIR));
    }

    #[test]
    fn a_key_of_the_wrong_kind_or_no_object_is_invalid() {
        for bad in [
            format!(r#"{{{BASE}, "data_dir": 7}}"#),
            format!(r#"{{{BASE}, "data_dir": ""}}"#),
            format!(r#"{{{BASE}, "player_id": ["p"]}}"#),
            format!(r#"{{{BASE}, "session_id": "not-a-uuid"}}"#),
            format!(r#"{{{BASE}, "player_token": "a.b.c", "player_jwt": "a.b.c"}}"#),
            "[]".to_owned(),
            "{not json".to_owned(),
        ] {
            assert_eq!(parse(&bad).err(), Some(SVC_ERR_INVALID_CONFIG), "{bad}");
        }
    }
}
