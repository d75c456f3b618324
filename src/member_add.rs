//! `offer-engine member add`: adds a studio member straight to the configured store, the way
//! to make a studio's first admin (later members are added by an admin, in the dashboard or
//! with `POST /v1/studio/members`). The password is read from `OFFER_MEMBER_PASSWORD`, or
//! else from the first line of standard input, never from the command line (where other users
//! of the machine could read it).
//!
//! The embedded store's file is written, so the engine that owns it must be stopped first (its
//! lock refuses a second writer); on Redis the engines keep running.

use offer_domain::audit::{Actor, ChangedBy, Via};
use std::io::BufRead;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use crate::auth::Role;
use crate::config::{ConfigError, Settings};
use crate::error::ApiError;
use crate::service::studio::members::{self, Member, NewMember};
use crate::store::redis::RedisStore;
use crate::store::sqlite::SqliteStore;
use crate::store::{SharedStore, StoreError};

/// The environment variable the password may come from.
pub const PASSWORD_VAR: &str = "OFFER_MEMBER_PASSWORD";

/// Why a member could not be added.
#[derive(Debug, thiserror::Error)]
pub enum MemberAddError {
    /// Bad configuration.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The store cannot be opened.
    #[error(
        "store: {0} (stop the engine that owns the store file, or add the member with POST /v1/studio/members)"
    )]
    Store(#[from] StoreError),
    /// No password given.
    #[error("reading the password: {0}")]
    Password(String),
    /// The member was refused (a taken email, a short password).
    #[error("{message}")]
    Refused {
        /// What was wrong, in the API's words.
        message: String,
    },
}

/// Adds the member and returns it. Runs its own small runtime: call it from the binary's main
/// thread.
pub fn run(
    config: Option<&Path>,
    studio: &str,
    email: &str,
    role: Role,
) -> Result<Member, MemberAddError> {
    let settings = Settings::load(config)?;
    let password = read_password()?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| MemberAddError::Config(ConfigError(e.to_string())))?;
    runtime.block_on(async {
        let store = open(&settings).await?;
        let new = NewMember {
            email: email.to_owned(),
            password,
            role,
        };
        let by = ChangedBy {
            actor: Actor::Operator("cli".to_owned()),
            via: Via::Cli,
        };
        members::add(store.as_ref(), studio, new, &by)
            .await
            .map_err(|e| {
                let body = ApiError::Service(e).body();
                let fields = body.error.details.get("errors").map(ToString::to_string);
                MemberAddError::Refused {
                    message: match fields {
                        Some(f) => format!("{}: {f}", body.error.message),
                        None => body.error.message,
                    },
                }
            })
    })
}

/// The password: the environment variable, else standard input's first line.
fn read_password() -> Result<String, MemberAddError> {
    if let Ok(pw) = std::env::var(PASSWORD_VAR) {
        return Ok(pw);
    }
    let mut line = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut line)
        .map_err(|e| MemberAddError::Password(e.to_string()))?;
    let pw = line.trim_end_matches(['\r', '\n']).to_owned();
    if pw.is_empty() {
        return Err(MemberAddError::Password(format!(
            "none given: set {PASSWORD_VAR} or pipe it on standard input"
        )));
    }
    Ok(pw)
}

/// The configured store, for writing.
async fn open(settings: &Settings) -> Result<SharedStore, MemberAddError> {
    let store = &settings.store;
    if !store.redis_url.is_empty() {
        let timeout = Duration::from_millis(store.timeout_ms);
        let redis = RedisStore::connect(&store.redis_url, &store.key_prefix, timeout).await?;
        return Ok(Arc::new(redis));
    }
    if store.in_memory() {
        return Err(ConfigError(
            "store.path is `:memory:`: a member added there would be lost at once".into(),
        )
        .into());
    }
    let options = crate::startup::sqlite_options(store);
    let sqlite = tokio::task::spawn_blocking(move || SqliteStore::open(&options))
        .await
        .map_err(|e| StoreError::Unavailable(format!("opening the store: {e}")))??;
    Ok(Arc::new(sqlite))
}
