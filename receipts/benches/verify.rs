//! Verification speed: one App Store signed transaction (certificate chain, two certificate
//! signatures and the ES256 signature) and one Google Play purchase (an RSA 2048 SHA-1
//! signature), each verified in full.

use criterion::{Criterion, criterion_group, criterion_main};
use offer_receipts::test_support::{
    TestAppleCa, TestGoogleKey, purchase_json, transaction_payload,
};
use offer_receipts::{
    AppleEnvironment, AppleExpect, AppleRoots, GoogleKey, GooglePurchaseState,
    verify_apple_transaction, verify_google_purchase,
};

const BUNDLE: &str = "com.studio.game";
const PACKAGE: &str = "com.studio.game";

fn apple(c: &mut Criterion) {
    let ca = TestAppleCa::new();
    let roots = AppleRoots::with_extra_pem(&ca.root_pem()).expect("the test root loads");
    let jws = ca.sign(&transaction_payload(
        BUNDLE,
        "gems_100",
        "2000000000000001",
        AppleEnvironment::Production,
        1,
    ));
    let expect = AppleExpect {
        bundle_id: BUNDLE,
        app_apple_id: None,
    };
    c.bench_function("verify_apple_transaction", |b| {
        b.iter(|| verify_apple_transaction(&jws, &roots, &expect).expect("verifies"))
    });
}

fn google(c: &mut Criterion) {
    let signer = TestGoogleKey::new();
    let key = GoogleKey::from_base64_der(&signer.public_base64()).expect("the key loads");
    let data = purchase_json(
        PACKAGE,
        "gems_100",
        "token-1",
        GooglePurchaseState::Purchased,
    );
    let signature = signer.sign(&data);
    c.bench_function("verify_google_purchase", |b| {
        b.iter(|| verify_google_purchase(&data, &signature, &key, PACKAGE).expect("verifies"))
    });
}

criterion_group!(benches, apple, google);
criterion_main!(benches);
