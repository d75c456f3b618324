//! App Store JWS (compact serialisation): header checks, chain and ES256 signature.
//!
//! The order matters: the size is checked before anything is decoded, and the header's
//! algorithm before any cryptography runs, so that `alg: none`, an HMAC algorithm or a
//! hostile size are refused without touching a key.

use p256::ecdsa::signature::Verifier as _;
use serde::Deserialize;

use crate::chain::{AppleRoots, VerifiedChain, verify_chain};
use crate::encoding::{base64url, bounded};
use crate::error::ReceiptError;
use crate::json::from_json;

/// The only algorithm Apple signs with: ECDSA over P-256 with SHA-256.
const ES256: &str = "ES256";

/// The JWS header fields the verifier reads.
#[derive(Deserialize)]
struct JwsHeader {
    alg: String,
    #[serde(default)]
    x5c: Option<Vec<String>>,
    /// Critical extensions the verifier would have to understand: none are supported.
    #[serde(default)]
    crit: Option<serde_json::Value>,
}

/// A JWS whose chain and signature verified: its payload bytes and the chain, whose dates
/// the caller checks against the payload's signing date.
pub(crate) struct VerifiedJws {
    pub(crate) payload: Vec<u8>,
    pub(crate) chain: VerifiedChain,
}

/// Verifies a compact JWS signed by an Apple leaf certificate chaining to one of `roots`.
/// `max_bytes` bounds the whole JWS.
pub(crate) fn verify_jws(
    jws: &str,
    roots: &AppleRoots,
    max_bytes: usize,
) -> Result<VerifiedJws, ReceiptError> {
    bounded(jws.as_bytes(), max_bytes)?;
    let mut parts = jws.split('.');
    let (Some(header_b64), Some(payload_b64), Some(signature_b64), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(ReceiptError::malformed(
            "a JWS has three dot-separated parts",
        ));
    };

    // What the signature covers: the header and payload segments and the dot between them.
    let signed = &jws.as_bytes()[..header_b64.len() + 1 + payload_b64.len()];
    let header: JwsHeader = from_json(&base64url(header_b64, "the JWS header")?, "the JWS header")?;
    if header.alg != ES256 {
        return Err(ReceiptError::Algorithm(
            header.alg.chars().take(32).collect(),
        ));
    }
    if header.crit.is_some() {
        return Err(ReceiptError::malformed(
            "the JWS header has critical parameters, none are supported",
        ));
    }
    let x5c = header
        .x5c
        .ok_or_else(|| ReceiptError::Chain("the JWS header has no x5c certificate chain".into()))?;
    let chain = verify_chain(&x5c, roots)?;

    let signature = base64url(signature_b64, "the JWS signature")?;
    let signature = p256::ecdsa::Signature::from_slice(&signature)
        .map_err(|_| ReceiptError::malformed("an ES256 signature is 64 bytes"))?;
    chain
        .leaf_key
        .verify(signed, &signature)
        .map_err(|_| ReceiptError::Signature)?;

    Ok(VerifiedJws {
        payload: base64url(payload_b64, "the JWS payload")?,
        chain,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::Engine as _;
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;

    fn with_header(header: &str) -> String {
        format!(
            "{}.{}.{}",
            URL_SAFE_NO_PAD.encode(header),
            URL_SAFE_NO_PAD.encode("{}"),
            URL_SAFE_NO_PAD.encode([0u8; 64])
        )
    }

    #[test]
    fn algorithms_other_than_es256_are_refused_first() {
        let roots = AppleRoots::apple();
        for alg in ["none", "HS256", "RS256", "ES384", "es256"] {
            let jws = with_header(&format!(r#"{{"alg":"{alg}","x5c":["x","y","z"]}}"#));
            assert_eq!(
                verify_jws(&jws, &roots, 16 * 1024).err(),
                Some(ReceiptError::Algorithm(alg.into()))
            );
        }
    }

    #[test]
    fn shape_and_size_are_checked() {
        let roots = AppleRoots::apple();
        for jws in ["", "a.b", "a.b.c.d", "!.b.c"] {
            assert!(matches!(
                verify_jws(jws, &roots, 1024),
                Err(ReceiptError::Malformed(_))
            ));
        }
        let long = "a".repeat(1025);
        assert_eq!(
            verify_jws(&long, &roots, 1024).err(),
            Some(ReceiptError::TooLarge)
        );
        assert!(matches!(
            verify_jws(&with_header(r#"{"alg":"ES256"}"#), &roots, 1024),
            Err(ReceiptError::Chain(_))
        ));
        assert!(matches!(
            verify_jws(
                &with_header(r#"{"alg":"ES256","crit":["b64"]}"#),
                &roots,
                1024
            ),
            Err(ReceiptError::Malformed(_))
        ));
    }
}
