//! Apple's certificate chains: the trusted roots and the check of an `x5c` chain.
//!
//! Apple signs every StoreKit 2 transaction and every server notification with a leaf key
//! whose certificate travels in the JWS header, with the intermediate (Apple Worldwide
//! Developer Relations) and the root. Anyone can put three certificates in a header, so the
//! chain only counts when:
//! - the root is byte for byte one of the roots we trust (Apple Root CA - G3 built in);
//! - each certificate names the next as its issuer and carries a signature that verifies with
//!   the next one's key (ECDSA over P-256 or P-384, with SHA-256 or SHA-384);
//! - the intermediate is a certificate authority with Apple's WWDR extension, and the leaf has
//!   Apple's receipt-signing extension (so no other Apple certificate can sign a receipt);
//! - every certificate was valid when Apple signed the payload (checked by the caller with
//!   `VerifiedChain::check_valid_at`, once the payload's signing date is read).

use p256::ecdsa::signature::hazmat::PrehashVerifier as _;
use sha2::Digest as _;
use x509_cert::Certificate;
use x509_cert::der::asn1::ObjectIdentifier;
use x509_cert::der::{Decode as _, Encode as _, Header, SliceReader};
use x509_cert::ext::pkix::BasicConstraints;
use x509_cert::spki::SubjectPublicKeyInfoOwned;

use crate::encoding::base64_standard;
use crate::error::ReceiptError;

/// Apple Root CA - G3, the root of every App Store signing chain.
const APPLE_ROOT_CA_G3_PEM: &str = include_str!("../certs/apple-root-ca-g3.pem");

/// Apple's extension on the leaf certificate of the App Store receipt-signing key.
const RECEIPT_SIGNING_OID: ObjectIdentifier =
    ObjectIdentifier::new_unwrap("1.2.840.113635.100.6.11.1");
/// Apple's extension on the Worldwide Developer Relations intermediate certificate.
const WWDR_OID: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113635.100.6.2.1");
/// X.509 basic constraints.
const BASIC_CONSTRAINTS_OID: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.5.29.19");
/// Elliptic-curve public key.
const EC_PUBLIC_KEY_OID: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.10045.2.1");
/// The P-256 curve (secp256r1).
const P256_OID: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.10045.3.1.7");
/// The P-384 curve (secp384r1).
const P384_OID: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.3.132.0.34");
/// ECDSA with SHA-256.
const ECDSA_SHA256_OID: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.10045.4.3.2");
/// ECDSA with SHA-384.
const ECDSA_SHA384_OID: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.10045.4.3.3");

/// The largest certificate accepted in a chain (Apple's are about 1 KiB).
const MAX_CERTIFICATE_BYTES: usize = 8 * 1024;

/// The roots an App Store chain must end in, kept as their exact DER bytes.
///
/// [`AppleRoots::apple`] trusts Apple Root CA - G3 only, which is what production needs. Tests
/// (and a studio testing with Xcode's StoreKit test certificate) add their own root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppleRoots {
    roots: Vec<Vec<u8>>,
}

impl AppleRoots {
    /// The built-in Apple Root CA - G3 only.
    ///
    /// The embedded certificate is checked by this crate's tests; should it ever fail to
    /// decode, the set is empty and every chain is refused (it never trusts less checked input).
    pub fn apple() -> AppleRoots {
        let roots = pem_certificates(APPLE_ROOT_CA_G3_PEM).unwrap_or_default();
        AppleRoots { roots }
    }

    /// Apple Root CA - G3 and the certificate(s) of `pem` (one or more `CERTIFICATE` blocks).
    pub fn with_extra_pem(pem: &str) -> Result<AppleRoots, ReceiptError> {
        let mut roots = AppleRoots::apple();
        roots.add_pem(pem)?;
        Ok(roots)
    }

