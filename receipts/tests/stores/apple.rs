//! StoreKit 2 signed transactions.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use offer_receipts::test_support::{
    TestAppleCa, TestAppleCaOptions, TestCurve, TestValidity, transaction_payload,
};
use offer_receipts::{
    AppleEnvironment, AppleExpect, AppleRoots, ReceiptError, verify_apple_transaction,
};
use serde_json::{Value, json};

use crate::APP;

const EXPECT: AppleExpect<'static> = AppleExpect {
    bundle_id: APP,
    app_apple_id: None,
};

fn roots_of(ca: &TestAppleCa) -> AppleRoots {
    AppleRoots::with_extra_pem(&ca.root_pem()).expect("the test root loads")
}

fn payload() -> Value {
    transaction_payload(
        APP,
        "gems_100",
        "2000000000000001",
        AppleEnvironment::Production,
        3,
    )
}

fn now_ms() -> i64 {
    payload()["signedDate"]
        .as_i64()
        .expect("signedDate is a number")
}

#[test]
fn a_genuine_transaction_verifies_and_reads() {
    let ca = TestAppleCa::new();
    let transaction =
        verify_apple_transaction(&ca.sign(&payload()), &roots_of(&ca), &EXPECT).expect("verifies");
    assert_eq!(transaction.transaction_id, "2000000000000001");
    assert_eq!(transaction.original_transaction_id, "2000000000000001");
    assert_eq!(transaction.product_id, "gems_100");
    assert_eq!(transaction.bundle_id, APP);
    assert_eq!(transaction.quantity, 3);
    assert_eq!(transaction.kind, "Consumable");
    assert_eq!(transaction.price_milliunits, Some(990));
    assert_eq!(transaction.currency.as_deref(), Some("USD"));
    assert_eq!(transaction.environment, AppleEnvironment::Production);
    assert_eq!(transaction.revocation_date_ms, None);
    assert!(transaction.signed_date_ms > 1_700_000_000_000);
}

#[test]
fn optional_fields_and_every_environment_read() {
    let ca = TestAppleCa::new();
    for environment in [
        AppleEnvironment::Production,
        AppleEnvironment::Sandbox,
        AppleEnvironment::Xcode,
    ] {
        let mut payload = transaction_payload(APP, "gems_100", "7", environment, 1);
        let object = payload.as_object_mut().expect("an object");
        object.remove("price");
        object.remove("currency");
        object.insert("revocationDate".into(), json!(1_800_000_000_000_i64));
        object.insert(
            "appAccountToken".into(),
            json!("7f6b1c2e-5a43-4e8f-9b7d-1c2e3f4a5b6c"),
        );
        let transaction = verify_apple_transaction(&ca.sign(&payload), &roots_of(&ca), &EXPECT)
            .expect("verifies");
        assert_eq!(transaction.environment, environment);
        assert_eq!(transaction.price_milliunits, None);
        assert_eq!(transaction.currency, None);
        assert_eq!(transaction.revocation_date_ms, Some(1_800_000_000_000));
        assert_eq!(
            transaction.app_account_token.as_deref(),
            Some("7f6b1c2e-5a43-4e8f-9b7d-1c2e3f4a5b6c")
        );
    }
}

#[test]
fn a_p256_root_verifies_too() {
    let ca = TestAppleCa::with_options(TestAppleCaOptions {
        root_curve: TestCurve::P256,
        ..TestAppleCaOptions::default()
    });
    assert!(verify_apple_transaction(&ca.sign(&payload()), &roots_of(&ca), &EXPECT).is_ok());
}

#[test]
fn the_built_in_root_loads_and_trusts_no_test_chain() {
    let roots = AppleRoots::apple();
    assert_eq!(roots.roots_der().len(), 1);
    let ca = TestAppleCa::new();
    assert_eq!(
        verify_apple_transaction(&ca.sign(&payload()), &roots, &EXPECT),
        Err(ReceiptError::UntrustedRoot)
    );
    assert_eq!(roots_of(&ca).roots_der().len(), 2);
}

