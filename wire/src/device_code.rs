//! The two codes of device sign-in (RFC 8628): the `device_code` the tool keeps secret and
//! polls with, and the short `user_code` a person types into the dashboard.
//!
//! A user code is 8 letters from a 20-consonant alphabet (RFC 8628 section 6.1: no vowels,
//! so no words; none of the letters is easily misread), 20^8 (about 2.56e10) codes, shown
//! as `XXXX-XXXX`. It is read back case-insensitively, with or without the dash. A device code is 43 base62 characters (about 256 bits). Only the
//! SHA-256 of either is ever stored ([`hash`]).

use rand::RngExt;

use crate::key_token;

/// The user-code alphabet: the 20 consonants of RFC 8628 section 6.1.
pub const USER_CODE_ALPHABET: &[u8; 20] = b"BCDFGHJKLMNPQRSTVWXZ";

/// Letters in a user code.
pub const USER_CODE_LEN: usize = 8;

/// Characters of a device code.
const DEVICE_CODE_LEN: usize = 43;

const BASE62: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// A new user code in its canonical form: 8 letters, no dash.
pub fn generate_user_code() -> String {
    let mut rng = rand::rng();
    (0..USER_CODE_LEN)
        .map(|_| char::from(USER_CODE_ALPHABET[rng.random_range(0..USER_CODE_ALPHABET.len())]))
        .collect()
}

/// A user code as shown to people: `XXXX-XXXX`.
pub fn display_user_code(canonical: &str) -> String {
    let (a, b) = canonical.split_at(canonical.len().min(USER_CODE_LEN / 2));
    format!("{a}-{b}")
}

/// Reads what a person typed: the canonical code (8 upper-case letters of the alphabet)
/// when it is one, whatever the case, with or without the dash in the middle; `None`
/// otherwise.
pub fn normalize_user_code(typed: &str) -> Option<String> {
    let letters = match typed.char_indices().nth(USER_CODE_LEN / 2) {
        Some((i, '-')) => format!("{}{}", &typed[..i], &typed[i + 1..]),
        _ => typed.to_owned(),
    };
    let upper = letters.to_ascii_uppercase();
    (upper.len() == USER_CODE_LEN && upper.bytes().all(|b| USER_CODE_ALPHABET.contains(&b)))
        .then_some(upper)
}

/// A new device code.
pub fn generate_device_code() -> String {
    let mut rng = rand::rng();
    (0..DEVICE_CODE_LEN)
        .map(|_| char::from(BASE62[rng.random_range(0..BASE62.len())]))
        .collect()
}

/// Whether `code` is shaped like a device code (checked before any lookup).
pub fn is_device_code(code: &str) -> bool {
    code.len() == DEVICE_CODE_LEN && code.bytes().all(|b| b.is_ascii_alphanumeric())
}

/// SHA-256 of a code (a device code, or a canonical user code), lowercase hex: the only
/// form in which either is stored.
pub fn hash(code: &str) -> String {
    key_token::hash(code)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_codes_are_eight_consonants_shown_with_a_dash() {
        for _ in 0..100 {
            let code = generate_user_code();
            assert_eq!(code.len(), 8);
            assert!(code.bytes().all(|b| USER_CODE_ALPHABET.contains(&b)));
            let shown = display_user_code(&code);
            assert_eq!(shown.len(), 9);
            assert_eq!(&shown[4..5], "-");
            assert_eq!(normalize_user_code(&shown), Some(code.clone()));
            assert_eq!(
                normalize_user_code(&shown.to_ascii_lowercase()),
                Some(code.clone())
            );
            assert_eq!(normalize_user_code(&code), Some(code));
        }
    }

    #[test]
    fn anything_else_is_not_a_user_code() {
        for typed in [
            "",
            "BCDF-GHJ",
            "BCDFGHJKL",
            "BCDF-GHJK-",
            "BCDFG-HJK",
            "BCDF--GHJK",
            "ABCD-EFGH",
            "BCDF GHJK",
            "BCDF-GHJ\u{e9}",
            "\u{e9}\u{e9}\u{e9}\u{e9}-BCDF",
            " BCDF-GHJK",
        ] {
            assert_eq!(normalize_user_code(typed), None, "{typed:?}");
        }
        assert_eq!(normalize_user_code("bcdF-ghjk"), Some("BCDFGHJK".into()));
    }

    #[test]
    fn device_codes_are_long_and_checked_by_shape() {
        let code = generate_device_code();
        assert!(is_device_code(&code));
        assert_ne!(code, generate_device_code());
        assert!(!is_device_code(&code[1..]));
        assert!(!is_device_code(&format!("{}-", &code[1..])));
        assert_eq!(hash(&code).len(), 64);
    }
}
