//! A Google Play purchase: the purchase JSON (`INAPP_PURCHASE_DATA`, or
//! `Purchase.getOriginalJson()`) and its signature.

use serde::Deserialize;

use super::key::GoogleKey;
use crate::encoding::{MAX_DOCUMENT_BYTES, MAX_SIGNATURE_BYTES, base64_standard, bounded};
use crate::error::ReceiptError;
use crate::json::from_json;

/// The state of a Google Play purchase.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GooglePurchaseState {
    /// Paid (`purchaseState` 0).
    Purchased,
    /// Cancelled (`purchaseState` 1).
    Cancelled,
    /// Waiting for payment, e.g. cash at a shop (`purchaseState` 2).
    Pending,
}

/// A verified Google Play purchase.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GooglePurchase {
    /// Google's order id (`GPA.…`), absent for test purchases.
    pub order_id: Option<String>,
    /// The app's package name (checked against the expected one).
    pub package_name: String,
    /// The product bought.
    pub product_id: String,
    /// When the purchase happened, ms since the epoch.
    pub purchase_time_ms: i64,
    /// Always [`GooglePurchaseState::Purchased`] in a verified purchase; the other states
    /// are refused with [`ReceiptError::NotPurchased`].
    pub purchase_state: GooglePurchaseState,
    /// The token identifying the purchase: the key to count it once, and what refund
    /// notifications name.
    pub purchase_token: String,
    /// How many units were bought (1 when the JSON does not say).
    pub quantity: u32,
}

/// The purchase JSON fields this crate reads; others are ignored.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PurchaseData {
    #[serde(default)]
    order_id: Option<String>,
    package_name: String,
    product_id: String,
    purchase_time: i64,
    purchase_state: i64,
    purchase_token: String,
    #[serde(default)]
    quantity: Option<u32>,
}

/// Verifies a Google Play purchase and reads it.
///
/// `signature_b64` must be `key`'s RSASSA-PKCS1-v1_5 SHA-1 signature over the exact bytes of
/// `purchase_data` (the JSON is never re-serialised before checking). Refused as well when the
/// purchase is of another package than `package_name`, or not in the purchased state
/// (cancelled or pending: [`ReceiptError::NotPurchased`]).
pub fn verify_google_purchase(
    purchase_data: &str,
    signature_b64: &str,
    key: &GoogleKey,
    package_name: &str,
) -> Result<GooglePurchase, ReceiptError> {
    bounded(purchase_data.as_bytes(), MAX_DOCUMENT_BYTES)?;
    bounded(signature_b64.as_bytes(), MAX_SIGNATURE_BYTES)?;
    let signature = base64_standard(signature_b64, "the signature")?;
    if !key.verifies(purchase_data.as_bytes(), &signature) {
        return Err(ReceiptError::Signature);
    }
    let data: PurchaseData = from_json(purchase_data.as_bytes(), "the purchase data")?;
    if data.package_name != package_name {
        return Err(ReceiptError::WrongPackage);
    }
    let purchase_state = match data.purchase_state {
        0 => GooglePurchaseState::Purchased,
        1 => GooglePurchaseState::Cancelled,
        2 => GooglePurchaseState::Pending,
        _ => return Err(ReceiptError::malformed("purchaseState is not 0, 1 or 2")),
    };
    if purchase_state != GooglePurchaseState::Purchased {
        return Err(ReceiptError::NotPurchased);
    }
    let quantity = data.quantity.unwrap_or(1);
    if quantity == 0 {
        return Err(ReceiptError::malformed("quantity is 0"));
    }
    Ok(GooglePurchase {
        order_id: data.order_id,
        package_name: data.package_name,
        product_id: data.product_id,
        purchase_time_ms: data.purchase_time,
        purchase_state,
        purchase_token: data.purchase_token,
        quantity,
    })
}
