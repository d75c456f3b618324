//! The one error of the crate: why a receipt, a notification or a configured key was refused.
//!
//! Every refusal carries a message for people ([`std::fmt::Display`]) and a short stable
//! reason ([`ReceiptError::reason`]) that logs and API answers can carry and clients can match.
//! Errors never include the receipt's bytes: a refused receipt may be hostile or large.

/// Why verification or parsing failed.
///
/// The variants split along who can fix it: [`ReceiptError::InvalidKey`] is the studio's
/// configuration (a Google licensing key or an extra Apple root that does not load); every other
/// variant is about the receipt or notification that was presented.
#[derive(thiserror::Error, Debug, Clone, PartialEq, Eq)]
pub enum ReceiptError {
    /// The input is not what the store sends: bad base64, bad JSON, a missing or mistyped
    /// field, a value outside its range. The text names what was wrong, never the input.
    #[error("malformed receipt: {0}")]
    Malformed(String),
    /// The input is larger than any genuine receipt or notification; it was not parsed.
    #[error("receipt or notification larger than accepted")]
    TooLarge,
    /// The JWS header names a signing algorithm other than ES256 (including `none`).
    #[error("signing algorithm {0:?} is not accepted: only ES256 is")]
    Algorithm(String),
    /// The signature does not verify: the signed bytes were changed, or another key signed.
    #[error("signature does not verify")]
    Signature,
    /// The certificate chain in the JWS header is not leaf, intermediate, root with each
    /// certificate signed by the next.
    #[error("certificate chain refused: {0}")]
    Chain(String),
    /// The chain ends in a root that is not one of the trusted Apple roots.
    #[error("certificate chain does not end in a trusted Apple root")]
    UntrustedRoot,
    /// A certificate of the chain lacks the extension Apple puts on that role.
    #[error("certificate lacks the {0} extension")]
    MissingExtension(&'static str),
    /// A certificate of the chain was not valid (expired or not yet valid) at the date the
    /// store signed the payload.
    #[error("a certificate of the chain was not valid at the signing date")]
    CertificateExpired,
    /// The App Store payload belongs to another app (bundle id).
    #[error("the receipt belongs to another bundle id")]
    WrongBundle,
    /// The Google Play purchase belongs to another app (package name).
    #[error("the purchase belongs to another package name")]
    WrongPackage,
    /// The App Store notification names another app (Apple id of the app).
    #[error("the notification belongs to another app")]
    WrongApp,
    /// The Google Play purchase is signed but cancelled or pending: nothing was paid (yet).
    #[error("the purchase is not in the purchased state")]
    NotPurchased,
    /// The configured Google key is RSA but shorter than 2048 bits.
    #[error("the key is too weak: RSA keys must have at least 2048 bits")]
    KeyTooWeak,
    /// A configured key or root certificate does not load (not base64, not DER, not PEM, not
    /// an RSA key, not a certificate).
    #[error("the configured key or root certificate is unusable: {0}")]
    InvalidKey(String),
    /// A receipt of a kind that cannot be verified offline: an App Store PKCS#7 app receipt
    /// (only StoreKit 2 signed transactions can), or a store this crate does not know.
    #[error("receipt cannot be verified offline: {0}")]
    Unsupported(String),
}

impl ReceiptError {
    /// A short stable snake_case name of the refusal, for logs and the `detail` of an API
    /// answer. Unlike the message, it never changes wording.
    pub fn reason(&self) -> &'static str {
        match self {
            ReceiptError::Malformed(_) => "malformed",
            ReceiptError::TooLarge => "too_large",
            ReceiptError::Algorithm(_) => "algorithm",
            ReceiptError::Signature => "signature",
            ReceiptError::Chain(_) => "certificate_chain",
            ReceiptError::UntrustedRoot => "untrusted_root",
            ReceiptError::MissingExtension(_) => "missing_extension",
            ReceiptError::CertificateExpired => "certificate_expired",
            ReceiptError::WrongBundle => "wrong_bundle",
            ReceiptError::WrongPackage => "wrong_package",
            ReceiptError::WrongApp => "wrong_app",
            ReceiptError::NotPurchased => "not_purchased",
            ReceiptError::KeyTooWeak => "key_too_weak",
            ReceiptError::InvalidKey(_) => "invalid_key",
            ReceiptError::Unsupported(_) => "unsupported_receipt",
        }
    }

    /// A [`ReceiptError::Malformed`] naming what was wrong.
    pub(crate) fn malformed(what: impl Into<String>) -> ReceiptError {
        ReceiptError::Malformed(what.into())
    }
}

#[cfg(test)]
mod tests {
    use super::ReceiptError;

    #[test]
    fn reasons_are_distinct_snake_case() {
        let all = [
            ReceiptError::Malformed("x".into()),
            ReceiptError::TooLarge,
            ReceiptError::Algorithm("none".into()),
            ReceiptError::Signature,
            ReceiptError::Chain("x".into()),
            ReceiptError::UntrustedRoot,
            ReceiptError::MissingExtension("x"),
            ReceiptError::CertificateExpired,
            ReceiptError::WrongBundle,
            ReceiptError::WrongPackage,
            ReceiptError::WrongApp,
            ReceiptError::NotPurchased,
            ReceiptError::KeyTooWeak,
            ReceiptError::InvalidKey("x".into()),
            ReceiptError::Unsupported("x".into()),
        ];
        let mut seen = std::collections::BTreeSet::new();
        for error in &all {
            let reason = error.reason();
            assert!(
                reason.chars().all(|c| c.is_ascii_lowercase() || c == '_'),
                "{reason} is not snake_case"
            );
            assert!(seen.insert(reason), "{reason} is given twice");
            assert!(!error.to_string().is_empty());
        }
    }
}
