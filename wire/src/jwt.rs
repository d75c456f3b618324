//! Dashboard JWTs: HS256 pinned; `aud`, `iss` and `exp` required (RFC 8725). `jsonwebtoken`
//! skips `aud`/`iss` checks when a token omits them unless they are listed as required, so
//! they are. `nbf` is enforced when present, an `iat` in the future is refused, and a token
//! may live at most [`MAX_TOKEN_TTL_DAYS`] days from now, so a leaked token signed for the
//! year 9999 is worthless. `aud` may be one string or a list (RFC 7519 allows both).

use chrono::{Duration, Utc};
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use serde::{Deserialize, Serialize};

/// Clock skew tolerated on `exp`, `nbf` and `iat`, in seconds.
const LEEWAY_S: u64 = 5;

/// A dashboard role, ordered: viewer reads, developer writes, admin manages keys, kill
/// switch and mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Reads only.
    Viewer,
    /// Reads and writes configuration.
    Developer,
    /// Everything, including credentials and the kill switch.
    Admin,
}

impl std::str::FromStr for Role {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "viewer" => Ok(Self::Viewer),
            "developer" => Ok(Self::Developer),
            "admin" => Ok(Self::Admin),
            other => Err(format!("unknown role `{other}` (viewer, developer, admin)")),
        }
    }
}

/// The claims of a dashboard token.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Claims {
    /// The user.
    pub sub: String,
    /// The user's studio: every object access is checked against it.
    pub studio_id: String,
    /// The user's role.
    pub role: Role,
    /// Audience.
    pub aud: String,
    /// Issuer.
    pub iss: String,
    /// Expiry (seconds since the epoch).
    pub exp: i64,
    /// Issue time.
    pub iat: i64,
}

/// Longest lifetime a dashboard token may claim, in days; the CLI refuses to mint longer.
pub const MAX_TOKEN_TTL_DAYS: i64 = 30;

/// What a verified token says about its holder. `aud` and `iss` are checked by the library
/// (in either form) and need not be read here.
#[derive(Debug, Deserialize)]
struct Presented {
    sub: String,
    studio_id: String,
    role: Role,
    exp: i64,
    #[serde(default)]
    iat: Option<i64>,
}

/// Mints and verifies dashboard tokens with one secret.
#[derive(Clone)]
pub struct JwtCodec {
    encoding: EncodingKey,
    decoding: DecodingKey,
    validation: Validation,
    issuer: String,
    audience: String,
}

impl std::fmt::Debug for JwtCodec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JwtCodec")
            .field("issuer", &self.issuer)
            .finish_non_exhaustive()
    }
}

impl JwtCodec {
    /// A codec for this secret, issuer and audience.
    pub fn new(secret: &[u8], issuer: &str, audience: &str) -> Self {
        let mut validation = Validation::new(Algorithm::HS256);
        validation.set_audience(&[audience]);
        validation.set_issuer(&[issuer]);
        validation.set_required_spec_claims(&["exp", "aud", "iss"]);
        validation.validate_nbf = true;
        validation.leeway = LEEWAY_S;
        Self {
            encoding: EncodingKey::from_secret(secret),
            decoding: DecodingKey::from_secret(secret),
            validation,
            issuer: issuer.to_owned(),
            audience: audience.to_owned(),
        }
    }

    /// Signs a token for `sub` of `studio_id` with `role`, valid for `ttl`.
    pub fn mint(
        &self,
        sub: &str,
        studio_id: &str,
        role: Role,
        ttl: Duration,
    ) -> Result<String, jsonwebtoken::errors::Error> {
        let ttl = ttl.min(Duration::days(MAX_TOKEN_TTL_DAYS));
        let now = Utc::now();
        let claims = Claims {
            sub: sub.to_owned(),
            studio_id: studio_id.to_owned(),
            role,
            aud: self.audience.clone(),
            iss: self.issuer.clone(),
            exp: (now + ttl).timestamp(),
            iat: now.timestamp(),
        };
        jsonwebtoken::encode(&Header::new(Algorithm::HS256), &claims, &self.encoding)
    }

    /// Verifies signature, algorithm, audience, issuer, expiry, not-before, issue time and
    /// the lifetime cap.
    pub fn verify(&self, token: &str) -> Option<Claims> {
        let presented = jsonwebtoken::decode::<Presented>(token, &self.decoding, &self.validation)
            .ok()?
            .claims;
        let now = Utc::now().timestamp();
        if presented.iat.is_some_and(|iat| iat > now + LEEWAY_S as i64) {
            return None;
        }
        if presented.exp > now + MAX_TOKEN_TTL_DAYS * 86_400 + LEEWAY_S as i64 {
            return None;
        }
        Some(Claims {
            sub: presented.sub,
            studio_id: presented.studio_id,
            role: presented.role,
            aud: self.audience.clone(),
            iss: self.issuer.clone(),
            exp: presented.exp,
            iat: presented.iat.unwrap_or(now),
        })
    }
}
