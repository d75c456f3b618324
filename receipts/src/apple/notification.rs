//! App Store Server Notifications V2: the `signedPayload` Apple posts to the studio's
//! notification URL.

use serde::Deserialize;

use super::transaction::verify_apple_transaction;
use super::types::{AppleEnvironment, AppleExpect, AppleNotification, AppleNotificationKind};
use crate::chain::AppleRoots;
use crate::encoding::{MAX_NOTIFICATION_BYTES, bounded};
use crate::error::ReceiptError;
use crate::json::from_json;
use crate::jws::verify_jws;

/// The body Apple posts.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct NotificationBody {
    signed_payload: String,
}

/// The payload fields of a notification this crate reads; others are ignored.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct NotificationPayload {
    notification_type: String,
    #[serde(rename = "notificationUUID")]
    notification_uuid: String,
    signed_date: i64,
    /// The app and transaction a notification is about.
    #[serde(default)]
    data: Option<AppScope>,
    /// What summary notifications (e.g. a renewal extension for many subscribers) carry in
    /// place of `data`.
    #[serde(default)]
    summary: Option<AppScope>,
}

/// The app (and transaction) a notification is about: its `data` or `summary`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct AppScope {
    bundle_id: String,
    environment: String,
    #[serde(default)]
    app_apple_id: Option<i64>,
    #[serde(default)]
    signed_transaction_info: Option<String>,
}

/// The `signedPayload` of the JSON body Apple posts (`{"signedPayload": "<JWS>"}`), to hand to
/// [`verify_apple_notification`].
pub fn apple_signed_payload(body: &[u8]) -> Result<String, ReceiptError> {
    bounded(body, MAX_NOTIFICATION_BYTES)?;
    let body: NotificationBody = from_json(body, "the notification body")?;
    Ok(body.signed_payload)
}

/// Verifies an App Store Server Notification V2 (its `signedPayload`) and reads it.
///
/// The notification's JWS is verified as a transaction's is (chain, extensions, ES256, dates
/// at its `signedDate`), but may be up to 64 KiB since it carries signed documents of its own.
/// Its bundle id must be `expect.bundle_id`, and its app id `expect.app_apple_id` when both are
/// known. The transaction inside (`signedTransactionInfo`) is verified in full with
/// [`verify_apple_transaction`], and must be of the notification's environment.
pub fn verify_apple_notification(
    signed_payload: &str,
    roots: &AppleRoots,
    expect: &AppleExpect<'_>,
) -> Result<AppleNotification, ReceiptError> {
    let verified = verify_jws(signed_payload, roots, MAX_NOTIFICATION_BYTES)?;
    let payload: NotificationPayload = from_json(&verified.payload, "the notification payload")?;
    verified.chain.check_valid_at(payload.signed_date)?;
    let scope = payload
        .data
        .or(payload.summary)
        .ok_or_else(|| ReceiptError::malformed("the notification has no data and no summary"))?;
    if scope.bundle_id != expect.bundle_id {
        return Err(ReceiptError::WrongBundle);
    }
    if let (Some(expected), Some(named)) = (expect.app_apple_id, scope.app_apple_id)
        && expected != named
    {
        return Err(ReceiptError::WrongApp);
    }
    let environment = AppleEnvironment::parse(&scope.environment)?;
    let transaction = scope
        .signed_transaction_info
        .map(|jws| verify_apple_transaction(&jws, roots, expect))
        .transpose()?;
    if let Some(transaction) = &transaction
        && transaction.environment != environment
    {
        return Err(ReceiptError::malformed(
            "the transaction's environment is not the notification's",
        ));
    }
    Ok(AppleNotification {
        uuid: payload.notification_uuid,
        kind: AppleNotificationKind::parse(&payload.notification_type),
        signed_date_ms: payload.signed_date,
        environment,
        transaction,
    })
}
