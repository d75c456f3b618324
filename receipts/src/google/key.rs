//! The app's Google Play licensing key, as the Play Console shows it.

use rsa::RsaPublicKey;
use rsa::pkcs8::DecodePublicKey as _;
use rsa::signature::Verifier as _;
use rsa::traits::PublicKeyParts as _;
use sha1::Sha1;

use crate::encoding::base64_standard;
use crate::error::ReceiptError;

/// The smallest RSA modulus accepted, in bits.
const MIN_KEY_BITS: usize = 2048;
/// The longest base64 key text read (an RSA-4096 key is about 740 characters).
const MAX_KEY_TEXT_BYTES: usize = 4096;

/// The RSA public key Google Play signs an app's purchases with (at least 2048 bits).
#[derive(Debug, Clone)]
pub struct GoogleKey {
    key: rsa::pkcs1v15::VerifyingKey<Sha1>,
}

impl GoogleKey {
    /// Loads the key from the Play Console's "Base64-encoded RSA public key": a base64
    /// DER SubjectPublicKeyInfo. Whitespace (a key pasted over several lines) is ignored.
    pub fn from_base64_der(b64: &str) -> Result<GoogleKey, ReceiptError> {
        if b64.len() > MAX_KEY_TEXT_BYTES {
            return Err(ReceiptError::InvalidKey("the key text is too long".into()));
        }
        let compact: String = b64.split_whitespace().collect();
        let der = base64_standard(&compact, "the key")
            .map_err(|_| ReceiptError::InvalidKey("the key is not base64".into()))?;
        let key = RsaPublicKey::from_public_key_der(&der).map_err(|_| {
            ReceiptError::InvalidKey("the key is not an RSA SubjectPublicKeyInfo".into())
        })?;
        if key.n().bits() < MIN_KEY_BITS {
            return Err(ReceiptError::KeyTooWeak);
        }
        Ok(GoogleKey {
            key: rsa::pkcs1v15::VerifyingKey::new(key),
        })
    }

    /// Whether `signature` is this key's RSASSA-PKCS1-v1_5 SHA-1 signature of `data`.
    pub(crate) fn verifies(&self, data: &[u8], signature: &[u8]) -> bool {
        rsa::pkcs1v15::Signature::try_from(signature)
            .is_ok_and(|signature| self.key.verify(data, &signature).is_ok())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn garbage_is_an_invalid_key() {
        for text in ["", "not base64!", "AAAA", &"A".repeat(5000)] {
            assert!(matches!(
                GoogleKey::from_base64_der(text),
                Err(ReceiptError::InvalidKey(_))
            ));
        }
    }
}
