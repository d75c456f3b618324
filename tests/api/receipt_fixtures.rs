//! What the receipt and refund tests share: a server trusting a test certificate
//! authority's root as an App Store root, the test app's identifiers, and receipts signed by
//! the test authority and the test Google key.

use offer_receipts::test_support::{
    TestAppleCa, TestGoogleKey, purchase_json, transaction_payload,
};
use offer_receipts::{AppleEnvironment, GooglePurchaseState};
use serde_json::{Value, json};

use super::fixtures::{item, with};
use super::helpers::{Backend, TestApp, scratch_dir, spawn_tuned};

/// The test app's App Store bundle id.
pub const BUNDLE_ID: &str = "com.studio.game";
/// The test app's Google Play package name.
pub const PACKAGE: &str = "com.studio.game";

/// A server on `backend` trusting `ca`'s root as an App Store root, whose economy figures
/// are read fresh (not from the cache) right after a purchase.
pub async fn server(ca: &TestAppleCa, backend: Backend) -> TestApp {
    let path = scratch_dir().join("apple-test-root.pem");
    std::fs::write(&path, ca.root_pem()).expect("write the test root");
    spawn_tuned(backend, move |s| {
        s.stores.app_store_roots = vec![path];
        s.economy.figures_cache_ms = 0;
    })
    .await
}

/// A StoreKit 2 signed transaction of `quantity` units of `product`, in production.
pub fn apple_jws(ca: &TestAppleCa, product: &str, transaction_id: &str, quantity: u32) -> String {
    ca.sign(&transaction_payload(
        BUNDLE_ID,
        product,
        transaction_id,
        AppleEnvironment::Production,
        quantity,
    ))
}

/// The `receipt` of an App Store purchase of `quantity` units of `product`.
pub fn apple_receipt(
    ca: &TestAppleCa,
    product: &str,
    transaction_id: &str,
    quantity: u32,
) -> Value {
    json!({"store": "app_store", "signed_transaction": apple_jws(ca, product, transaction_id, quantity)})
}

/// The `receipt` of a Google Play purchase of `product` with purchase token `token`.
pub fn google_receipt(key: &TestGoogleKey, product: &str, token: &str) -> Value {
    let data = purchase_json(PACKAGE, product, token, GooglePurchaseState::Purchased);
    json!({"store": "google_play", "signature": key.sign(&data), "purchase_data": data})
}

/// A sword at 4.99, sold on both stores (`com.studio.game.sword`, `sword`).
pub fn sword() -> Value {
    with(
        item("sword", "equipment", 4.99),
        json!({"store_products": {"app_store": "com.studio.game.sword", "google_play": "sword"}}),
    )
}

/// A stack of 3 potions at 0.99, sold on the App Store (`com.studio.game.potion`).
pub fn potion() -> Value {
    with(
        item("potion", "consumable", 0.99),
        json!({"quantity": 3, "store_products": {"app_store": "com.studio.game.potion"}}),
    )
}
