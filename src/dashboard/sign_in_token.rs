//! The sign-in form's token, signed by the server: `<expiry>.<nonce>.<mac>`, the expiry in
//! Unix seconds, a random 128-bit nonce and an HMAC-SHA-256 of both under a deployment-wide
//! secret the engine keeps in the store (so a form shown by one node signs in on another).
//!
//! A sign-in needs the token both in the form's field and in its cookie (double submit), and
//! the token must carry this deployment's signature and not be expired: a token an attacker
//! made up (any value equal in cookie and field) is refused, and so is one of another
//! deployment.

use chrono::Utc;
use hmac::{Hmac, KeyInit, Mac};
use rand::RngExt;
use sha2::Sha256;
use tokio::sync::OnceCell;

use crate::service::{ServiceError, ServiceResult, Services, studio::secrets};
use crate::store::Collection;

/// What the MAC covers besides the token's fields, so that no other signature of the
/// secret can pass for a form token.
const PURPOSE: &[u8] = b"offer-engine dashboard sign-in form\n";

/// Mints and checks sign-in form tokens; the secret is read from the store once.
#[derive(Default)]
pub struct FormTokens {
    key: OnceCell<Vec<u8>>,
}

impl FormTokens {
    /// The deployment's form secret, read (or made) at first use.
    async fn key(&self, services: &Services) -> ServiceResult<&[u8]> {
        self.key
            .get_or_try_init(|| {
                secrets::get_or_make(services, Collection::global("secrets"), "sign_in_form")
            })
            .await
            .map(Vec::as_slice)
    }

    /// A fresh token valid for `ttl_s` seconds.
    pub async fn mint(&self, services: &Services, ttl_s: u32) -> ServiceResult<String> {
        let key = self.key(services).await?;
        let expiry = Utc::now().timestamp() + i64::from(ttl_s);
        let nonce: [u8; 16] = rand::rng().random();
        let body = format!("{expiry}.{}", hex(&nonce));
        let signature = keyed(key, &body)?.finalize().into_bytes();
        Ok(format!("{body}.{}", hex(&signature)))
    }

    /// Whether `token` was minted by this deployment and has not expired.
    pub async fn verify(&self, services: &Services, token: &str) -> ServiceResult<bool> {
        let key = self.key(services).await?;
        let Some((body, signature)) = token.rsplit_once('.') else {
            return Ok(false);
        };
        let Some(expiry) = body
            .split_once('.')
            .and_then(|(expiry, _)| expiry.parse::<i64>().ok())
        else {
            return Ok(false);
        };
        let Some(signature) = unhex(signature) else {
            return Ok(false);
        };
        let signed = keyed(key, body)?.verify_slice(&signature).is_ok();
        Ok(signed && Utc::now().timestamp() <= expiry)
    }
}

/// The MAC under `key` over the purpose and `body`, ready to finish or verify.
fn keyed(key: &[u8], body: &str) -> ServiceResult<Hmac<Sha256>> {
    let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(key)
        .map_err(|e| ServiceError::Internal(format!("sign-in form key: {e}")))?;
    mac.update(PURPOSE);
    mac.update(body.as_bytes());
    Ok(mac)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Lowercase hex back to bytes; `None` for anything else.
fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| {
            text.get(i..i + 2)
                .and_then(|pair| u8::from_str_radix(pair, 16).ok())
        })
        .collect()
}
