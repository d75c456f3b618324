//! What a verified App Store document says, and what the caller expects of it.

use crate::error::ReceiptError;

/// What the caller expects of an App Store document: its app.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AppleExpect<'a> {
    /// The app's bundle id (e.g. `com.studio.game`); a payload of another app is refused.
    pub bundle_id: &'a str,
    /// The app's Apple id (App Store Connect's numeric id). When `Some`, a notification that
    /// names another app id is refused; a notification without one (sandbox ones may lack it)
    /// is judged by its bundle id alone.
    pub app_apple_id: Option<i64>,
}

/// The App Store environment a transaction happened in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AppleEnvironment {
    /// Real money.
    Production,
    /// Apple's sandbox testers: no money moves.
    Sandbox,
    /// StoreKit testing in Xcode: no money moves, signed by Xcode's local certificate.
    Xcode,
}

impl AppleEnvironment {
    /// Apple's spelling, as in the payload.
    pub fn as_str(self) -> &'static str {
        match self {
            AppleEnvironment::Production => "Production",
            AppleEnvironment::Sandbox => "Sandbox",
            AppleEnvironment::Xcode => "Xcode",
        }
    }

    /// Reads Apple's spelling; anything else is malformed.
    pub(crate) fn parse(text: &str) -> Result<AppleEnvironment, ReceiptError> {
        match text {
            "Production" => Ok(AppleEnvironment::Production),
            "Sandbox" => Ok(AppleEnvironment::Sandbox),
            "Xcode" => Ok(AppleEnvironment::Xcode),
            _ => Err(ReceiptError::malformed(
                "environment is not Production, Sandbox or Xcode",
            )),
        }
    }
}

/// A verified StoreKit 2 transaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppleTransaction {
    /// This transaction's id: the key to count a purchase once.
    pub transaction_id: String,
    /// The id of the original purchase (differs from `transaction_id` for renewals and
    /// restores).
    pub original_transaction_id: String,
    /// The product bought, as configured in App Store Connect.
    pub product_id: String,
    /// The app it was bought in (checked against [`AppleExpect::bundle_id`]).
    pub bundle_id: String,
    /// When the purchase happened, ms since the epoch.
    pub purchase_date_ms: i64,
    /// When Apple signed this payload, ms since the epoch.
    pub signed_date_ms: i64,
    /// How many units were bought (at least 1).
    pub quantity: u32,
    /// Apple's `type`: `Consumable`, `Non-Consumable`, `Auto-Renewable Subscription`, ...
    pub kind: String,
    /// The price in milliunits of `currency` (990 for 0.99), when Apple gives it.
    pub price_milliunits: Option<i64>,
    /// ISO 4217 currency code of the price, when Apple gives it.
    pub currency: Option<String>,
    /// Where the transaction happened; only `Production` moves money.
    pub environment: AppleEnvironment,
    /// When Apple refunded or revoked the transaction, ms since the epoch.
    pub revocation_date_ms: Option<i64>,
    /// The UUID the game attached to the purchase (`appAccountToken`), when it did: a way
    /// to tie the transaction to a player.
    pub app_account_token: Option<String>,
}

/// The kind of an App Store server notification, as far as purchases and revenue go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AppleNotificationKind {
    /// Apple refunded the transaction: take back what it granted and its revenue.
    Refund,
    /// Family sharing access was revoked: the purchase no longer belongs to the player.
    Revoke,
    /// A refund was reversed: the purchase stands again.
    RefundReversed,
    /// Any other notification type (subscriptions, tests, consumption requests, ...), with
    /// Apple's name for it.
    Other(String),
}

impl AppleNotificationKind {
    /// Reads Apple's `notificationType`.
    pub(crate) fn parse(text: &str) -> AppleNotificationKind {
        match text {
            "REFUND" => AppleNotificationKind::Refund,
            "REVOKE" => AppleNotificationKind::Revoke,
            "REFUND_REVERSED" => AppleNotificationKind::RefundReversed,
            other => AppleNotificationKind::Other(other.to_string()),
        }
    }
}

/// A verified App Store Server Notification V2.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppleNotification {
    /// Apple's `notificationUUID`: the key to apply a notification once (Apple retries).
    pub uuid: String,
    /// What happened.
    pub kind: AppleNotificationKind,
    /// When Apple signed the notification, ms since the epoch.
    pub signed_date_ms: i64,
    /// The environment the notification is about.
    pub environment: AppleEnvironment,
    /// The transaction it is about, verified like any signed transaction; `None` for the
    /// notifications that carry none (e.g. `TEST`).
    pub transaction: Option<AppleTransaction>,
}
