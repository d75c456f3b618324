//! A game's player identity: its settings (`GET`/`PUT .../player-auth`), stored as one document
//! of the game's configuration and changed through [`Services::commit`] so every node's game
//! actor follows (with its audit record in the same atomic store step); and the check of a
//! player token when a session opens, and on every REST call that names an open session.
//!
//! A player token is a JWT the studio's backend signs for one player: `sub` the player id,
//! `aud` the game id, `exp` at most 24 hours after now and `iat`. Each key fixes its algorithm
//! (a P-256 key ES256, an RSA key RS256), so a token naming another algorithm (`none`, or
//! HS256 with a public key as the secret) is never tried against it. Times are judged with a
//! 60-second skew either way.

use chrono::Utc;
use jsonwebtoken::{Algorithm, DecodingKey, Validation, decode, decode_header};
use offer_actors::{GameChange, GameHandle, SessionHandle};
use offer_domain::audit::{ChangedBy, ObjectRef};
use offer_domain::player_auth::{PlayerAuth, PlayerAuthMode};
use serde::Deserialize;
use uuid::Uuid;

use crate::service::audit::{Audit, Recorded, Watched};
use crate::service::refusals::PlayerTokenRefusal;
use crate::service::write::Committed;
use crate::service::{ServiceError, ServiceResult, Services};
use crate::store::Collection;
use crate::store::codec::{decode as decode_doc, encode};

/// The document's id in the game's configuration collection.
const DOCUMENT: &str = "player_auth";

/// Clock skew allowed each way, in seconds.
const SKEW_S: i64 = 60;

/// Longest `exp` ahead of now a token may carry, in seconds: a day.
const MAX_LIFETIME_S: i64 = 24 * 3600;

/// Longest token read, in bytes (a token of an RSA-4096 key is under 1 KiB).
const MAX_TOKEN_LEN: usize = 8192;

fn collection(game_id: Uuid) -> Collection {
    Collection::game(game_id, "config")
}

/// The stored settings of a game: `none` while never saved.
pub async fn load(state: &Services, game_id: Uuid) -> ServiceResult<PlayerAuth> {
    match state.store.get(collection(game_id), DOCUMENT).await? {
        Some(bytes) => Ok(decode_doc(&bytes)?),
        None => Ok(PlayerAuth::default()),
    }
}

/// Replaces the settings with an admin's (every field checked first, each key read: nothing
/// is written when any is refused).
pub async fn put(
    state: &Services,
    by: &ChangedBy,
    handle: &GameHandle,
    input: PlayerAuth,
) -> ServiceResult<PlayerAuth> {
    input.validate().map_err(ServiceError::Validation)?;
    for (i, key) in input.keys.iter().enumerate() {
        if read_key(key).is_none() {
            return Err(ServiceError::Validation(vec![
                offer_domain::validation::FieldError::new(
                    "keys",
                    "not a P-256 (ES256) or RSA (RS256) public key in PEM",
                )
                .at(i),
            ]));
        }
    }
    let game_id = handle.view().game.game_id;
    let audit = Audit::of_game(
        &handle.view().game.studio_id,
        game_id,
        "player_auth.put",
        ObjectRef::new("player_auth", game_id),
        vec![Watched::new(collection(game_id), DOCUMENT)],
    );
    let recorded = Recorded::new(&*state.store, by, audit)?;
    state
        .commit(handle, async || {
            recorded
                .put_all(
                    collection(game_id),
                    vec![(DOCUMENT.to_owned(), encode(&input)?)],
                )
                .await?;
            Ok(Committed::changed(
                input.clone(),
                GameChange::PlayerAuth(input.clone()),
            ))
        })
        .await
}

/// A key's algorithm and its verifying key: a P-256 key verifies ES256, an RSA key RS256.
fn read_key(pem: &str) -> Option<(Algorithm, DecodingKey)> {
    if let Ok(key) = DecodingKey::from_ec_pem(pem.as_bytes()) {
        return Some((Algorithm::ES256, key));
    }
    DecodingKey::from_rsa_pem(pem.as_bytes())
        .ok()
        .map(|key| (Algorithm::RS256, key))
}