    /// Trusts the certificate(s) of `pem` too. Nothing is added when any block is unusable.
    pub fn add_pem(&mut self, pem: &str) -> Result<(), ReceiptError> {
        let added = pem_certificates(pem)?;
        if added.is_empty() {
            return Err(ReceiptError::InvalidKey(
                "no CERTIFICATE block in the PEM text".into(),
            ));
        }
        for der in added {
            if !self.roots.contains(&der) {
                self.roots.push(der);
            }
        }
        Ok(())
    }

    /// Trusts the certificate whose DER bytes are `der` too (a configured root the caller
    /// already read from its PEM file). A chain's root is matched byte for byte, so bytes
    /// that are no certificate can never match one and trust nothing.
    pub fn add_der(&mut self, der: Vec<u8>) {
        if !self.roots.contains(&der) {
            self.roots.push(der);
        }
    }

    /// The DER bytes of every trusted root.
    pub fn roots_der(&self) -> &[Vec<u8>] {
        &self.roots
    }

    /// Whether `der` is exactly one of the trusted roots.
    fn trusts(&self, der: &[u8]) -> bool {
        self.roots.iter().any(|root| root.as_slice() == der)
    }
}

/// The DER bytes of every `CERTIFICATE` block of `pem`, each checked to decode as a
/// certificate. The bytes are kept as written, so that comparing them with a chain's root
/// compares exactly what was signed.
fn pem_certificates(pem: &str) -> Result<Vec<Vec<u8>>, ReceiptError> {
    const BEGIN: &str = "-----BEGIN CERTIFICATE-----";
    const END: &str = "-----END CERTIFICATE-----";
    let mut found = Vec::new();
    let mut rest = pem;
    while let Some(start) = rest.find(BEGIN) {
        let after = &rest[start + BEGIN.len()..];
        let end = after.find(END).ok_or_else(|| {
            ReceiptError::InvalidKey("a CERTIFICATE block has no END line".into())
        })?;
        let body: String = after[..end].split_whitespace().collect();
        let der = base64_standard(&body, "a PEM certificate")
            .map_err(|_| ReceiptError::InvalidKey("a PEM certificate is not base64".into()))?;
        Certificate::from_der(&der).map_err(|_| {
            ReceiptError::InvalidKey("a PEM block does not hold an X.509 certificate".into())
        })?;
        found.push(der);
        rest = &after[end + END.len()..];
    }
    Ok(found)
}

/// A chain that passed every check but the dates: the leaf's key, to verify the JWS with,
/// and each certificate's validity window, to check against the payload's signing date.
#[derive(Debug)]
pub(crate) struct VerifiedChain {
    /// The leaf's P-256 key, which signs the JWS.
    pub(crate) leaf_key: p256::ecdsa::VerifyingKey,
    /// Each certificate's `notBefore` and `notAfter`, in ms since the epoch.
    windows: [(i128, i128); 3],
}

impl VerifiedChain {
    /// Refuses the chain unless every certificate was valid at `signed_ms` (ms since the
    /// epoch), the date Apple signed the payload.
    pub(crate) fn check_valid_at(&self, signed_ms: i64) -> Result<(), ReceiptError> {
        let at = i128::from(signed_ms);
        if self
            .windows
            .iter()
            .all(|(not_before, not_after)| *not_before <= at && at <= *not_after)
        {
            Ok(())
        } else {
            Err(ReceiptError::CertificateExpired)
        }
    }
}

/// One certificate of the chain: its DER bytes and their decoding.
struct Link {
    der: Vec<u8>,
    certificate: Certificate,
}

