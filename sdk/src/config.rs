//! The SDK configuration the game passes to init: the key, the game, the environment and the
//! engine's address, with the key's kind checked against the environment.

use offer_domain::environment::Environment;
use serde::Deserialize;
use uuid::Uuid;

use crate::error::InitError;

/// The configuration JSON of `init`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SdkConfig {
    /// The game's SDK key: `..._live_sk_...` for production, `..._test_sk_...` for sandbox.
    pub api_key: String,
    /// The game the key belongs to.
    pub game_id: Uuid,
    /// `production` or `sandbox`; it must match the key's kind.
    pub environment: Environment,
    /// The engine's address, for example `https://engine.example.com` (no trailing path).
    pub base_url: String,
}

impl SdkConfig {
    /// Reads the configuration and checks it: a key of the other environment, a key that
    /// is no SDK key, or a base URL that is not HTTP(S) is refused.
    pub fn parse(json: &str) -> Result<Self, InitError> {
        let mut config: Self = serde_json::from_str(json).map_err(InitError::Config)?;
        let key_env = key_environment(&config.api_key).ok_or(InitError::NotAnSdkKey)?;
        if key_env != config.environment {
            return Err(InitError::EnvironmentMismatch {
                key: name(key_env),
                configured: name(config.environment),
            });
        }
        if !(config.base_url.starts_with("http://") || config.base_url.starts_with("https://")) {
            return Err(InitError::BaseUrl(config.base_url));
        }
        config.base_url = config.base_url.trim_end_matches('/').to_owned();
        Ok(config)
    }

    /// The URL of a REST path on the engine (`path` starts with `/`).
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base_url)
    }

    /// The URL of the SDK WebSocket (`ws://` or `wss://` for the base URL's scheme).
    pub fn ws_url(&self) -> String {
        let rest = self
            .base_url
            .strip_prefix("https://")
            .map(|r| format!("wss://{r}"))
            .or_else(|| {
                self.base_url
                    .strip_prefix("http://")
                    .map(|r| format!("ws://{r}"))
            })
            .unwrap_or_else(|| self.base_url.clone());
        format!("{rest}/v1/sdk/ws")
    }
}

/// The environment an SDK key opens sessions in, read from its kind marker; `None` for a
/// token that is no SDK key.
fn key_environment(key: &str) -> Option<Environment> {
    if key.contains("_live_sk_") {
        Some(Environment::Production)
    } else if key.contains("_test_sk_") {
        Some(Environment::Sandbox)
    } else {
        None
    }
}

/// The environment's name as the configuration spells it.
fn name(env: Environment) -> &'static str {
    match env {
        Environment::Production => "production",
        Environment::Sandbox => "sandbox",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json(key: &str, env: &str) -> String {
        format!(
            r#"{{"api_key": "{key}", "game_id": "6f9c2d1e-4b7a-4c2e-9d3f-1a2b3c4d5e6f",
                "environment": "{env}", "base_url": "http://127.0.0.1:8080/"}}"#
        )
    }

    #[test]
    fn a_key_of_the_configured_environment_is_accepted() {
        let c = SdkConfig::parse(&json("ofr_live_sk_abc", "production")).expect("ok");
        assert_eq!(c.base_url, "http://127.0.0.1:8080");
        assert_eq!(c.ws_url(), "ws://127.0.0.1:8080/v1/sdk/ws");
        SdkConfig::parse(&json("ofr_test_sk_abc", "sandbox")).expect("ok");
    }

    #[test]
    fn a_key_of_the_other_environment_or_no_sdk_key_is_refused() {
        assert!(matches!(
            SdkConfig::parse(&json("ofr_test_sk_abc", "production")),
            Err(InitError::EnvironmentMismatch { .. })
        ));
        assert!(matches!(
            SdkConfig::parse(&json("ofr_live_sk_abc", "sandbox")),
            Err(InitError::EnvironmentMismatch { .. })
        ));
        assert!(matches!(
            SdkConfig::parse(&json("ofr_live_ak_abc", "production")),
            Err(InitError::NotAnSdkKey)
        ));
        assert!(matches!(SdkConfig::parse("{}"), Err(InitError::Config(_))));
    }
}
