//! Verifies and reads what the app stores sign, with no I/O: App Store (StoreKit 2) signed
//! transactions and server notifications, Google Play purchases and Real-time Developer
//! Notifications, and the Unity IAP receipts that wrap them.
//!
//! Everything is a pure function of its input, the trusted keys and roots: no clock (a
//! certificate is judged at the date the store signed, not now), no network, no storage.
//! Every input is size-bounded and no input panics. `docs/receipts.md` tells what is checked
//! and why.
//!
//! Modules: [`apple`] (App Store payloads), [`chain`] (Apple's certificate chains and roots),
//! [`google`] (Google Play), [`unity`] (Unity IAP), [`error`]; the JWS reading, base64 and
//! JSON helpers are private. With the `test-support` feature, `test_support` builds test
//! certificate authorities, keys and payloads.

pub mod apple;
pub mod chain;
mod encoding;
pub mod error;
pub mod google;
mod json;
mod jws;
#[cfg(feature = "test-support")]
pub mod test_support;
pub mod unity;

pub use apple::{
    AppleEnvironment, AppleExpect, AppleNotification, AppleNotificationKind, AppleTransaction,
    apple_signed_payload, verify_apple_notification, verify_apple_transaction,
};
pub use chain::AppleRoots;
pub use error::ReceiptError;
pub use google::{
    GoogleKey, GoogleNotification, GooglePurchase, GooglePurchaseState, GoogleVoided,
    parse_google_notification, verify_google_purchase,
};
pub use unity::{UnityReceipt, parse_unity_receipt};
