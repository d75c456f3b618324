//! The player's signed token, for games whose player identity is `required`: a JWT the
//! studio's backend signs for one player, which the SDK sends when the session opens (REST
//! and the WebSocket's `hello`) and with every event batch.
//!
//! The SDK never verifies a token (it holds no key, and needs none): it reads the payload's
//! `sub` (the player id) and `exp` (when to ask for a new one), and the engine judges the
//! rest. Renewal works in two ways, both through the game's token callback
//! ([`crate::SdkCallback::PlayerTokenNeeded`]), which the game answers with
//! [`crate::Sdk::set_player_token`]:
//!
//! - **Ahead of expiry**: when the SDK is about to send a token whose `exp` is less than the
//!   refresh margin away, it asks once for that token (`expiring`). A token still valid is
//!   sent meanwhile; one already past its `exp` waits for the game's answer, at most the
//!   token wait, and is then tried anyway (the device's clock may be wrong, and the engine
//!   allows a minute of skew).
//! - **On refusal**: when the engine refuses the token (401 `player_token_*`, or the same code
//!   answering `hello`), the SDK asks (`refused`, with the engine's code and message), sends
//!   that token no more, and resumes what failed (the session, the batch) with the next one.

use std::sync::Mutex;
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use tokio::sync::watch;

pub use crate::callback::Refusal;
use crate::callback::SdkCallback;
use serde::Deserialize;

/// The longest token the SDK sends: the engine reads no longer token (a token of an RSA-4096
/// key is under 1 KiB).
pub(crate) const MAX_TOKEN_BYTES: usize = 8192;

/// Why a token was not taken by the SDK itself (before the engine sees it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    /// The source `jwt` was configured, and no token was given.
    #[error("player_id_source jwt needs a player_token, which the game did not pass")]
    Missing,
    /// Not a JWT whose payload has a string `sub`.
    #[error("the player token is not a JWT with a string `sub` claim ({0})")]
    Unreadable(&'static str),
    /// Longer than the engine reads.
    #[error("the player token is longer than {MAX_TOKEN_BYTES} bytes")]
    TooLong,
    /// A token of another player than the session's.
    #[error("the player token names another player than the session's")]
    OtherPlayer,
}

/// A token as the SDK reads it: its text, its `sub` and its `exp` (Unix seconds, when given).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlayerToken {
    text: String,
    subject: String,
    expires_at: Option<i64>,
}

impl PlayerToken {
    /// Reads `text`'s payload, without verifying the signature.
    pub fn read(text: &str) -> Result<Self, TokenError> {
        if text.len() > MAX_TOKEN_BYTES {
            return Err(TokenError::TooLong);
        }
        if !text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'='))
        {
            return Err(TokenError::Unreadable("not base64url parts"));
        }
        let payload = text
            .split('.')
            .nth(1)
            .ok_or(TokenError::Unreadable("not three dot-separated parts"))?;
        let bytes = URL_SAFE_NO_PAD
            .decode(payload.trim_end_matches('='))
            .map_err(|_| TokenError::Unreadable("the payload is not base64url"))?;
        let claims: serde_json::Value = serde_json::from_slice(&bytes)
            .map_err(|_| TokenError::Unreadable("the payload is not JSON"))?;
        let subject = match claims.get("sub").and_then(serde_json::Value::as_str) {
            Some(sub) if !sub.is_empty() => sub.to_owned(),
            _ => return Err(TokenError::Unreadable("no string `sub`")),
        };
        Ok(Self {
            text: text.to_owned(),
            subject,
            expires_at: claims.get("exp").and_then(serde_json::Value::as_i64),
        })
    }

    /// The player id the token names.
    pub fn subject(&self) -> &str {
        &self.subject
    }

    /// The token as sent.
    pub fn text(&self) -> &str {
        &self.text
    }
}

/// The token the SDK holds now, numbered: each token the game gives is a new generation, so a
/// refusal of an older one (a batch that raced the new token) refuses nothing current.
#[derive(Debug, Clone, Default)]
struct Held {
    token: Option<PlayerToken>,
    generation: u64,
    /// The generation the SDK last asked a new token for.
    asked: Option<u64>,
    /// The engine's refusal of this generation's token.
    refused: Option<Refusal>,
}

