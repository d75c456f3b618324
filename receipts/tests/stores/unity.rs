//! Unity IAP receipts, unwrapped and then verified by the store's verifier.

use offer_receipts::test_support::{
    TestAppleCa, TestGoogleKey, purchase_json, transaction_payload, unity_apple, unity_google,
};
use offer_receipts::{
    AppleEnvironment, AppleExpect, AppleRoots, GoogleKey, GooglePurchaseState, ReceiptError,
    UnityReceipt, parse_unity_receipt, verify_apple_transaction, verify_google_purchase,
};

use crate::APP;

#[test]
fn a_google_play_receipt_unwraps_and_verifies() {
    let signer = TestGoogleKey::new();
    let data = purchase_json(APP, "gems_100", "token-9", GooglePurchaseState::Purchased);
    let signature = signer.sign(&data);
    let receipt = parse_unity_receipt(&unity_google(&data, &signature)).expect("parses");
    let UnityReceipt::GooglePlay {
        purchase_data,
        signature: carried,
    } = receipt
    else {
        panic!("a Google Play receipt");
    };
    assert_eq!(purchase_data, data);
    assert_eq!(carried, signature);
    let key = GoogleKey::from_base64_der(&signer.public_base64()).expect("the key loads");
    let purchase = verify_google_purchase(&purchase_data, &carried, &key, APP).expect("verifies");
    assert_eq!(purchase.purchase_token, "token-9");
}

#[test]
fn an_app_store_receipt_with_a_signed_transaction_unwraps_and_verifies() {
    let ca = TestAppleCa::new();
    let jws = ca.sign(&transaction_payload(
        APP,
        "gems_100",
        "2000000000000077",
        AppleEnvironment::Sandbox,
        1,
    ));
    let receipt = parse_unity_receipt(&unity_apple(&jws)).expect("parses");
    assert_eq!(
        receipt,
        UnityReceipt::AppStore {
            signed_transaction: jws.clone()
        }
    );
    let roots = AppleRoots::with_extra_pem(&ca.root_pem()).expect("the test root loads");
    let expect = AppleExpect {
        bundle_id: APP,
        app_apple_id: None,
    };
    let transaction = verify_apple_transaction(&jws, &roots, &expect).expect("verifies");
    assert_eq!(transaction.transaction_id, "2000000000000077");
}

#[test]
fn an_app_store_pkcs7_receipt_is_refused() {
    let pkcs7 = "MIIT+gYJKoZIhvcNAQcCoIIT6zCCE+cCAQExCzAJBgUrDgMCGgUAMIIDmwYJKoZIhvcNAQcBoIIDjASCA4gxggOEMAoCAQgCAQEEAhYAMAoCARQCAQEEAgwAMAsCAQECAQEEAwIBADALAgEDAgEBBAMMATEwCwIBCwIBAQQDAgEAMAsCAQ8CAQEEAwIBADALAgEQAgEBBAMCAQAwCwIBGQIBAQQDAgED";
    assert!(matches!(
        parse_unity_receipt(&unity_apple(pkcs7)),
        Err(ReceiptError::Unsupported(_))
    ));
}
