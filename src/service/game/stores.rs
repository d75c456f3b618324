//! A game's store settings: receipt verification, each store's identifiers, and the secret of
//! the Google Play notification URL. Stored as one document of the game's configuration,
//! changed through [`Services::commit`] so every node's game actor (and the purchase path
//! reading its view) follows; the rules of the fields are the domain's
//! (`offer_domain::store_settings`), the Google Play key's check is [`check_google_public_key`].
//!
//! Writes are a compare-and-swap on the stored document, so an admin's save on one node and
//! a token rotation on another never overwrite each other; each lands with its audit record
//! in one atomic store step.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chrono::Utc;
use offer_actors::{GameChange, GameHandle};
use offer_domain::audit::{ChangedBy, ObjectRef};
use offer_domain::store_settings::{NotificationToken, StoreSettings, StoreSettingsInput};
use subtle::ConstantTimeEq;
use uuid::Uuid;

use crate::config::Settings;
use crate::service::audit::{Audit, Recorded, Watched};
use crate::service::economy::verified_baseline;
use crate::service::write::Committed;
use crate::service::{ServiceError, ServiceResult, Services};
use crate::store::Collection;
use crate::store::codec::{decode, encode};

/// The id of the store settings in the game's configuration collection.
const DOCUMENT: &str = "stores";

/// Attempts of a write racing another node's write of the same settings.
const ATTEMPTS: usize = 5;

fn collection(game_id: Uuid) -> Collection {
    Collection::game(game_id, "config")
}

/// The stored settings of a game: verification `off` and no store while never saved.
pub async fn load(state: &Services, game_id: Uuid) -> ServiceResult<StoreSettings> {
    match state.store.get(collection(game_id), DOCUMENT).await? {
        Some(bytes) => Ok(decode(&bytes)?),
        None => Ok(StoreSettings::default()),
    }
}

/// Replaces the settings with an admin's `input` (all checked first: nothing is written when
/// any field is refused). The first save makes the Google Play notification token.
pub async fn put(
    state: &Services,
    by: &ChangedBy,
    handle: &GameHandle,
    input: StoreSettingsInput,
) -> ServiceResult<StoreSettings> {
    if let Some(google) = &input.google_play
        && let Err(reason) = check_google_public_key(&google.public_key)
    {
        return Err(ServiceError::invalid("google_play.public_key", reason));
    }
    let before = handle.view().stores.verified_since;
    let audit = audit_of(handle, "store_settings.put");
    let recorded = Recorded::new(&*state.store, by, audit)?;
    let settings = change(state, handle, &recorded, |current| {
        let mut next = current
            .replaced(input.clone(), Utc::now())
            .map_err(ServiceError::Validation)?;
        if next.google_play_token.is_none() {
            next.google_play_token = Some(new_token());
        }
        Ok(next)
    })
    .await?;
    // A new stretch of verification: what its first day counted so far is written down, so
    // that the verified figures leave it out.
    if let Some(since) = settings.verified_since
        && before != Some(since)
    {
        verified_baseline::record(state, handle.view().game.game_id, since).await?;
    }
    Ok(settings)
}

/// Replaces the Google Play notification token: the URL with the old one stops working.
pub async fn rotate_google_play_token(
    state: &Services,
    by: &ChangedBy,
    handle: &GameHandle,
) -> ServiceResult<StoreSettings> {
    let audit = audit_of(handle, "store_settings.rotate_google_play_token");
    let recorded = Recorded::new(&*state.store, by, audit)?;
    change(state, handle, &recorded, |current| {
        Ok(StoreSettings {
            google_play_token: Some(new_token()),
            updated_at: Some(Utc::now()),
            ..current.clone()
        })
    })
    .await
}

/// The audit of a change of the store settings of `handle`'s game.
fn audit_of(handle: &GameHandle, action: &'static str) -> Audit {
    let game = &handle.view().game;
    Audit::of_game(
        &game.studio_id,
        game.game_id,
        action,
        ObjectRef::new("store_settings", game.game_id),
        vec![Watched::new(collection(game.game_id), DOCUMENT)],
    )
}