/// Checks the `x5c` chain of a JWS header: three certificates, leaf, intermediate, root, each
/// signed by the next, the root trusted, Apple's extensions in place.
pub(crate) fn verify_chain(
    x5c: &[String],
    roots: &AppleRoots,
) -> Result<VerifiedChain, ReceiptError> {
    let [leaf, intermediate, root] = x5c else {
        return Err(ReceiptError::Chain(format!(
            "x5c holds {} certificates, three are expected (leaf, intermediate, root)",
            x5c.len()
        )));
    };
    let leaf = decode_link(leaf, "leaf")?;
    let intermediate = decode_link(intermediate, "intermediate")?;
    let root = decode_link(root, "root")?;

    if !roots.trusts(&root.der) {
        return Err(ReceiptError::UntrustedRoot);
    }
    verify_issued_by(&leaf, &intermediate, "leaf", "intermediate")?;
    verify_issued_by(&intermediate, &root, "intermediate", "root")?;

    if !has_extension(&intermediate.certificate, WWDR_OID) {
        return Err(ReceiptError::MissingExtension(
            "Apple WWDR intermediate (1.2.840.113635.100.6.2.1)",
        ));
    }
    if !is_certificate_authority(&intermediate.certificate)? {
        return Err(ReceiptError::Chain(
            "the intermediate is not a certificate authority".into(),
        ));
    }
    if !has_extension(&leaf.certificate, RECEIPT_SIGNING_OID) {
        return Err(ReceiptError::MissingExtension(
            "Apple receipt signing (1.2.840.113635.100.6.11.1)",
        ));
    }

    let leaf_spki = &leaf.certificate.tbs_certificate.subject_public_key_info;
    if curve(leaf_spki)? != P256_OID {
        return Err(ReceiptError::Chain(
            "the leaf key is not a P-256 key, so it cannot sign ES256".into(),
        ));
    }
    let leaf_key =
        p256::ecdsa::VerifyingKey::from_sec1_bytes(leaf_spki.subject_public_key.raw_bytes())
            .map_err(|_| ReceiptError::Chain("the leaf's P-256 key is invalid".into()))?;

    Ok(VerifiedChain {
        leaf_key,
        windows: [
            window(&leaf.certificate)?,
            window(&intermediate.certificate)?,
            window(&root.certificate)?,
        ],
    })
}

/// Decodes one base64 DER certificate of `x5c`.
fn decode_link(encoded: &str, role: &str) -> Result<Link, ReceiptError> {
    if encoded.len() > MAX_CERTIFICATE_BYTES * 4 / 3 + 4 {
        return Err(ReceiptError::TooLarge);
    }
    let der = base64_standard(encoded, "an x5c certificate")?;
    let certificate = Certificate::from_der(&der)
        .map_err(|_| ReceiptError::Chain(format!("the {role} certificate does not decode")))?;
    Ok(Link { der, certificate })
}

/// Whether `certificate` carries the extension `oid`.
fn has_extension(certificate: &Certificate, oid: ObjectIdentifier) -> bool {
    certificate
        .tbs_certificate
        .extensions
        .as_deref()
        .unwrap_or_default()
        .iter()
        .any(|extension| extension.extn_id == oid)
}

/// Whether `certificate`'s basic constraints make it a certificate authority.
fn is_certificate_authority(certificate: &Certificate) -> Result<bool, ReceiptError> {
    let Some(extension) = certificate
        .tbs_certificate
        .extensions
        .as_deref()
        .unwrap_or_default()
        .iter()
        .find(|extension| extension.extn_id == BASIC_CONSTRAINTS_OID)
    else {
        return Ok(false);
    };
    let constraints = BasicConstraints::from_der(extension.extn_value.as_bytes())
        .map_err(|_| ReceiptError::Chain("basic constraints do not decode".into()))?;
    Ok(constraints.ca)
}

