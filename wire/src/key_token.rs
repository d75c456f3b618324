//! SDK and authoring key format: `<prefix>_live_sk_<body>`, `<prefix>_test_sk_<body>`,
//! `<prefix>_auth_<body>`, where `<body>` is 32 base62 characters of randomness followed by
//! a 6-character base62 CRC32 checksum of everything before it. A typo fails the checksum
//! offline, without a store lookup; only the SHA-256 of a key is ever stored.

use rand::RngExt;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use offer_domain::environment::Environment;

const BASE62: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const RANDOM_LEN: usize = 32;
const CHECKSUM_LEN: usize = 6;
const HEX: &[u8; 16] = b"0123456789abcdef";

/// What a key is for: read from its type marker, and kept on its stored record as
/// `{"kind": "sdk", "environment": "production"}` or `{"kind": "authoring"}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "environment", rename_all = "snake_case")]
pub enum KeyKind {
    /// SDK key of one environment: `/v1/sdk/*` and the WebSocket.
    Sdk(Environment),
    /// Authoring key for custom pages: never publishes, never touches `/v1/sdk`.
    Authoring,
}

impl KeyKind {
    /// Whether this is an SDK key (of either environment).
    pub fn is_sdk(&self) -> bool {
        matches!(self, Self::Sdk(_))
    }

    /// Whether this is an authoring key.
    pub fn is_authoring(&self) -> bool {
        matches!(self, Self::Authoring)
    }

    fn marker(self) -> &'static str {
        match self {
            Self::Sdk(Environment::Production) => "live_sk",
            Self::Sdk(Environment::Sandbox) => "test_sk",
            Self::Authoring => "auth",
        }
    }
}

/// Makes a new key of the given type.
pub fn generate(prefix: &str, kind: KeyKind) -> String {
    let mut rng = rand::rng();
    let random: String = (0..RANDOM_LEN)
        .map(|_| char::from(BASE62[rng.random_range(0..BASE62.len())]))
        .collect();
    let mut key = format!("{prefix}_{}_{random}", kind.marker());
    let checksum = base62_fixed(crc32fast::hash(key.as_bytes()));
    key.extend(checksum.iter().map(|b| char::from(*b)));
    key
}

/// Reads a bearer token's key type if it is shaped like a key of this deployment with a
/// valid checksum; `None` for anything else (a JWT, a typo, another deployment's key).
pub fn parse(token: &str, prefix: &str) -> Option<KeyKind> {
    let rest = token.strip_prefix(prefix)?.strip_prefix('_')?;
    let (kind, body) = [
        KeyKind::Sdk(Environment::Production),
        KeyKind::Sdk(Environment::Sandbox),
        KeyKind::Authoring,
    ]
    .into_iter()
    .find_map(|t| {
        rest.strip_prefix(t.marker())
            .and_then(|b| b.strip_prefix('_'))
            .map(|b| (t, b))
    })?;
    if body.len() != RANDOM_LEN + CHECKSUM_LEN || !body.bytes().all(|b| b.is_ascii_alphanumeric()) {
        return None;
    }
    let (head, checksum) = token.split_at(token.len() - CHECKSUM_LEN);
    (base62_fixed(crc32fast::hash(head.as_bytes())) == checksum.as_bytes()).then_some(kind)
}

/// True when a token looks like any deployment's key (so it is never tried as a JWT).
pub fn looks_like_key(token: &str) -> bool {
    let Some((prefix, rest)) = token.split_once('_') else {
        return false;
    };
    (2..=16).contains(&prefix.len())
        && prefix
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        && (rest.starts_with("live_sk_")
            || rest.starts_with("test_sk_")
            || rest.starts_with("auth_"))
}

/// SHA-256 of a key, lowercase hex: the only form in which keys are stored.
pub fn hash(token: &str) -> String {
    hex(&digest(token))
}

/// SHA-256 of a key as bytes: what a node keys its cache of verified keys by, so checking a
/// cached key neither formats nor allocates the hex text.
pub fn digest(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

/// A digest as the lowercase hex text keys are stored under.
pub fn hex(digest: &[u8; 32]) -> String {
    let mut out = String::with_capacity(64);
    for b in digest {
        out.push(char::from(HEX[usize::from(b >> 4)]));
        out.push(char::from(HEX[usize::from(b & 0xf)]));
    }
    out
}

/// The digest a stored hex hash stands for; `None` unless it is 64 hex digits.
pub fn digest_of_hex(hash: &str) -> Option<[u8; 32]> {
    let text = hash.as_bytes();
    if text.len() != 64 {
        return None;
    }
    let nibble = |c: u8| {
        char::from(c)
            .to_digit(16)
            .and_then(|d| u8::try_from(d).ok())
    };
    let mut out = [0u8; 32];
    for (slot, pair) in out.iter_mut().zip(text.chunks_exact(2)) {
        *slot = nibble(pair[0])? << 4 | nibble(pair[1])?;
    }
    Some(out)
}

/// The checksum's six base62 digits.
fn base62_fixed(mut n: u32) -> [u8; CHECKSUM_LEN] {
    let mut out = [b'0'; CHECKSUM_LEN];
    for slot in out.iter_mut().rev() {
        *slot = BASE62[(n % 62) as usize];
        n /= 62;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kind_is_stored_as_a_kind_and_an_environment() {
        let sdk = serde_json::to_value(KeyKind::Sdk(Environment::Sandbox)).expect("encode");
        assert_eq!(
            sdk,
            serde_json::json!({"kind": "sdk", "environment": "sandbox"})
        );
        let authoring = serde_json::to_value(KeyKind::Authoring).expect("encode");
        assert_eq!(authoring, serde_json::json!({"kind": "authoring"}));
        for kind in [
            KeyKind::Sdk(Environment::Production),
            KeyKind::Sdk(Environment::Sandbox),
            KeyKind::Authoring,
        ] {
            let json = serde_json::to_vec(&kind).expect("encode");
            assert_eq!(
                serde_json::from_slice::<KeyKind>(&json).expect("decode"),
                kind
            );
        }
    }

    #[test]
    fn round_trip_and_typo() {
        for t in [
            KeyKind::Sdk(Environment::Production),
            KeyKind::Sdk(Environment::Sandbox),
            KeyKind::Authoring,
        ] {
            let key = generate("ofr", t);
            assert_eq!(parse(&key, "ofr"), Some(t));
            assert!(looks_like_key(&key));
            assert_eq!(parse(&key, "other"), None);
            let mut typo = key.clone().into_bytes();
            let i = typo.len() - 10;
            typo[i] = if typo[i] == b'a' { b'b' } else { b'a' };
            assert_eq!(parse(&String::from_utf8(typo).expect("ascii"), "ofr"), None);
        }
        assert_eq!(hash("x").len(), 64);
    }

    #[test]
    fn a_digest_and_its_hex_round_trip() {
        let key = generate("ofr", KeyKind::Sdk(Environment::Production));
        let text = hash(&key);
        assert_eq!(text, hex(&digest(&key)));
        assert_eq!(digest_of_hex(&text), Some(digest(&key)));
        assert_eq!(digest_of_hex(&text.to_uppercase()), Some(digest(&key)));
        assert_eq!(digest_of_hex(&text[1..]), None);
        assert_eq!(digest_of_hex(&format!("{}g", &text[1..])), None);
    }
}
