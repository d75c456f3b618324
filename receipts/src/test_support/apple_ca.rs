//! A certificate authority shaped like Apple's: a root, a WWDR-like intermediate and a
//! receipt-signing leaf, built with `rcgen`, whose leaf signs ES256 JWS with the chain in
//! `x5c`. Options break one property at a time, for the tests of each refusal.

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use p256::ecdsa::signature::Signer as _;
use rcgen::{
    BasicConstraints, CertificateParams, CustomExtension, DistinguishedName, DnType, IsCa, Issuer,
    KeyIdMethod, PublicKeyData, SignatureAlgorithm, SigningKey,
};
use sha2::Digest as _;
use time::OffsetDateTime;

/// Apple's receipt-signing extension, put on the leaf.
const RECEIPT_SIGNING_OID: &[u64] = &[1, 2, 840, 113635, 100, 6, 11, 1];
/// Apple's WWDR extension, put on the intermediate.
const WWDR_OID: &[u64] = &[1, 2, 840, 113635, 100, 6, 2, 1];

/// The curve of the test root's key (Apple's G3 root is P-384).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TestCurve {
    /// P-256 with SHA-256 signatures.
    P256,
    /// P-384 with SHA-384 signatures, as Apple's root.
    P384,
}

/// A certificate's validity window, in ms since the epoch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TestValidity {
    /// `notBefore`.
    pub not_before_ms: i64,
    /// `notAfter`.
    pub not_after_ms: i64,
}

impl TestValidity {
    /// 2020-01-01 to 2050-01-01: covers any payload signed now.
    pub const WIDE: TestValidity = TestValidity {
        not_before_ms: 1_577_836_800_000,
        not_after_ms: 2_524_608_000_000,
    };
}

/// What the test chain looks like.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TestAppleCaOptions {
    /// The root's curve.
    pub root_curve: TestCurve,
    /// Whether the leaf carries Apple's receipt-signing extension.
    pub leaf_receipt_extension: bool,
    /// Whether the intermediate carries Apple's WWDR extension.
    pub intermediate_wwdr_extension: bool,
    /// The root's validity.
    pub root_validity: TestValidity,
    /// The intermediate's validity.
    pub intermediate_validity: TestValidity,
    /// The leaf's validity.
    pub leaf_validity: TestValidity,
}

impl Default for TestAppleCaOptions {
    /// Apple's shape: a P-384 root, both extensions, wide validity windows.
    fn default() -> Self {
        TestAppleCaOptions {
            root_curve: TestCurve::P384,
            leaf_receipt_extension: true,
            intermediate_wwdr_extension: true,
            root_validity: TestValidity::WIDE,
            intermediate_validity: TestValidity::WIDE,
            leaf_validity: TestValidity::WIDE,
        }
    }
}

/// A test root, intermediate and leaf, and the leaf's key.
pub struct TestAppleCa {
    root_der: Vec<u8>,
    root_pem: String,
    intermediate_der: Vec<u8>,
    leaf_der: Vec<u8>,
    leaf_key: p256::ecdsa::SigningKey,
}

impl std::fmt::Debug for TestAppleCa {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestAppleCa")
            .field("root_pem", &self.root_pem)
            .finish_non_exhaustive()
    }
}

impl Default for TestAppleCa {
    fn default() -> Self {
        TestAppleCa::new()
    }
}

impl TestAppleCa {
    /// A chain of Apple's shape with fresh random keys: each call is another authority.
    pub fn new() -> TestAppleCa {
        TestAppleCa::with_options(TestAppleCaOptions::default())
    }

    /// A chain shaped by `options`, with fresh random keys.
    pub fn with_options(options: TestAppleCaOptions) -> TestAppleCa {
        let root_key = match options.root_curve {
            TestCurve::P256 => TestKey::p256(),
            TestCurve::P384 => TestKey::p384(),
        };
        let mut root_params = params("Test Apple Root CA - G3", options.root_validity, &root_key);
        root_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        let root = root_params
            .self_signed(&root_key)
            .expect("rcgen signs the test root");
        let root_issuer = Issuer::new(root_params, root_key);

        let intermediate_key = TestKey::p256();
        let mut intermediate_params = params(
            "Test Apple Worldwide Developer Relations Certification Authority",
            options.intermediate_validity,
            &intermediate_key,
        );
        intermediate_params.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
        if options.intermediate_wwdr_extension {
            intermediate_params
                .custom_extensions
                .push(CustomExtension::from_oid_content(
                    WWDR_OID,
                    vec![0x05, 0x00],
                ));
        }
        let intermediate = intermediate_params
            .signed_by(&intermediate_key, &root_issuer)
            .expect("rcgen signs the test intermediate");
        let intermediate_issuer = Issuer::new(intermediate_params, intermediate_key);

        let leaf_signing = p256::ecdsa::SigningKey::random(&mut rand_core::OsRng);
        let leaf_key = TestKey::from_p256(leaf_signing.clone());
        let mut leaf_params = params(
            "Test Prod ECC Mac App Store and iTunes Store Receipt Signing",
            options.leaf_validity,
            &leaf_key,
        );
        leaf_params.is_ca = IsCa::ExplicitNoCa;
        if options.leaf_receipt_extension {
            leaf_params
                .custom_extensions
                .push(CustomExtension::from_oid_content(
                    RECEIPT_SIGNING_OID,
                    vec![0x05, 0x00],
                ));
        }
        let leaf = leaf_params
            .signed_by(&leaf_key, &intermediate_issuer)
            .expect("rcgen signs the test leaf");

        TestAppleCa {
            root_der: root.der().to_vec(),
            root_pem: root.pem(),
            intermediate_der: intermediate.der().to_vec(),
            leaf_der: leaf.der().to_vec(),
            leaf_key: leaf_signing,
        }
    }