/// The token to send, with its generation (for [`Tokens::refused`]).
#[derive(Debug, Clone)]
pub struct InUse {
    /// The token's text; `None` while the game gave none (a game whose identity is `none`).
    pub text: Option<String>,
    generation: u64,
}

/// The player's token shared by the game's thread (which sets it) and the SDK's (which sends
/// it and asks for new ones).
#[derive(Debug)]
pub struct Tokens {
    held: watch::Sender<Held>,
    /// Serialises the decisions to ask, so the session and the telemetry sender ask once.
    asking: Mutex<()>,
    /// How long before `exp` the SDK asks for a new token.
    margin: Duration,
    /// How long a token past its `exp` waits for the game's answer before it is tried anyway.
    wait: Duration,
}

impl Tokens {
    /// Holds `token` (the one given at init, if any).
    pub fn new(token: Option<PlayerToken>, margin: Duration, wait: Duration) -> Self {
        Self {
            held: watch::channel(Held {
                token,
                ..Held::default()
            })
            .0,
            asking: Mutex::new(()),
            margin,
            wait,
        }
    }

    /// Holds `token` from now on, for the player `player` when one is logged in (a session
    /// belongs to one player: a token of another is refused).
    pub fn set(&self, token: PlayerToken, player: Option<&str>) -> Result<(), TokenError> {
        if player.is_some_and(|p| p != token.subject()) {
            return Err(TokenError::OtherPlayer);
        }
        self.held.send_modify(|held| {
            held.token = Some(token);
            held.generation += 1;
            held.refused = None;
        });
        Ok(())
    }

    /// The engine's refusal of the token now held, if it refused it.
    pub fn refusal(&self) -> Option<Refusal> {
        self.held.borrow().refused.clone()
    }

    /// The token to send now. A token the engine refused is never sent again: this waits for
    /// the next. One about to expire is asked a renewal for (once), and one already expired
    /// waits up to the token wait for it. `emit` tells the game.
    pub async fn for_use(&self, emit: impl Fn(SdkCallback)) -> InUse {
        let mut changes = self.held.subscribe();
        // A refused token: wait for another (the game was asked when it was refused).
        loop {
            let refused = changes.borrow_and_update().refused.is_some();
            if !refused {
                break;
            }
            if changes.changed().await.is_err() {
                break;
            }
        }
        let (generation, expires_at) = {
            let held = changes.borrow_and_update();
            let Some(token) = &held.token else {
                return InUse {
                    text: None,
                    generation: held.generation,
                };
            };
            (held.generation, token.expires_at)
        };
        if let Some(exp) = expires_at {
            let now = chrono::Utc::now().timestamp();
            let margin = i64::try_from(self.margin.as_secs()).unwrap_or(i64::MAX);
            if now.saturating_add(margin) >= exp {
                self.ask(generation, "expiring", None, &emit);
                if now >= exp {
                    let _ = tokio::time::timeout(self.wait, changes.changed()).await;
                }
            }
        }
        let held = self.held.borrow();
        InUse {
            text: held.token.as_ref().map(|t| t.text.clone()),
            generation: held.generation,
        }
    }

    /// Records that the engine refused the token of `used` (when it is still the one held) and
    /// asks the game for another.
    pub fn refused(&self, used: &InUse, refusal: Refusal, emit: impl Fn(SdkCallback)) {
        let current = self.held.send_if_modified(|held| {
            if held.generation != used.generation || held.refused.is_some() {
                return false;
            }
            held.refused = Some(refusal.clone());
            true
        });
        if current {
            emit(SdkCallback::Error {
                code: refusal.code.clone(),
                message: refusal.message.clone(),
            });
            self.ask(used.generation, "refused", Some(refusal), &emit);
        }
    }

    /// Asks the game for a new token, once per generation.
    fn ask(
        &self,
        generation: u64,
        reason: &str,
        refusal: Option<Refusal>,
        emit: &impl Fn(SdkCallback),
    ) {
        let _one = self
            .asking
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let (first, held) = {
            let mut first = false;
            self.held.send_if_modified(|held| {
                if held.generation == generation && held.asked != Some(generation) {
                    held.asked = Some(generation);
                    first = true;
                }
                false
            });
            (first, self.held.borrow().clone())
        };
        if !first {
            return;
        }
        emit(SdkCallback::PlayerTokenNeeded {
            reason: reason.to_owned(),
            player_id: held.token.as_ref().map(|t| t.subject.clone()),
            expires_at: held.token.as_ref().and_then(|t| t.expires_at),
            refusal,
        });
    }
}

