//! Builders for what the stores and Unity send: App Store transaction and notification
//! payloads, Google Play purchase JSON and Pub/Sub pushes, Unity IAP receipts.

use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use serde_json::{Value, json};

use crate::apple::AppleEnvironment;
use crate::google::GooglePurchaseState;

/// The App Store app id the test notifications name.
pub const TEST_APP_APPLE_ID: i64 = 1_234_567_890;

/// Now, in ms since the epoch: test payloads are signed now.
fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| {
            i64::try_from(since.as_millis()).unwrap_or(i64::MAX)
        })
}

/// A StoreKit 2 transaction payload (to sign with [`crate::test_support::TestAppleCa::sign`]),
/// bought and signed now, a consumable at 0.99 USD.
pub fn transaction_payload(
    bundle: &str,
    product: &str,
    transaction_id: &str,
    environment: AppleEnvironment,
    quantity: u32,
) -> Value {
    let now = now_ms();
    json!({
        "transactionId": transaction_id,
        "originalTransactionId": transaction_id,
        "bundleId": bundle,
        "productId": product,
        "purchaseDate": now,
        "originalPurchaseDate": now,
        "quantity": quantity,
        "type": "Consumable",
        "inAppOwnershipType": "PURCHASED",
        "signedDate": now,
        "environment": environment.as_str(),
        "transactionReason": "PURCHASE",
        "storefront": "USA",
        "storefrontId": "143441",
        "price": 990,
        "currency": "USD",
    })
}

/// An App Store Server Notification V2 payload of type `kind` (e.g. `REFUND`) about the
/// signed transaction `inner_jws`, in the transaction's environment, for the app
/// [`TEST_APP_APPLE_ID`], signed now.
pub fn notification(kind: &str, uuid: &str, inner_jws: &str, bundle: &str) -> Value {
    json!({
        "notificationType": kind,
        "notificationUUID": uuid,
        "version": "2.0",
        "signedDate": now_ms(),
        "data": {
            "appAppleId": TEST_APP_APPLE_ID,
            "bundleId": bundle,
            "bundleVersion": "1",
            "environment": environment_of(inner_jws),
            "signedTransactionInfo": inner_jws,
        },
    })
}

/// The `environment` a JWS's payload names, `Sandbox` when it cannot be read.
fn environment_of(jws: &str) -> String {
    jws.split('.')
        .nth(1)
        .and_then(|payload| URL_SAFE_NO_PAD.decode(payload).ok())
        .and_then(|bytes| serde_json::from_slice::<Value>(&bytes).ok())
        .and_then(|payload| payload["environment"].as_str().map(str::to_string))
        .unwrap_or_else(|| "Sandbox".to_string())
}

/// Google Play purchase JSON (to sign with [`crate::test_support::TestGoogleKey::sign`]),
/// bought now, quantity 1.
pub fn purchase_json(
    package: &str,
    product: &str,
    token: &str,
    state: GooglePurchaseState,
) -> String {
    let state = match state {
        GooglePurchaseState::Purchased => 0,
        GooglePurchaseState::Cancelled => 1,
        GooglePurchaseState::Pending => 2,
    };
    json!({
        "orderId": format!("GPA.3300-{}", token.len()),
        "packageName": package,
        "productId": product,
        "purchaseTime": now_ms(),
        "purchaseState": state,
        "purchaseToken": token,
        "quantity": 1,
        "acknowledged": false,
    })
    .to_string()
}

/// A Pub/Sub push body carrying a voided-purchase notification for `token` (a one-time
/// product), as Google posts it.
pub fn pubsub_voided(package: &str, token: &str, message_id: &str, refund_type: i64) -> Vec<u8> {
    pubsub(
        message_id,
        &json!({
            "version": "1.0",
            "packageName": package,
            "eventTimeMillis": now_ms().to_string(),
            "voidedPurchaseNotification": {
                "purchaseToken": token,
                "orderId": format!("GPA.3300-{}", token.len()),
                "productType": 2,
                "refundType": refund_type,
            },
        }),
    )
}

/// A Pub/Sub push body carrying the test notification the Play Console sends.
pub fn pubsub_test_notification(package: &str, message_id: &str) -> Vec<u8> {
    pubsub(
        message_id,
        &json!({
            "version": "1.0",
            "packageName": package,
            "eventTimeMillis": now_ms().to_string(),
            "testNotification": {"version": "1.0"},
        }),
    )
}

/// A Pub/Sub push body around `notification`, with the message id under both spellings as
/// Pub/Sub writes it.
fn pubsub(message_id: &str, notification: &Value) -> Vec<u8> {
    json!({
        "message": {
            "attributes": {},
            "data": STANDARD.encode(notification.to_string()),
            "messageId": message_id,
            "message_id": message_id,
            "publishTime": "2026-01-01T00:00:00.000Z",
            "publish_time": "2026-01-01T00:00:00.000Z",
        },
        "subscription": "projects/test-project/subscriptions/play-notifications",
    })
    .to_string()
    .into_bytes()
}

/// A Unity IAP receipt of a Google Play purchase.
pub fn unity_google(purchase_json: &str, signature: &str) -> String {
    let payload = json!({
        "json": purchase_json,
        "signature": signature,
        "skuDetails": [],
    });
    json!({
        "Store": "GooglePlay",
        "TransactionID": "GPA.3300-0",
        "Payload": payload.to_string(),
    })
    .to_string()
}

/// A Unity IAP receipt of an App Store purchase whose payload is `jws` (a StoreKit 2 signed
/// transaction, or anything else to test the refusal of other payloads).
pub fn unity_apple(jws: &str) -> String {
    json!({
        "Store": "AppleAppStore",
        "TransactionID": "2000000000000001",
        "Payload": jws,
    })
    .to_string()
}