#[test]
fn a_chain_ending_in_another_root_is_refused() {
    let signer = TestAppleCa::new();
    let trusted = TestAppleCa::new();
    assert_eq!(
        verify_apple_transaction(&signer.sign(&payload()), &roots_of(&trusted), &EXPECT),
        Err(ReceiptError::UntrustedRoot)
    );
}

#[test]
fn a_trusted_root_that_did_not_sign_the_intermediate_is_refused() {
    let signer = TestAppleCa::new();
    let trusted = TestAppleCa::new();
    let mut x5c = signer.x5c();
    x5c[2] = trusted.x5c()[2].clone();
    let jws = signer.sign_with_header(&json!({"alg": "ES256", "x5c": x5c}), &payload());
    assert!(matches!(
        verify_apple_transaction(&jws, &roots_of(&trusted), &EXPECT),
        Err(ReceiptError::Chain(reason)) if reason.contains("intermediate")
    ));
}

#[test]
fn a_leaf_without_the_receipt_signing_extension_is_refused() {
    let ca = TestAppleCa::with_options(TestAppleCaOptions {
        leaf_receipt_extension: false,
        ..TestAppleCaOptions::default()
    });
    assert!(matches!(
        verify_apple_transaction(&ca.sign(&payload()), &roots_of(&ca), &EXPECT),
        Err(ReceiptError::MissingExtension(name)) if name.contains("receipt signing")
    ));
}

#[test]
fn an_intermediate_without_the_wwdr_extension_is_refused() {
    let ca = TestAppleCa::with_options(TestAppleCaOptions {
        intermediate_wwdr_extension: false,
        ..TestAppleCaOptions::default()
    });
    assert!(matches!(
        verify_apple_transaction(&ca.sign(&payload()), &roots_of(&ca), &EXPECT),
        Err(ReceiptError::MissingExtension(name)) if name.contains("WWDR")
    ));
}

#[test]
fn a_certificate_expired_at_the_signing_date_is_refused() {
    let now = now_ms();
    let ca = TestAppleCa::with_options(TestAppleCaOptions {
        leaf_validity: TestValidity {
            not_before_ms: now - 30 * 86_400_000,
            not_after_ms: now - 86_400_000,
        },
        ..TestAppleCaOptions::default()
    });
    assert_eq!(
        verify_apple_transaction(&ca.sign(&payload()), &roots_of(&ca), &EXPECT),
        Err(ReceiptError::CertificateExpired)
    );
}

#[test]
fn a_certificate_not_yet_valid_at_the_signing_date_is_refused() {
    let now = now_ms();
    let ca = TestAppleCa::with_options(TestAppleCaOptions {
        intermediate_validity: TestValidity {
            not_before_ms: now + 86_400_000,
            not_after_ms: now + 30 * 86_400_000,
        },
        ..TestAppleCaOptions::default()
    });
    assert_eq!(
        verify_apple_transaction(&ca.sign(&payload()), &roots_of(&ca), &EXPECT),
        Err(ReceiptError::CertificateExpired)
    );
}

#[test]
fn certificates_are_judged_at_the_signing_date_not_now() {
    // The leaf is valid from now on; a payload that claims to be signed a year ago is not.
    let now = now_ms();
    let ca = TestAppleCa::with_options(TestAppleCaOptions {
        leaf_validity: TestValidity {
            not_before_ms: now - 86_400_000,
            not_after_ms: now + 86_400_000,
        },
        ..TestAppleCaOptions::default()
    });
    let roots = roots_of(&ca);
    assert!(verify_apple_transaction(&ca.sign(&payload()), &roots, &EXPECT).is_ok());
    let mut old = payload();
    old["signedDate"] = json!(now - 365 * 86_400_000);
    assert_eq!(
        verify_apple_transaction(&ca.sign(&old), &roots, &EXPECT),
        Err(ReceiptError::CertificateExpired)
    );
}

#[test]
fn another_bundle_id_is_refused() {
    let ca = TestAppleCa::new();
    let other = AppleExpect {
        bundle_id: "com.other.game",
        app_apple_id: None,
    };
    assert_eq!(
        verify_apple_transaction(&ca.sign(&payload()), &roots_of(&ca), &other),
        Err(ReceiptError::WrongBundle)
    );
}