    /// The root certificate in PEM, to trust with [`crate::AppleRoots::with_extra_pem`].
    pub fn root_pem(&self) -> String {
        self.root_pem.clone()
    }

    /// The chain for a JWS header's `x5c`: leaf, intermediate, root, base64 DER.
    pub fn x5c(&self) -> Vec<String> {
        [&self.leaf_der, &self.intermediate_der, &self.root_der]
            .into_iter()
            .map(|der| STANDARD.encode(der))
            .collect()
    }

    /// An ES256 JWS of `payload` with this chain in `x5c`, as Apple signs.
    pub fn sign(&self, payload: &serde_json::Value) -> String {
        self.sign_with_header(
            &serde_json::json!({"alg": "ES256", "x5c": self.x5c()}),
            payload,
        )
    }

    /// A JWS of `payload` under any `header` (e.g. another `alg`, another chain), signed with
    /// this leaf's key with ES256 whatever the header says.
    pub fn sign_with_header(
        &self,
        header: &serde_json::Value,
        payload: &serde_json::Value,
    ) -> String {
        let signing_input = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(header.to_string()),
            URL_SAFE_NO_PAD.encode(payload.to_string())
        );
        let signature: p256::ecdsa::Signature = self.leaf_key.sign(signing_input.as_bytes());
        format!(
            "{signing_input}.{}",
            URL_SAFE_NO_PAD.encode(signature.to_bytes())
        )
    }
}

/// Certificate parameters with a common name, a validity window and a subject key id.
fn params(common_name: &str, validity: TestValidity, key: &TestKey) -> CertificateParams {
    let mut params = CertificateParams::default();
    let mut name = DistinguishedName::new();
    name.push(DnType::CommonName, common_name);
    name.push(DnType::OrganizationName, "Test Apple Inc.");
    params.distinguished_name = name;
    params.not_before = date(validity.not_before_ms);
    params.not_after = date(validity.not_after_ms);
    params.serial_number = Some(rand_core::RngCore::next_u64(&mut rand_core::OsRng).into());
    let key_id = sha2::Sha256::digest(key.der_bytes())[..20].to_vec();
    params.key_identifier_method = KeyIdMethod::PreSpecified(key_id);
    params
}

/// `ms` since the epoch as a certificate date (whole seconds).
fn date(ms: i64) -> OffsetDateTime {
    OffsetDateTime::from_unix_timestamp(ms.div_euclid(1000)).expect("a test date in range")
}

/// A test signing key and its uncompressed public point, as `rcgen` wants them.
enum TestKey {
    P256(p256::ecdsa::SigningKey, Vec<u8>),
    P384(p384::ecdsa::SigningKey, Vec<u8>),
}

impl TestKey {
    fn p256() -> TestKey {
        TestKey::from_p256(p256::ecdsa::SigningKey::random(&mut rand_core::OsRng))
    }

    fn from_p256(key: p256::ecdsa::SigningKey) -> TestKey {
        let point = key
            .verifying_key()
            .to_encoded_point(false)
            .as_bytes()
            .to_vec();
        TestKey::P256(key, point)
    }

    fn p384() -> TestKey {
        let key = p384::ecdsa::SigningKey::random(&mut rand_core::OsRng);
        let point = key
            .verifying_key()
            .to_encoded_point(false)
            .as_bytes()
            .to_vec();
        TestKey::P384(key, point)
    }
}

impl PublicKeyData for TestKey {
    fn der_bytes(&self) -> &[u8] {
        match self {
            TestKey::P256(_, point) | TestKey::P384(_, point) => point,
        }
    }

    fn algorithm(&self) -> &'static SignatureAlgorithm {
        match self {
            TestKey::P256(..) => &rcgen::PKCS_ECDSA_P256_SHA256,
            TestKey::P384(..) => &rcgen::PKCS_ECDSA_P384_SHA384,
        }
    }
}

impl SigningKey for TestKey {
    /// An ECDSA signature in DER, as X.509 carries it.
    fn sign(&self, msg: &[u8]) -> Result<Vec<u8>, rcgen::Error> {
        Ok(match self {
            TestKey::P256(key, _) => {
                let signature: p256::ecdsa::Signature = key.sign(msg);
                signature.to_der().as_bytes().to_vec()
            }
            TestKey::P384(key, _) => {
                let signature: p384::ecdsa::Signature = key.sign(msg);
                signature.to_der().as_bytes().to_vec()
            }
        })
    }
}