/// The engine's error body, the parts the SDK reads.
#[derive(Debug, Deserialize)]
struct ErrorBody {
    error: ErrorDetail,
}

/// `{"code", "message"}` of an error body.
#[derive(Debug, Deserialize)]
struct ErrorDetail {
    code: String,
    message: String,
}

/// The refusal of the player token a 401 answer carries, if that is what it refuses.
pub async fn token_refusal(response: reqwest::Response) -> Option<Refusal> {
    if response.status() != reqwest::StatusCode::UNAUTHORIZED {
        return None;
    }
    let body: ErrorBody = response.json().await.ok()?;
    Refusal::of(&body.error.code, &body.error.message)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn token(claims: &str) -> String {
        format!(
            "eyJhbGciOiJFUzI1NiJ9.{}.c2ln",
            URL_SAFE_NO_PAD.encode(claims)
        )
    }

    #[test]
    fn a_token_gives_its_subject_and_expiry_unverified() {
        let read = PlayerToken::read(&token(r#"{"sub":"p1","exp":1700000000}"#)).expect("read");
        assert_eq!(read.subject(), "p1");
        assert_eq!(read.expires_at, Some(1_700_000_000));
        for bad in [
            "nope",
            "a.!!!.c",
            "a\".e30.c",
            &token(r#"{"exp":1}"#),
            &token("[1]"),
        ] {
            assert!(matches!(
                PlayerToken::read(bad),
                Err(TokenError::Unreadable(_))
            ));
        }
        let long = token(&format!(r#"{{"sub":"{}"}}"#, "p".repeat(MAX_TOKEN_BYTES)));
        assert_eq!(PlayerToken::read(&long), Err(TokenError::TooLong));
    }

    #[test]
    fn a_token_of_another_player_is_not_held() {
        let tokens = Tokens::new(None, Duration::ZERO, Duration::ZERO);
        let other = PlayerToken::read(&token(r#"{"sub":"p2"}"#)).expect("read");
        assert_eq!(tokens.set(other, Some("p1")), Err(TokenError::OtherPlayer));
    }

    #[tokio::test]
    async fn an_expiring_token_is_asked_for_once_and_a_refused_one_waits_for_the_next() {
        let now = chrono::Utc::now().timestamp();
        let first = PlayerToken::read(&token(&format!(r#"{{"sub":"p","exp":{}}}"#, now + 30)))
            .expect("read");
        let tokens = Tokens::new(
            Some(first),
            Duration::from_secs(60),
            Duration::from_millis(1),
        );
        let asked = std::sync::Mutex::new(Vec::new());
        let emit = |c: SdkCallback| asked.lock().expect("asked").push(c);
        let used = tokens.for_use(emit).await;
        assert!(used.text.is_some());
        tokens.for_use(emit).await;
        let reasons: Vec<String> = asked
            .lock()
            .expect("asked")
            .iter()
            .filter_map(|c| match c {
                SdkCallback::PlayerTokenNeeded { reason, .. } => Some(reason.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(reasons, ["expiring"]);

        let refusal = Refusal::of("player_token_invalid", "player_token invalid (expired)");
        tokens.refused(&used, refusal.expect("a token refusal"), emit);
        assert!(tokens.refusal().is_some());
        let next = PlayerToken::read(&token(&format!(r#"{{"sub":"p","exp":{}}}"#, now + 900)))
            .expect("read");
        // The refused token is not sent again: the wait ends with the next one.
        let (waited, ()) = tokio::join!(tokens.for_use(emit), async {
            tokio::task::yield_now().await;
            tokens.set(next.clone(), Some("p")).expect("same player");
        });
        assert_eq!(waited.text.as_deref(), Some(next.text()));
        assert!(tokens.refusal().is_none());
        assert!(Refusal::of("bad_message", "x").is_none());
    }
}