/// Checks that `issuer` issued `subject`: the names chain and `subject`'s signature verifies
/// with `issuer`'s key.
fn verify_issued_by(
    subject: &Link,
    issuer: &Link,
    subject_role: &str,
    issuer_role: &str,
) -> Result<(), ReceiptError> {
    if subject.certificate.tbs_certificate.issuer != issuer.certificate.tbs_certificate.subject {
        return Err(ReceiptError::Chain(format!(
            "the {subject_role} certificate names another issuer than the {issuer_role}"
        )));
    }
    let refused = || {
        ReceiptError::Chain(format!(
            "the {subject_role} certificate's signature does not verify with the {issuer_role}'s key"
        ))
    };
    let signed = tbs_bytes(&subject.der).ok_or_else(refused)?;
    let algorithm = subject.certificate.signature_algorithm.oid;
    let digest = if algorithm == ECDSA_SHA256_OID {
        sha2::Sha256::digest(signed).to_vec()
    } else if algorithm == ECDSA_SHA384_OID {
        sha2::Sha384::digest(signed).to_vec()
    } else {
        return Err(ReceiptError::Chain(format!(
            "the {subject_role} certificate is not signed with ECDSA and SHA-256 or SHA-384"
        )));
    };
    let signature = subject
        .certificate
        .signature
        .as_bytes()
        .ok_or_else(refused)?;
    let issuer_spki = &issuer.certificate.tbs_certificate.subject_public_key_info;
    let key = issuer_spki.subject_public_key.raw_bytes();
    let verified = match curve(issuer_spki)? {
        oid if oid == P256_OID => {
            let key = p256::ecdsa::VerifyingKey::from_sec1_bytes(key).map_err(|_| refused())?;
            let signature = p256::ecdsa::Signature::from_der(signature).map_err(|_| refused())?;
            key.verify_prehash(&digest, &signature).is_ok()
        }
        oid if oid == P384_OID => {
            let key = p384::ecdsa::VerifyingKey::from_sec1_bytes(key).map_err(|_| refused())?;
            let signature = p384::ecdsa::Signature::from_der(signature).map_err(|_| refused())?;
            key.verify_prehash(&digest, &signature).is_ok()
        }
        _ => {
            return Err(ReceiptError::Chain(format!(
                "the {issuer_role}'s key is on neither P-256 nor P-384"
            )));
        }
    };
    if verified { Ok(()) } else { Err(refused()) }
}

/// The curve of an elliptic-curve public key; any other kind of key is refused.
fn curve(spki: &SubjectPublicKeyInfoOwned) -> Result<ObjectIdentifier, ReceiptError> {
    if spki.algorithm.oid != EC_PUBLIC_KEY_OID {
        return Err(ReceiptError::Chain(
            "a certificate of the chain has no elliptic-curve key".into(),
        ));
    }
    spki.algorithm
        .parameters
        .as_ref()
        .and_then(|parameters| parameters.decode_as::<ObjectIdentifier>().ok())
        .ok_or_else(|| ReceiptError::Chain("an elliptic-curve key names no curve".into()))
}

/// The bytes of the `tbsCertificate` element exactly as they appear in `der`: what the issuer
/// signed. Taking them from the input rather than re-encoding the decoded structure means the
/// signature is checked over precisely the bytes the issuer saw.
fn tbs_bytes(der: &[u8]) -> Option<&[u8]> {
    let mut reader = SliceReader::new(der).ok()?;
    let outer = Header::decode(&mut reader).ok()?;
    let start = usize::try_from(outer.encoded_len().ok()?).ok()?;
    let inner = Header::decode(&mut reader).ok()?;
    let length = usize::try_from((inner.encoded_len().ok()? + inner.length).ok()?).ok()?;
    der.get(start..start.checked_add(length)?)
}

