//! Size limits and the base64 flavours the stores use, decoded into [`ReceiptError`]s.
//!
//! Every entry point checks its input's size before decoding anything, so a hostile client
//! cannot make the verifier allocate or hash more than a genuine receipt needs.

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};

use crate::error::ReceiptError;

/// The largest App Store JWS accepted (a signed transaction is about 5 KiB).
pub(crate) const MAX_JWS_BYTES: usize = 16 * 1024;
/// The largest App Store server notification accepted: it carries up to two signed
/// JWS (the transaction and the renewal information) inside its own signed payload, each
/// base64url-encoded again, so it is allowed more than one JWS.
pub(crate) const MAX_NOTIFICATION_BYTES: usize = 64 * 1024;
/// The largest Google purchase JSON, Pub/Sub push body or Unity receipt accepted.
pub(crate) const MAX_DOCUMENT_BYTES: usize = 64 * 1024;
/// The largest base64 Google signature accepted (an RSA-8192 signature is 1368 characters).
pub(crate) const MAX_SIGNATURE_BYTES: usize = 2048;

/// Refuses `input` when it is longer than `max` bytes.
pub(crate) fn bounded(input: &[u8], max: usize) -> Result<(), ReceiptError> {
    if input.len() > max {
        Err(ReceiptError::TooLarge)
    } else {
        Ok(())
    }
}

/// Decodes base64url without padding, as JWS segments are encoded.
pub(crate) fn base64url(segment: &str, what: &str) -> Result<Vec<u8>, ReceiptError> {
    URL_SAFE_NO_PAD
        .decode(segment)
        .map_err(|_| ReceiptError::malformed(format!("{what} is not base64url")))
}

/// Decodes standard base64 with padding, as certificates in `x5c`, Google signatures and
/// Pub/Sub data are encoded.
pub(crate) fn base64_standard(text: &str, what: &str) -> Result<Vec<u8>, ReceiptError> {
    STANDARD
        .decode(text)
        .map_err(|_| ReceiptError::malformed(format!("{what} is not base64")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounded_refuses_only_past_the_limit() {
        assert_eq!(bounded(&[0; 4], 4), Ok(()));
        assert_eq!(bounded(&[0; 5], 4), Err(ReceiptError::TooLarge));
    }

    #[test]
    fn base64_flavours_are_strict() {
        assert_eq!(base64url("aGk", "x").expect("decodes"), b"hi");
        assert!(base64url("aGk=", "x").is_err());
        assert_eq!(base64_standard("aGk=", "x").expect("decodes"), b"hi");
        assert!(base64_standard("a-k_", "x").is_err());
    }
}
