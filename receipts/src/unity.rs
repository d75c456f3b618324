//! Unity IAP receipts: the one JSON string Unity's purchasing package hands the game, which
//! wraps the store's own receipt.

use serde::Deserialize;

use crate::encoding::{MAX_DOCUMENT_BYTES, bounded};
use crate::error::ReceiptError;
use crate::json::from_json;

/// The store receipt inside a Unity IAP receipt, ready for the store's verifier.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UnityReceipt {
    /// A StoreKit 2 signed transaction, for [`crate::verify_apple_transaction`].
    AppStore {
        /// The JWS.
        signed_transaction: String,
    },
    /// A Google Play purchase, for [`crate::verify_google_purchase`].
    GooglePlay {
        /// The purchase JSON, exactly as signed.
        purchase_data: String,
        /// Its base64 signature.
        signature: String,
    },
}

/// The Unity IAP receipt.
#[derive(Deserialize)]
struct Envelope {
    #[serde(rename = "Store")]
    store: String,
    #[serde(rename = "Payload")]
    payload: String,
}

/// The Google Play payload: a JSON document inside the receipt's `Payload` string.
#[derive(Deserialize)]
struct GooglePayload {
    json: String,
    signature: String,
}

/// Unwraps a Unity IAP receipt into the store receipt it carries.
///
/// App Store receipts are accepted only when the payload is a StoreKit 2 signed transaction
/// (a JWS); a StoreKit 1 app receipt (base64 PKCS#7) can only be checked by asking Apple, so it
/// is refused as [`ReceiptError::Unsupported`], as are stores other than the App Store and
/// Google Play. Nothing is verified here: hand the result to the store's verifier.
pub fn parse_unity_receipt(receipt: &str) -> Result<UnityReceipt, ReceiptError> {
    bounded(receipt.as_bytes(), MAX_DOCUMENT_BYTES)?;
    let envelope: Envelope = from_json(receipt.as_bytes(), "the Unity receipt")?;
    match envelope.store.as_str() {
        "GooglePlay" => {
            let payload: GooglePayload =
                from_json(envelope.payload.as_bytes(), "the Google Play payload")?;
            Ok(UnityReceipt::GooglePlay {
                purchase_data: payload.json,
                signature: payload.signature,
            })
        }
        "AppleAppStore" | "MacAppStore" => {
            if looks_like_jws(&envelope.payload) {
                Ok(UnityReceipt::AppStore {
                    signed_transaction: envelope.payload,
                })
            } else {
                Err(ReceiptError::Unsupported(
                    "an App Store app receipt (PKCS#7) needs Apple's servers; send the StoreKit 2 signed transaction".into(),
                ))
            }
        }
        other => Err(ReceiptError::Unsupported(format!(
            "receipts of the store {:?}",
            other.chars().take(32).collect::<String>()
        ))),
    }
}

/// Whether `text` has the shape of a compact JWS: three non-empty base64url segments.
fn looks_like_jws(text: &str) -> bool {
    let segments: Vec<&str> = text.split('.').collect();
    segments.len() == 3
        && segments.iter().all(|segment| {
            !segment.is_empty()
                && segment
                    .bytes()
                    .all(|byte| byte.is_ascii_alphanumeric() || byte == b'-' || byte == b'_')
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jws_shape() {
        assert!(looks_like_jws("eyJh.eyJi.c2ln"));
        assert!(!looks_like_jws("MIIT+gYJKoZIhvcNAQcCoIIT6zCCE+cCAQEx"));
        assert!(!looks_like_jws("a..b"));
        assert!(!looks_like_jws("a.b.c.d"));
        assert!(!looks_like_jws("a+.b.c"));
    }

    #[test]
    fn unknown_stores_and_garbage_are_refused() {
        let amazon = r#"{"Store":"AmazonAppStore","TransactionID":"1","Payload":"x"}"#;
        assert!(matches!(
            parse_unity_receipt(amazon),
            Err(ReceiptError::Unsupported(_))
        ));
        assert!(matches!(
            parse_unity_receipt("not json"),
            Err(ReceiptError::Malformed(_))
        ));
        let bad_google = r#"{"Store":"GooglePlay","TransactionID":"1","Payload":"{}"}"#;
        assert!(matches!(
            parse_unity_receipt(bad_google),
            Err(ReceiptError::Malformed(_))
        ));
    }
}
