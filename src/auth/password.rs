//! Passwords of studio members: Argon2id (the `argon2` crate's defaults: 19 MiB, two passes,
//! one lane) over a random 16-byte salt, stored in the PHC string format
//! (`$argon2id$v=19$m=...,t=...,p=...$salt$hash`) so that the parameters travel with the hash
//! and stronger ones can be adopted later without breaking stored members.
//!
//! Hashing takes tens of milliseconds of CPU on purpose: callers run it on a blocking thread.

use argon2::Argon2;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};

/// Shortest password a member may have.
pub const MIN_PASSWORD_LEN: usize = 10;
/// Longest password a member may have (bounds the work of one sign-in attempt).
pub const MAX_PASSWORD_LEN: usize = 256;

/// Hashes `password` with a fresh random salt into a PHC string.
pub fn hash(password: &str) -> Result<String, String> {
    let mut salt = [0u8; 16];
    rand::fill(&mut salt);
    let salt = SaltString::encode_b64(&salt).map_err(|e| e.to_string())?;
    Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(|e| e.to_string())
}

/// Whether `password` matches the stored PHC string; a string that does not parse matches
/// nothing.
pub fn verify(password: &str, stored: &str) -> bool {
    PasswordHash::new(stored).is_ok_and(|h| {
        Argon2::default()
            .verify_password(password.as_bytes(), &h)
            .is_ok()
    })
}

/// A hash of a password no one has, verified against when the email is unknown, so that a
/// sign-in takes as long whether or not the member exists.
pub fn decoy() -> &'static str {
    static DECOY: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    DECOY.get_or_init(|| hash("decoy password never issued").unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hash_verifies_its_password_only() {
        let stored = hash("correct horse battery").expect("hash");
        assert!(stored.starts_with("$argon2id$"));
        assert!(verify("correct horse battery", &stored));
        assert!(!verify("correct horse batterx", &stored));
        assert!(!verify("correct horse battery", "not a hash"));
        assert_ne!(stored, hash("correct horse battery").expect("hash"));
    }
}
