//! The store-receipt verifiers never panic on any input, and never accept what they cannot
//! have been given genuinely: nothing here holds Apple's or the test Google key's private
//! half, so every App Store JWS and Google purchase must be refused.
#![no_main]

use std::sync::LazyLock;

use libfuzzer_sys::fuzz_target;
use offer_receipts::{
    AppleExpect, AppleRoots, GoogleKey, ReceiptError, apple_signed_payload,
    parse_google_notification, parse_unity_receipt, verify_apple_notification,
    verify_apple_transaction, verify_google_purchase,
};

/// A fixed RSA 2048 public key (base64 DER SubjectPublicKeyInfo) whose private half is not
/// kept anywhere.
const GOOGLE_KEY: &str = "MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAxnSB3TjgxjqLU0hsmdQ1UppEnebKN8+1gK7Qe0wkVGyNDT97zFjzmD0b1GKnfsWGAeiyvrllAxjCj/e+ou2AAOxPSJnQ8xFagNlmJ+SjqZziJTFhXJ98lH80wGKWZDvJbjSz02Vg93iLp+fCtu8ePXw3CmEaaV+0Mvqx6F8co0yuL3GfsjhpfNgsL2LaRVoJMb9JQt0a6o0DtRIZ/NxyilnAaCj4VIcSr+OMIANWOJh4Jja919xo/p17WwQGq+3gedrpQhfeHa8xiqmmfOfF77GSe0x23WfaMJ2kx2d6esOMoeq7jRO1r4pUZ4fS4fNVvbPA4DGcoFrRLd3zjLBkyQIDAQAB";

static ROOTS: LazyLock<AppleRoots> = LazyLock::new(AppleRoots::apple);
static KEY: LazyLock<GoogleKey> =
    LazyLock::new(|| GoogleKey::from_base64_der(GOOGLE_KEY).expect("the fixed key loads"));

const EXPECT: AppleExpect<'static> = AppleExpect {
    bundle_id: "com.studio.game",
    app_apple_id: Some(1),
};

/// Every refusal has a reason and a message.
fn refused<T>(result: Result<T, ReceiptError>, what: &str) {
    match result {
        Ok(_) => panic!("{what} accepted an input it cannot have been signed for"),
        Err(error) => {
            assert!(!error.reason().is_empty());
            assert!(!error.to_string().is_empty());
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    refused(
        verify_apple_transaction(&text, &ROOTS, &EXPECT),
        "verify_apple_transaction",
    );
    refused(
        verify_apple_notification(&text, &ROOTS, &EXPECT),
        "verify_apple_notification",
    );
    if let Ok(payload) = apple_signed_payload(data) {
        refused(
            verify_apple_notification(&payload, &ROOTS, &EXPECT),
            "verify_apple_notification",
        );
    }
    // A purchase and its signature, one per line.
    let (purchase, signature) = text.split_once('\n').unwrap_or((&text, ""));
    refused(
        verify_google_purchase(purchase, signature, &KEY, "com.studio.game"),
        "verify_google_purchase",
    );
    let _ = parse_google_notification(data);
    let _ = parse_unity_receipt(&text);
    let _ = GoogleKey::from_base64_der(&text);
    let mut roots = AppleRoots::apple();
    let _ = roots.add_pem(&text);
});
