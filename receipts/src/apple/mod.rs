//! The App Store: StoreKit 2 signed transactions and App Store Server Notifications V2.
//!
//! Both are JWS signed by Apple's receipt-signing key; [`crate::chain`] decides whether the
//! key is Apple's, the private `jws` module whether the signature holds, and this module reads and
//! checks the payload (dates, app, environment).

mod notification;
mod transaction;
mod types;

pub use notification::{apple_signed_payload, verify_apple_notification};
pub use transaction::verify_apple_transaction;
pub use types::{
    AppleEnvironment, AppleExpect, AppleNotification, AppleNotificationKind, AppleTransaction,
};
