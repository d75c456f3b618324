//! Google Play Real-time Developer Notifications, as Pub/Sub pushes them.
//!
//! A push is not signed by Google Play the way a purchase is; whoever wires this in must
//! authenticate the push itself (a secret in the push URL or Pub/Sub's OIDC token) and should
//! confirm a voided purchase with the Play Developer API before acting on it. This module only
//! reads the message.

use serde::Deserialize;

use crate::encoding::{MAX_DOCUMENT_BYTES, base64_standard, bounded};
use crate::error::ReceiptError;
use crate::json::from_json;

/// A purchase Google voided: refunded, charged back or cancelled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GoogleVoided {
    /// The voided purchase's token (as in [`crate::GooglePurchase::purchase_token`]).
    pub purchase_token: String,
    /// The voided purchase's order id.
    pub order_id: Option<String>,
    /// Google's product type: 1 a subscription, 2 a one-time product.
    pub product_type: i64,
    /// Google's refund type: 1 the whole purchase, 2 some of its quantity.
    pub refund_type: i64,
}

/// A Real-time Developer Notification.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GoogleNotification {
    /// Pub/Sub's message id: the key to apply a notification once (Pub/Sub redelivers).
    pub message_id: String,
    /// The app the notification is about.
    pub package_name: String,
    /// When the event happened, ms since the epoch.
    pub event_time_ms: i64,
    /// The voided purchase, for voided-purchase notifications; `None` for every other kind
    /// (subscription, one-time product and test notifications).
    pub voided: Option<GoogleVoided>,
}

/// The Pub/Sub push body.
#[derive(Deserialize)]
struct PushBody {
    message: PushMessage,
}

/// The Pub/Sub message. Pub/Sub sends the id under both spellings.
#[derive(Deserialize)]
struct PushMessage {
    data: String,
    #[serde(default, rename = "messageId")]
    message_id: Option<String>,
    #[serde(default, rename = "message_id")]
    message_id_snake: Option<String>,
}

/// The developer notification in the message's data.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct DeveloperNotification {
    package_name: String,
    event_time_millis: Millis,
    #[serde(default)]
    voided_purchase_notification: Option<VoidedPurchase>,
}

/// Google writes `eventTimeMillis` as a string of digits; a number is read too.
#[derive(Deserialize)]
#[serde(untagged)]
enum Millis {
    Number(i64),
    Text(String),
}

/// The voided-purchase notification fields.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct VoidedPurchase {
    purchase_token: String,
    #[serde(default)]
    order_id: Option<String>,
    product_type: i64,
    refund_type: i64,
}

/// Reads a Pub/Sub push of a Real-time Developer Notification (the whole HTTP body).
pub fn parse_google_notification(body: &[u8]) -> Result<GoogleNotification, ReceiptError> {
    bounded(body, MAX_DOCUMENT_BYTES)?;
    let push: PushBody = from_json(body, "the Pub/Sub push")?;
    let message_id = push
        .message
        .message_id
        .or(push.message.message_id_snake)
        .ok_or_else(|| ReceiptError::malformed("the Pub/Sub message has no messageId"))?;
    let data = base64_standard(&push.message.data, "the Pub/Sub message data")?;
    let notification: DeveloperNotification = from_json(&data, "the developer notification")?;
    let event_time_ms = match notification.event_time_millis {
        Millis::Number(ms) => ms,
        Millis::Text(text) => text
            .parse()
            .map_err(|_| ReceiptError::malformed("eventTimeMillis is not a number"))?,
    };
    Ok(GoogleNotification {
        message_id,
        package_name: notification.package_name,
        event_time_ms,
        voided: notification
            .voided_purchase_notification
            .map(|voided| GoogleVoided {
                purchase_token: voided.purchase_token,
                order_id: voided.order_id,
                product_type: voided.product_type,
                refund_type: voided.refund_type,
            }),
    })
}