/// `certificate`'s validity window in ms since the epoch.
fn window(certificate: &Certificate) -> Result<(i128, i128), ReceiptError> {
    let validity = &certificate.tbs_certificate.validity;
    let ms = |time: x509_cert::time::Time| i128::try_from(time.to_unix_duration().as_millis());
    match (ms(validity.not_before), ms(validity.not_after)) {
        (Ok(not_before), Ok(not_after)) => Ok((not_before, not_after)),
        _ => Err(ReceiptError::Chain(
            "a validity date is out of range".into(),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sha2::Sha256;

    #[test]
    fn the_built_in_g3_root_is_apples() {
        let roots = AppleRoots::apple();
        assert_eq!(roots.roots_der().len(), 1);
        let fingerprint: String = Sha256::digest(&roots.roots_der()[0])
            .iter()
            .map(|byte| format!("{byte:02X}"))
            .collect();
        assert_eq!(
            fingerprint,
            "63343ABFB89A6A03EBB57E9B3F5FA7BE7C4F5C756F3017B3A8C488C3653E9179"
        );
        let root = Certificate::from_der(&roots.roots_der()[0]).expect("the root decodes");
        assert_eq!(root.signature_algorithm.oid, ECDSA_SHA384_OID);
        assert_eq!(
            curve(&root.tbs_certificate.subject_public_key_info),
            Ok(P384_OID)
        );
    }

    #[test]
    fn the_g3_root_signs_itself() {
        let der = AppleRoots::apple().roots_der()[0].clone();
        let certificate = Certificate::from_der(&der).expect("the root decodes");
        let link = Link { der, certificate };
        assert_eq!(verify_issued_by(&link, &link, "root", "root"), Ok(()));
    }

    /// Apple's real production chain of 2021 (a receipt-signing leaf valid from 2021-08-25
    /// to 2023-09-24 under the WWDR G6 intermediate), as the App Store put it in `x5c`.
    fn apple_production_x5c() -> Vec<String> {
        use base64::Engine as _;
        [
            include_str!("../testdata/apple-receipt-signing-2021.pem"),
            include_str!("../testdata/apple-wwdr-g6.pem"),
            APPLE_ROOT_CA_G3_PEM,
        ]
        .into_iter()
        .map(|pem| {
            let der = pem_certificates(pem).expect("a PEM certificate").remove(0);
            base64::engine::general_purpose::STANDARD.encode(der)
        })
        .collect()
    }

    #[test]
    fn apples_real_chain_verifies_and_dates_are_judged_at_signing() {
        let chain = verify_chain(&apple_production_x5c(), &AppleRoots::apple())
            .expect("Apple's chain verifies under the built-in root");
        // 2023-04-12, within the leaf's life; 2024-01-01, after it.
        assert_eq!(chain.check_valid_at(1_681_312_846_000), Ok(()));
        assert_eq!(
            chain.check_valid_at(1_704_067_200_000),
            Err(ReceiptError::CertificateExpired)
        );
        assert_eq!(
            chain.check_valid_at(1_600_000_000_000),
            Err(ReceiptError::CertificateExpired)
        );
    }

    #[test]
    fn apples_leaf_is_not_a_root_and_its_intermediate_not_a_leaf() {
        let x5c = apple_production_x5c();
        let roots = AppleRoots::apple();
        let swapped = vec![x5c[1].clone(), x5c[0].clone(), x5c[2].clone()];
        assert!(matches!(
            verify_chain(&swapped, &roots),
            Err(ReceiptError::Chain(_))
        ));
        let leaf_as_intermediate = vec![x5c[0].clone(), x5c[0].clone(), x5c[2].clone()];
        assert!(verify_chain(&leaf_as_intermediate, &roots).is_err());
    }

    #[test]
    fn pem_without_a_certificate_is_refused() {
        let mut roots = AppleRoots::apple();
        assert!(matches!(
            roots.add_pem("no pem here"),
            Err(ReceiptError::InvalidKey(_))
        ));
        assert!(matches!(
            roots.add_pem("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"),
            Err(ReceiptError::InvalidKey(_))
        ));
        assert!(matches!(
            roots.add_pem("-----BEGIN CERTIFICATE-----\nAAAA"),
            Err(ReceiptError::InvalidKey(_))
        ));
        assert_eq!(roots, AppleRoots::apple());
    }

    #[test]
    fn adding_the_same_root_twice_keeps_one() {
        let mut roots = AppleRoots::apple();
        roots
            .add_pem(APPLE_ROOT_CA_G3_PEM)
            .expect("the G3 root loads");
        assert_eq!(roots.roots_der().len(), 1);
    }

    #[test]
    fn a_chain_of_the_wrong_length_is_refused_before_decoding() {
        let roots = AppleRoots::apple();
        for count in [0, 1, 2, 4] {
            let x5c = vec!["not base64".to_string(); count];
            assert!(matches!(
                verify_chain(&x5c, &roots),
                Err(ReceiptError::Chain(_))
            ));
        }
    }
}