/// The claims a player token must carry.
#[derive(Deserialize)]
struct Claims {
    sub: String,
    exp: i64,
    iat: i64,
}

/// The player a session of `game_id` may open as, under `auth`: in `none`, the one asked for;
/// in `required`, the `sub` of `token` once a key of the game verifies it, which must be the
/// one asked for.
pub fn check(
    auth: &PlayerAuth,
    game_id: Uuid,
    player_id: &str,
    token: Option<&str>,
) -> Result<(), PlayerTokenRefusal> {
    if auth.mode == PlayerAuthMode::None {
        return Ok(());
    }
    let token = token.ok_or(PlayerTokenRefusal::Required)?;
    let sub = verify(auth, game_id, token, Utc::now().timestamp())?;
    if sub == player_id {
        Ok(())
    } else {
        Err(PlayerTokenRefusal::OtherPlayer)
    }
}

/// Whether a call naming an open session may act for it: always in `none`; in `required`,
/// only with a token of the session's own player. A session id is not a secret (the client
/// chose it, and it travels in logs), so a game that requires identity asks every REST call
/// for the token again; a socket proved its player once, at `hello`.
pub fn prove_session(
    game: &GameHandle,
    session: &SessionHandle,
    token: Option<&str>,
) -> ServiceResult<()> {
    let view = game.view();
    check(
        &view.player_auth,
        view.game.game_id,
        &session.info().player_id,
        token,
    )
    .map_err(ServiceError::PlayerToken)
}

/// The `sub` of `token` at Unix time `now`, once one of `auth`'s keys verifies it.
fn verify(
    auth: &PlayerAuth,
    game_id: Uuid,
    token: &str,
    now: i64,
) -> Result<String, PlayerTokenRefusal> {
    if token.len() > MAX_TOKEN_LEN {
        return Err(PlayerTokenRefusal::Malformed);
    }
    // The algorithm is judged on the header's own text first, so that one the JWT library
    // does not even know (`none`) reads as refused for its algorithm, not as malformed.
    match header_alg(token).as_deref() {
        Some("ES256" | "RS256") => {}
        Some(_) => return Err(PlayerTokenRefusal::Algorithm),
        None => return Err(PlayerTokenRefusal::Malformed),
    }
    let header = decode_header(token).map_err(|_| PlayerTokenRefusal::Malformed)?;
    let mut refusal = PlayerTokenRefusal::UnknownKey;
    for (alg, key) in auth.keys.iter().filter_map(|pem| read_key(pem)) {
        if alg != header.alg {
            continue;
        }
        let mut validation = Validation::new(alg);
        validation.set_audience(&[game_id.to_string()]);
        validation.set_required_spec_claims(&["exp", "iat", "sub", "aud"]);
        validation.leeway = SKEW_S.unsigned_abs();
        match decode::<Claims>(token, &key, &validation) {
            Ok(data) => {
                let claims = data.claims;
                if claims.exp > now + MAX_LIFETIME_S + SKEW_S {
                    return Err(PlayerTokenRefusal::TooLongLived);
                }
                if claims.iat > now + SKEW_S {
                    return Err(PlayerTokenRefusal::NotYetValid);
                }
                return Ok(claims.sub);
            }
            Err(err) => {
                use jsonwebtoken::errors::ErrorKind;
                match err.kind() {
                    // Another key of the same algorithm may have signed it.
                    ErrorKind::InvalidSignature => {}
                    ErrorKind::ExpiredSignature => return Err(PlayerTokenRefusal::Expired),
                    ErrorKind::InvalidAudience => return Err(PlayerTokenRefusal::OtherGame),
                    ErrorKind::ImmatureSignature => return Err(PlayerTokenRefusal::NotYetValid),
                    _ => refusal = PlayerTokenRefusal::Malformed,
                }
            }
        }
    }
    Err(refusal)
}

/// The `alg` of a JWT's header, as written; `None` when the header does not read.
fn header_alg(token: &str) -> Option<String> {
    use base64::Engine as _;
    let header = token.split('.').next()?;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(header)
        .ok()?;
    let value: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
    value.get("alg")?.as_str().map(str::to_owned)
}
