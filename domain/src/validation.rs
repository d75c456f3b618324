//! Field-level validation errors and the length limits shared by every validator.
//!
//! A validator collects every problem it finds instead of stopping at the first, so a studio
//! fixing a 500-item bulk file sees all of its mistakes in one answer.

use serde::Serialize;
use utoipa::ToSchema;

/// Longest accepted game, item, bundle or currency name, so one request cannot store
/// megabytes of text.
pub const MAX_NAME_LEN: usize = 200;
/// Longest accepted snake_case identifier (item ids, currency ids).
pub const MAX_ID_LEN: usize = 64;
/// Longest store product id: Google Play's limit (Apple's is shorter), so an id either store
/// accepts fits.
pub const MAX_PRODUCT_ID_LEN: usize = 150;

/// One problem with one field of a request body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct FieldError {
    /// The offending field, for example `price_usd` or `items[3].category`.
    pub field: String,
    /// Position in a list payload (bulk items), so the caller can find the bad entry.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index: Option<usize>,
    /// Why the value was refused, in plain words.
    pub reason: String,
}

impl FieldError {
    /// A problem with `field`, not tied to a list position.
    pub fn new(field: impl Into<String>, reason: impl Into<String>) -> Self {
        Self {
            field: field.into(),
            index: None,
            reason: reason.into(),
        }
    }

    /// The same problem, located at position `index` of a list payload.
    #[must_use]
    pub fn at(mut self, index: usize) -> Self {
        self.index = Some(index);
        self
    }
}

/// Collects field errors; `finish` turns an empty collection into `Ok`.
#[derive(Debug, Default)]
pub struct Errors(pub Vec<FieldError>);

impl Errors {
    /// Records one problem.
    pub fn push(&mut self, field: impl Into<String>, reason: impl Into<String>) {
        self.0.push(FieldError::new(field, reason));
    }

    /// Checks a required, bounded text field.
    pub fn text(&mut self, field: &str, value: &str, max_len: usize) {
        if value.trim().is_empty() {
            self.push(field, "must not be empty");
        } else if value.chars().count() > max_len {
            self.push(field, format!("must be at most {max_len} characters"));
        }
    }

    /// `Ok(value)` when nothing was recorded, else every recorded error.
    pub fn finish<T>(self, value: T) -> Result<T, Vec<FieldError>> {
        if self.0.is_empty() {
            Ok(value)
        } else {
            Err(self.0)
        }
    }
}

/// True for a snake_case identifier: lowercase ASCII letters, digits and single underscores,
/// starting with a letter, at most `max_len` long.
pub fn is_snake_case(id: &str, max_len: usize) -> bool {
    let bytes = id.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= max_len
        && bytes[0].is_ascii_lowercase()
        && !id.ends_with('_')
        && !id.contains("__")
        && bytes
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snake_case_rules() {
        assert!(is_snake_case("gem_pack_100", 64));
        assert!(!is_snake_case("GemPack", 64));
        assert!(!is_snake_case("1gem", 64));
        assert!(!is_snake_case("gem__pack", 64));
        assert!(!is_snake_case("gem-pack", 64));
        assert!(!is_snake_case("", 64));
        assert!(!is_snake_case("gem_", 64));
    }
}