/// Writes `next(stored)` with its audit record (`recorded`) if the stored document did not
/// change meanwhile, else reads again.
async fn change(
    state: &Services,
    handle: &GameHandle,
    recorded: &Recorded<'_>,
    next: impl Fn(&StoreSettings) -> ServiceResult<StoreSettings>,
) -> ServiceResult<StoreSettings> {
    let game_id = handle.view().game.game_id;
    state
        .commit(handle, async || {
            let coll = collection(game_id);
            for _ in 0..ATTEMPTS {
                let stored = state.store.get(coll, DOCUMENT).await?;
                let current = match &stored {
                    Some(bytes) => decode(bytes)?,
                    None => StoreSettings::default(),
                };
                let settings = next(&current)?;
                if recorded
                    .compare_and_swap(coll, DOCUMENT, stored.as_deref(), encode(&settings)?)
                    .await?
                {
                    return Ok(Committed::changed(
                        settings.clone(),
                        GameChange::Stores(settings),
                    ));
                }
            }
            Err(ServiceError::Conflict(
                "the store settings kept changing concurrently; retry".into(),
            ))
        })
        .await
}

/// A fresh notification token: 32 random bytes, base64url without padding.
fn new_token() -> NotificationToken {
    let mut bytes = [0u8; 32];
    rand::fill(&mut bytes);
    NotificationToken::new(URL_SAFE_NO_PAD.encode(bytes))
}

/// Whether `presented` is the game's Google Play notification token, compared in constant
/// time. A game without a token accepts none.
pub fn token_matches(settings: &StoreSettings, presented: &str) -> bool {
    settings
        .google_play_token
        .as_ref()
        .is_some_and(|t| bool::from(t.expose().as_bytes().ct_eq(presented.as_bytes())))
}

/// Checks a Google Play licensing key as the receipts' verifier loads it: base64 (standard
/// alphabet, as the Play Console shows it) of the DER SubjectPublicKeyInfo of an RSA key of at
/// least 2048 bits. `Err` says why, for a 422.
pub fn check_google_public_key(base64_der: &str) -> Result<(), String> {
    offer_receipts::GoogleKey::from_base64_der(base64_der)
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// Where each store sends the game's notifications.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotificationUrls {
    /// The App Store Server Notifications URL.
    pub app_store: String,
    /// The Google Play real-time developer notifications URL: with its token for an admin,
    /// without the query for anyone else; `None` until the settings are first saved (the
    /// token does not exist before).
    pub google_play: Option<String>,
}

/// The notification URLs of `game_id` on this deployment; `reveal` shows the Google Play
/// token (admins only).
pub fn notification_urls(
    settings: &Settings,
    game_id: Uuid,
    stores: &StoreSettings,
    reveal: bool,
) -> NotificationUrls {
    let base = settings.public_base_url();
    let google = format!("{base}/v1/stores/google-play/notifications/{game_id}");
    NotificationUrls {
        app_store: format!("{base}/v1/stores/app-store/notifications/{game_id}"),
        google_play: stores.google_play_token.as_ref().map(|token| {
            if reveal {
                format!("{google}?token={}", token.expose())
            } else {
                google
            }
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 1024-bit and a 2048-bit RSA key's SubjectPublicKeyInfo, base64 (made with openssl).
    const RSA_1024: &str = include_str!("../../../tests/keys/rsa1024.b64");
    const RSA_2048: &str = include_str!("../../../tests/keys/rsa2048.b64");

    #[test]
    fn a_google_key_is_an_rsa_key_of_2048_bits_at_least() {
        assert_eq!(check_google_public_key(RSA_2048), Ok(()));
        let weak = check_google_public_key(RSA_1024).expect_err("1024 bits");
        assert!(weak.contains("2048"), "{weak}");
        assert!(check_google_public_key("not base64!").is_err());
        assert!(check_google_public_key("AAAA").is_err());
    }

    #[test]
    fn a_token_is_compared_whole() {
        let settings = StoreSettings {
            google_play_token: Some(new_token()),
            ..StoreSettings::default()
        };
        let token = settings
            .google_play_token
            .as_ref()
            .expect("a token")
            .expose()
            .to_owned();
        assert_eq!(token.len(), 43, "32 bytes of base64url");
        assert!(token_matches(&settings, &token));
        assert!(!token_matches(&settings, &token[..42]));
        assert!(!token_matches(&StoreSettings::default(), ""));
    }
}
