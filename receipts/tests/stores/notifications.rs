//! App Store Server Notifications V2.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use offer_receipts::test_support::{
    TEST_APP_APPLE_ID, TestAppleCa, notification, transaction_payload,
};
use offer_receipts::{
    AppleEnvironment, AppleExpect, AppleNotificationKind, AppleRoots, ReceiptError,
    apple_signed_payload, verify_apple_notification,
};
use serde_json::json;

use crate::APP;

const EXPECT: AppleExpect<'static> = AppleExpect {
    bundle_id: APP,
    app_apple_id: Some(TEST_APP_APPLE_ID),
};

fn inner(ca: &TestAppleCa) -> String {
    ca.sign(&transaction_payload(
        APP,
        "gems_100",
        "2000000000000042",
        AppleEnvironment::Sandbox,
        1,
    ))
}

#[test]
fn refund_revoke_and_reversal_read_with_their_transaction() {
    let ca = TestAppleCa::new();
    let roots = AppleRoots::with_extra_pem(&ca.root_pem()).expect("the test root loads");
    for (kind, expected) in [
        ("REFUND", AppleNotificationKind::Refund),
        ("REVOKE", AppleNotificationKind::Revoke),
        ("REFUND_REVERSED", AppleNotificationKind::RefundReversed),
        (
            "CONSUMPTION_REQUEST",
            AppleNotificationKind::Other("CONSUMPTION_REQUEST".into()),
        ),
    ] {
        let signed = ca.sign(&notification(kind, "uuid-1", &inner(&ca), APP));
        let read = verify_apple_notification(&signed, &roots, &EXPECT).expect("verifies");
        assert_eq!(read.kind, expected);
        assert_eq!(read.uuid, "uuid-1");
        assert_eq!(read.environment, AppleEnvironment::Sandbox);
        assert!(read.signed_date_ms > 1_700_000_000_000);
        let transaction = read.transaction.expect("the transaction is carried");
        assert_eq!(transaction.transaction_id, "2000000000000042");
        assert_eq!(transaction.product_id, "gems_100");
    }
}

#[test]
fn the_body_apple_posts_yields_the_signed_payload() {
    let body = json!({"signedPayload": "a.b.c"}).to_string();
    assert_eq!(
        apple_signed_payload(body.as_bytes()).as_deref(),
        Ok("a.b.c")
    );
    assert!(matches!(
        apple_signed_payload(b"{}"),
        Err(ReceiptError::Malformed(_))
    ));
}

#[test]
fn a_notification_without_a_transaction_reads() {
    let ca = TestAppleCa::new();
    let roots = AppleRoots::with_extra_pem(&ca.root_pem()).expect("the test root loads");
    let mut payload = notification("TEST", "uuid-test", &inner(&ca), APP);
    payload["data"]
        .as_object_mut()
        .expect("data is an object")
        .remove("signedTransactionInfo");
    let read = verify_apple_notification(&ca.sign(&payload), &roots, &EXPECT).expect("verifies");
    assert_eq!(read.kind, AppleNotificationKind::Other("TEST".into()));
    assert_eq!(read.transaction, None);
}

#[test]
fn a_tampered_inner_transaction_is_refused() {
    let ca = TestAppleCa::new();
    let roots = AppleRoots::with_extra_pem(&ca.root_pem()).expect("the test root loads");
    let genuine = inner(&ca);
    let parts: Vec<&str> = genuine.split('.').collect();
    let mut richer = transaction_payload(
        APP,
        "gems_100000",
        "2000000000000042",
        AppleEnvironment::Sandbox,
        1,
    );
    richer["quantity"] = json!(50);
    let forged = format!(
        "{}.{}.{}",
        parts[0],
        URL_SAFE_NO_PAD.encode(richer.to_string()),
        parts[2]
    );
    let signed = ca.sign(&notification("REFUND", "uuid-2", &forged, APP));
    assert_eq!(
        verify_apple_notification(&signed, &roots, &EXPECT),
        Err(ReceiptError::Signature)
    );
}

#[test]
fn an_inner_transaction_of_an_untrusted_chain_is_refused() {
    let ca = TestAppleCa::new();
    let stranger = TestAppleCa::new();
    let roots = AppleRoots::with_extra_pem(&ca.root_pem()).expect("the test root loads");
    let signed = ca.sign(&notification("REFUND", "uuid-3", &inner(&stranger), APP));
    assert_eq!(
        verify_apple_notification(&signed, &roots, &EXPECT),
        Err(ReceiptError::UntrustedRoot)
    );
}

#[test]
fn a_tampered_notification_is_refused() {
    let ca = TestAppleCa::new();
    let roots = AppleRoots::with_extra_pem(&ca.root_pem()).expect("the test root loads");
    let genuine = ca.sign(&notification("REFUND_REVERSED", "uuid-4", &inner(&ca), APP));
    let parts: Vec<&str> = genuine.split('.').collect();
    let other =
        URL_SAFE_NO_PAD.encode(notification("REFUND", "uuid-4", &inner(&ca), APP).to_string());
    let forged = format!("{}.{other}.{}", parts[0], parts[2]);
    assert_eq!(
        verify_apple_notification(&forged, &roots, &EXPECT),
        Err(ReceiptError::Signature)
    );
}

#[test]
fn another_app_is_refused_by_app_id_and_by_bundle() {
    let ca = TestAppleCa::new();
    let roots = AppleRoots::with_extra_pem(&ca.root_pem()).expect("the test root loads");
    let signed = ca.sign(&notification("REFUND", "uuid-5", &inner(&ca), APP));
    let other_app = AppleExpect {
        bundle_id: APP,
        app_apple_id: Some(TEST_APP_APPLE_ID + 1),
    };
    assert_eq!(
        verify_apple_notification(&signed, &roots, &other_app),
        Err(ReceiptError::WrongApp)
    );
    let any_app = AppleExpect {
        bundle_id: APP,
        app_apple_id: None,
    };
    assert!(verify_apple_notification(&signed, &roots, &any_app).is_ok());
    let other_bundle = AppleExpect {
        bundle_id: "com.other.game",
        app_apple_id: Some(TEST_APP_APPLE_ID),
    };
    assert_eq!(
        verify_apple_notification(&signed, &roots, &other_bundle),
        Err(ReceiptError::WrongBundle)
    );
}

#[test]
fn a_transaction_of_another_environment_is_refused() {
    let ca = TestAppleCa::new();
    let roots = AppleRoots::with_extra_pem(&ca.root_pem()).expect("the test root loads");
    let mut payload = notification("REFUND", "uuid-6", &inner(&ca), APP);
    payload["data"]["environment"] = json!("Production");
    assert!(matches!(
        verify_apple_notification(&ca.sign(&payload), &roots, &EXPECT),
        Err(ReceiptError::Malformed(_))
    ));
}
