//! Test stand-ins for the stores, to exercise the verifiers end to end (feature
//! `test-support`, never in a release build): an Apple-shaped certificate authority that
//! signs StoreKit 2 JWS, a Google Play licensing key that signs purchases, and builders for
//! the payloads and wrappers the stores and Unity send.
//!
//! These helpers panic on failure (they are test fixtures): a failure here is a broken test,
//! not an input to handle.

mod apple_ca;
mod google_key;
mod payloads;

pub use apple_ca::{TestAppleCa, TestAppleCaOptions, TestCurve, TestValidity};
pub use google_key::TestGoogleKey;
pub use payloads::{
    TEST_APP_APPLE_ID, notification, pubsub_test_notification, pubsub_voided, purchase_json,
    transaction_payload, unity_apple, unity_google,
};