#[test]
fn algorithms_other_than_es256_are_refused() {
    let ca = TestAppleCa::new();
    let roots = roots_of(&ca);
    for alg in ["none", "HS256", "RS256", "ES384", "es256", ""] {
        let jws = ca.sign_with_header(&json!({"alg": alg, "x5c": ca.x5c()}), &payload());
        assert_eq!(
            verify_apple_transaction(&jws, &roots, &EXPECT),
            Err(ReceiptError::Algorithm(alg.into())),
            "alg {alg:?}"
        );
    }
    // `none` as attackers send it: no signature at all.
    let genuine = ca.sign(&payload());
    let payload_segment = genuine.split('.').nth(1).expect("a payload segment");
    let unsigned = format!(
        "{}.{payload_segment}.",
        URL_SAFE_NO_PAD.encode(json!({"alg": "none"}).to_string())
    );
    assert_eq!(
        verify_apple_transaction(&unsigned, &roots, &EXPECT),
        Err(ReceiptError::Algorithm("none".into()))
    );
}

#[test]
fn a_tampered_payload_is_refused() {
    let ca = TestAppleCa::new();
    let genuine = ca.sign(&payload());
    let mut richer = payload();
    richer["quantity"] = json!(100);
    let forged_payload = URL_SAFE_NO_PAD.encode(richer.to_string());
    let parts: Vec<&str> = genuine.split('.').collect();
    let forged = format!("{}.{forged_payload}.{}", parts[0], parts[2]);
    assert_eq!(
        verify_apple_transaction(&forged, &roots_of(&ca), &EXPECT),
        Err(ReceiptError::Signature)
    );
}

#[test]
fn a_signature_by_another_leaf_is_refused() {
    let ca = TestAppleCa::new();
    let impostor = TestAppleCa::new();
    let jws = impostor.sign_with_header(&json!({"alg": "ES256", "x5c": ca.x5c()}), &payload());
    assert_eq!(
        verify_apple_transaction(&jws, &roots_of(&ca), &EXPECT),
        Err(ReceiptError::Signature)
    );
}

#[test]
fn chains_of_two_or_four_certificates_are_refused() {
    let ca = TestAppleCa::new();
    let roots = roots_of(&ca);
    let x5c = ca.x5c();
    let two = vec![x5c[0].clone(), x5c[2].clone()];
    let four = vec![
        x5c[0].clone(),
        x5c[1].clone(),
        x5c[1].clone(),
        x5c[2].clone(),
    ];
    for chain in [two, four, Vec::new()] {
        let jws = ca.sign_with_header(&json!({"alg": "ES256", "x5c": chain}), &payload());
        assert!(matches!(
            verify_apple_transaction(&jws, &roots, &EXPECT),
            Err(ReceiptError::Chain(_))
        ));
    }
}

#[test]
fn an_unknown_environment_or_a_missing_field_is_malformed() {
    let ca = TestAppleCa::new();
    let roots = roots_of(&ca);
    let mut staging = payload();
    staging["environment"] = json!("Staging");
    assert!(matches!(
        verify_apple_transaction(&ca.sign(&staging), &roots, &EXPECT),
        Err(ReceiptError::Malformed(_))
    ));
    let mut no_product = payload();
    no_product
        .as_object_mut()
        .expect("an object")
        .remove("productId");
    assert!(matches!(
        verify_apple_transaction(&ca.sign(&no_product), &roots, &EXPECT),
        Err(ReceiptError::Malformed(reason)) if reason.contains("productId")
    ));
}

#[test]
fn an_oversized_jws_is_refused_unread() {
    let ca = TestAppleCa::new();
    let mut padded = payload();
    padded["padding"] = json!("x".repeat(16 * 1024));
    assert_eq!(
        verify_apple_transaction(&ca.sign(&padded), &roots_of(&ca), &EXPECT),
        Err(ReceiptError::TooLarge)
    );
}
