//! Google Play purchases and Real-time Developer Notifications.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use offer_receipts::test_support::{
    TestGoogleKey, pubsub_test_notification, pubsub_voided, purchase_json,
};
use offer_receipts::{
    GoogleKey, GooglePurchaseState, ReceiptError, parse_google_notification, verify_google_purchase,
};
use serde_json::json;

use crate::APP;

fn key() -> GoogleKey {
    GoogleKey::from_base64_der(&TestGoogleKey::new().public_base64()).expect("the key loads")
}

#[test]
fn a_genuine_purchase_verifies_and_reads() {
    let data = purchase_json(APP, "gems_100", "token-1", GooglePurchaseState::Purchased);
    let signature = TestGoogleKey::new().sign(&data);
    let purchase = verify_google_purchase(&data, &signature, &key(), APP).expect("verifies");
    assert_eq!(purchase.package_name, APP);
    assert_eq!(purchase.product_id, "gems_100");
    assert_eq!(purchase.purchase_token, "token-1");
    assert_eq!(purchase.purchase_state, GooglePurchaseState::Purchased);
    assert_eq!(purchase.quantity, 1);
    assert!(purchase.order_id.is_some());
    assert!(purchase.purchase_time_ms > 1_700_000_000_000);
}

#[test]
fn quantity_defaults_to_one_and_order_id_is_optional() {
    let data = json!({
        "packageName": APP,
        "productId": "gems_100",
        "purchaseTime": 1_700_000_000_000_i64,
        "purchaseState": 0,
        "purchaseToken": "token-2",
    })
    .to_string();
    let signature = TestGoogleKey::new().sign(&data);
    let purchase = verify_google_purchase(&data, &signature, &key(), APP).expect("verifies");
    assert_eq!(purchase.quantity, 1);
    assert_eq!(purchase.order_id, None);
}

#[test]
fn a_key_pasted_over_lines_loads() {
    let text = TestGoogleKey::new().public_base64();
    let (head, tail) = text.split_at(64);
    assert!(GoogleKey::from_base64_der(&format!("{head}\n{tail}\n")).is_ok());
}

#[test]
fn a_signature_by_another_key_is_refused() {
    let data = purchase_json(APP, "gems_100", "token-1", GooglePurchaseState::Purchased);
    let signature = TestGoogleKey::other().sign(&data);
    assert_eq!(
        verify_google_purchase(&data, &signature, &key(), APP),
        Err(ReceiptError::Signature)
    );
}

#[test]
fn tampered_purchase_json_is_refused() {
    let data = purchase_json(APP, "gems_100", "token-1", GooglePurchaseState::Purchased);
    let signature = TestGoogleKey::new().sign(&data);
    let richer = data.replace("gems_100", "gems_999");
    assert_ne!(richer, data);
    assert_eq!(
        verify_google_purchase(&richer, &signature, &key(), APP),
        Err(ReceiptError::Signature)
    );
    // The same JSON with other whitespace is other bytes: still refused.
    let spaced = data.replace(',', ", ");
    assert_eq!(
        verify_google_purchase(&spaced, &signature, &key(), APP),
        Err(ReceiptError::Signature)
    );
}

#[test]
fn pending_and_cancelled_purchases_are_not_purchased() {
    for state in [GooglePurchaseState::Pending, GooglePurchaseState::Cancelled] {
        let data = purchase_json(APP, "gems_100", "token-1", state);
        let signature = TestGoogleKey::new().sign(&data);
        assert_eq!(
            verify_google_purchase(&data, &signature, &key(), APP),
            Err(ReceiptError::NotPurchased)
        );
    }
}

#[test]
fn another_package_is_refused() {
    let data = purchase_json(
        "com.other.game",
        "gems_100",
        "token-1",
        GooglePurchaseState::Purchased,
    );
    let signature = TestGoogleKey::new().sign(&data);
    assert_eq!(
        verify_google_purchase(&data, &signature, &key(), APP),
        Err(ReceiptError::WrongPackage)
    );
}

#[test]
fn a_1024_bit_key_is_refused() {
    assert_eq!(
        GoogleKey::from_base64_der(&TestGoogleKey::weak().public_base64()).err(),
        Some(ReceiptError::KeyTooWeak)
    );
}

#[test]
fn a_signature_that_is_not_base64_is_malformed() {
    let data = purchase_json(APP, "gems_100", "token-1", GooglePurchaseState::Purchased);
    assert!(matches!(
        verify_google_purchase(&data, "not base64!", &key(), APP),
        Err(ReceiptError::Malformed(_))
    ));
    assert_eq!(
        verify_google_purchase(&data, &STANDARD.encode([1u8; 16]), &key(), APP),
        Err(ReceiptError::Signature)
    );
}

#[test]
fn a_voided_purchase_notification_reads() {
    let body = pubsub_voided(APP, "token-1", "msg-1", 1);
    let read = parse_google_notification(&body).expect("parses");
    assert_eq!(read.message_id, "msg-1");
    assert_eq!(read.package_name, APP);
    assert!(read.event_time_ms > 1_700_000_000_000);
    let voided = read.voided.expect("a voided purchase");
    assert_eq!(voided.purchase_token, "token-1");
    assert_eq!(voided.product_type, 2);
    assert_eq!(voided.refund_type, 1);
    assert!(voided.order_id.is_some());
}

#[test]
fn a_test_notification_is_not_a_voided_purchase() {
    let read = parse_google_notification(&pubsub_test_notification(APP, "msg-2")).expect("parses");
    assert_eq!(read.message_id, "msg-2");
    assert_eq!(read.voided, None);
}

#[test]
fn pushes_with_one_spelling_of_the_id_or_a_numeric_time_read() {
    let data = STANDARD
        .encode(json!({"packageName": APP, "eventTimeMillis": 1_700_000_000_000_i64}).to_string());
    let body = json!({"message": {"data": data, "message_id": "msg-3"}, "subscription": "s"});
    let read = parse_google_notification(body.to_string().as_bytes()).expect("parses");
    assert_eq!(read.message_id, "msg-3");
    assert_eq!(read.event_time_ms, 1_700_000_000_000);
}

#[test]
fn malformed_pushes_are_refused() {
    let no_id = json!({"message": {"data": STANDARD.encode("{}")}}).to_string();
    let bad_data = json!({"message": {"data": "%%%", "messageId": "m"}}).to_string();
    let not_json_inside =
        json!({"message": {"data": STANDARD.encode("nope"), "messageId": "m"}}).to_string();
    for body in [
        no_id.as_str(),
        bad_data.as_str(),
        not_json_inside.as_str(),
        "",
        "[]",
    ] {
        assert!(
            matches!(
                parse_google_notification(body.as_bytes()),
                Err(ReceiptError::Malformed(_))
            ),
            "{body}"
        );
    }
    assert_eq!(
        parse_google_notification(&vec![b' '; 65 * 1024]),
        Err(ReceiptError::TooLarge)
    );
}
