//! A stand-in for an app's Google Play licensing key: RSA keys made from fixed seeds, once
//! per process (RSA key generation is the slow part of these tests).

use std::sync::LazyLock;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use rand_chacha::ChaCha8Rng;
use rand_core::SeedableRng as _;
use rsa::RsaPrivateKey;
use rsa::pkcs8::EncodePublicKey as _;
use rsa::signature::{SignatureEncoding as _, Signer as _};
use sha1::Sha1;

/// The usual test key: RSA 2048.
static KEY: LazyLock<RsaPrivateKey> = LazyLock::new(|| generate(1, 2048));
/// Another app's key, to sign what the usual key must refuse.
static OTHER: LazyLock<RsaPrivateKey> = LazyLock::new(|| generate(2, 2048));
/// A key too short to be accepted.
static WEAK: LazyLock<RsaPrivateKey> = LazyLock::new(|| generate(3, 1024));

/// An RSA key of `bits` from the fixed `seed`.
fn generate(seed: u64, bits: usize) -> RsaPrivateKey {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    RsaPrivateKey::new(&mut rng, bits).expect("RSA key generation")
}

/// A Google Play licensing key pair that signs purchases as Google does.
#[derive(Debug, Clone)]
pub struct TestGoogleKey {
    key: RsaPrivateKey,
}

impl Default for TestGoogleKey {
    fn default() -> Self {
        TestGoogleKey::new()
    }
}

impl TestGoogleKey {
    /// The test app's key (RSA 2048, the same in every call).
    pub fn new() -> TestGoogleKey {
        TestGoogleKey { key: KEY.clone() }
    }

    /// Another app's key (RSA 2048).
    pub fn other() -> TestGoogleKey {
        TestGoogleKey { key: OTHER.clone() }
    }

    /// An RSA 1024 key, which the verifier must refuse to load.
    pub fn weak() -> TestGoogleKey {
        TestGoogleKey { key: WEAK.clone() }
    }

    /// The public key as the Play Console shows it: base64 DER SubjectPublicKeyInfo.
    pub fn public_base64(&self) -> String {
        let der = self
            .key
            .to_public_key()
            .to_public_key_der()
            .expect("encoding an RSA public key");
        STANDARD.encode(der.as_bytes())
    }

    /// Google's signature of `purchase_json`: RSASSA-PKCS1-v1_5 with SHA-1, base64.
    pub fn sign(&self, purchase_json: &str) -> String {
        let signer = rsa::pkcs1v15::SigningKey::<Sha1>::new(self.key.clone());
        STANDARD.encode(signer.sign(purchase_json.as_bytes()).to_bytes())
    }
}
