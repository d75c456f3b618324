//! StoreKit 2 signed transactions (`signedTransactionInfo`, or `Transaction.jwsRepresentation`
//! on the device).

use serde::Deserialize;

use super::types::{AppleEnvironment, AppleExpect, AppleTransaction};
use crate::chain::AppleRoots;
use crate::encoding::MAX_JWS_BYTES;
use crate::error::ReceiptError;
use crate::json::from_json;
use crate::jws::verify_jws;

/// The payload fields of a signed transaction this crate reads; others are ignored.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct TransactionPayload {
    transaction_id: String,
    original_transaction_id: String,
    product_id: String,
    bundle_id: String,
    purchase_date: i64,
    signed_date: i64,
    quantity: u32,
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    price: Option<i64>,
    #[serde(default)]
    currency: Option<String>,
    environment: String,
    #[serde(default)]
    app_account_token: Option<String>,
    #[serde(default)]
    revocation_date: Option<i64>,
}

/// Verifies a StoreKit 2 signed transaction and reads it.
///
/// Refused unless: the JWS is at most 16 KiB and its `alg` is ES256; its `x5c` chain is leaf,
/// intermediate, root with the root one of `roots`, each certificate signed by the next and
/// Apple's extensions on the leaf and intermediate; the signature verifies with the leaf's key;
/// every certificate was valid at the payload's `signedDate`; the payload is of
/// `expect.bundle_id` and of a known environment. The environment is returned, not judged:
/// the caller decides whether a sandbox purchase counts.
pub fn verify_apple_transaction(
    jws: &str,
    roots: &AppleRoots,
    expect: &AppleExpect<'_>,
) -> Result<AppleTransaction, ReceiptError> {
    let verified = verify_jws(jws, roots, MAX_JWS_BYTES)?;
    let payload: TransactionPayload = from_json(&verified.payload, "the transaction payload")?;
    verified.chain.check_valid_at(payload.signed_date)?;
    if payload.bundle_id != expect.bundle_id {
        return Err(ReceiptError::WrongBundle);
    }
    let environment = AppleEnvironment::parse(&payload.environment)?;
    if payload.quantity == 0 {
        return Err(ReceiptError::malformed("quantity is 0"));
    }
    Ok(AppleTransaction {
        transaction_id: payload.transaction_id,
        original_transaction_id: payload.original_transaction_id,
        product_id: payload.product_id,
        bundle_id: payload.bundle_id,
        purchase_date_ms: payload.purchase_date,
        signed_date_ms: payload.signed_date,
        quantity: payload.quantity,
        kind: payload.kind,
        price_milliunits: payload.price,
        currency: payload.currency,
        environment,
        revocation_date_ms: payload.revocation_date,
        app_account_token: payload.app_account_token,
    })
}
