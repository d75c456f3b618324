//! The OpenAPI document's names for the textual rules of the domain's validators, so that
//! every field bound by one of them says so in the same words, and a client (or a test
//! generator) can produce values the engine accepts without reading its code.
//!
//! These are schemas only: the engine keeps ids and codes as `String`, and the validators
//! ([`is_snake_case`](crate::validation::is_snake_case), the guardrails' country check) stay
//! the authority. Each pattern is the exact equivalent of its validator; the HTTP tests check
//! the published patterns against the validators.

use std::borrow::Cow;

use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};
use utoipa::{PartialSchema, ToSchema};

use crate::validation::MAX_ID_LEN;

/// [`is_snake_case`](crate::validation::is_snake_case) as an ECMA-262 pattern (its length
/// bound is the schema's `maxLength`).
pub const SNAKE_CASE_PATTERN: &str = "^[a-z][a-z0-9]*(_[a-z0-9]+)*$";

/// An ISO 3166-1 alpha-2 code as the engine checks it: two ASCII letters, in either case.
pub const COUNTRY_CODE_PATTERN: &str = "^[A-Za-z]{2}$";

/// A snake_case identifier (item ids, currency ids, event names).
pub struct SnakeCaseId;

impl PartialSchema for SnakeCaseId {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .description(Some(
                "A snake_case identifier: lowercase ASCII letters, digits and single underscores, \
                 starting with a letter and not ending with an underscore, at most 64 characters.",
            ))
            .pattern(Some(SNAKE_CASE_PATTERN))
            .min_length(Some(1))
            .max_length(Some(MAX_ID_LEN))
            .into()
    }
}

impl ToSchema for SnakeCaseId {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("SnakeCaseId")
    }
}

/// An ISO 3166-1 alpha-2 country code.
pub struct CountryCode;

impl PartialSchema for CountryCode {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .description(Some(
                "An ISO 3166-1 alpha-2 country code: two ASCII letters, in either case \
                 (stored upper case).",
            ))
            .pattern(Some(COUNTRY_CODE_PATTERN))
            .into()
    }
}

impl ToSchema for CountryCode {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("CountryCode")
    }
}
