//! Google Play: purchases signed with the app's licensing key, and Real-time Developer
//! Notifications pushed by Pub/Sub.

mod key;
mod notification;
mod purchase;

pub use key::GoogleKey;
pub use notification::{GoogleNotification, GoogleVoided, parse_google_notification};
pub use purchase::{GooglePurchase, GooglePurchaseState, verify_google_purchase};
