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

/// The product id check of `product_ids` as an ECMA-262 pattern (its length bound is the
/// schema's `maxLength`).
pub const PRODUCT_ID_PATTERN: &str = "^[A-Za-z0-9._-]+$";

/// An ISO 3166-1 alpha-2 code as the engine checks it: two ASCII letters, in either case.
pub const COUNTRY_CODE_PATTERN: &str = "^[A-Za-z]{2}$";

/// "Not blank" as an ECMA-262 pattern: at least one character that Rust's `trim` keeps.
pub const NOT_BLANK_PATTERN: &str =
    r"[^\t-\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]";

/// A text field the validators want not blank and at most `max` characters long.
fn not_blank_text(description: &'static str, max: usize) -> RefOr<Schema> {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .description(Some(description))
        .pattern(Some(NOT_BLANK_PATTERN))
        .min_length(Some(1))
        .max_length(Some(max))
        .into()
}

/// Declares a named text schema bound by [`not_blank_text`].
macro_rules! not_blank_schema {
    ($(#[$doc:meta])* $name:ident, $max:expr, $description:expr) => {
        $(#[$doc])*
        pub struct $name;

        impl PartialSchema for $name {
            fn schema() -> RefOr<Schema> {
                not_blank_text($description, $max)
            }
        }

        impl ToSchema for $name {
            fn name() -> Cow<'static, str> {
                Cow::Borrowed(stringify!($name))
            }
        }
    };
}

not_blank_schema!(
    /// The name of a game, an item or a bundle.
    DisplayName,
    200,
    "A display name: not blank, at most 200 characters."
);

not_blank_schema!(
    /// The name of an experiment's variant, reported in the offer.
    VariantName,
    64,
    "A variant name: not blank, at most 64 characters."
);

not_blank_schema!(
    /// The studio's own id of a player.
    PlayerIdText,
    128,
    "The studio's player id: not blank, at most 128 characters."
);

/// A number the validators bound to `[min, max]`, a multiple of `step` when there is one.
fn bounded_number(
    schema_type: Type,
    description: &'static str,
    (min, max): (f64, f64),
    step: Option<f64>,
) -> RefOr<Schema> {
    ObjectBuilder::new()
        .schema_type(schema_type)
        .description(Some(description))
        .minimum(Some(min))
        .maximum(Some(max))
        .multiple_of(step)
        .into()
}

/// Declares a named numeric schema bound by [`bounded_number`].
macro_rules! number_schema {
    ($(#[$doc:meta])* $name:ident, $type:expr, $bounds:expr, $step:expr, $description:expr) => {
        $(#[$doc])*
        pub struct $name;

        impl PartialSchema for $name {
            fn schema() -> RefOr<Schema> {
                bounded_number($type, $description, $bounds, $step)
            }
        }

        impl ToSchema for $name {
            fn name() -> Cow<'static, str> {
                Cow::Borrowed(stringify!($name))
            }
        }
    };
}

number_schema!(
    /// A price in dollars: an item's, a bundle's or an experiment arm's.
    PriceUsd,
    Type::Number,
    (0.0, 100_000.0),
    Some(0.01),
    "A price in US dollars, 0 to 100000, at most 2 decimal places."
);

number_schema!(
    /// An item's price in cents.
    PriceCents,
    Type::Integer,
    (0.0, 10_000_000.0),
    None,
    "A price in US cents, 0 to 10000000."
);

number_schema!(
    /// How much of a thing an item grants.
    Quantity,
    Type::Integer,
    (1.0, 1_000_000_000.0),
    None,
    "An amount granted, 1 to 1000000000."
);

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

/// A store's product id (App Store or Google Play).
pub struct ProductId;

impl PartialSchema for ProductId {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .description(Some(
                "A store's product id: 1 to 150 characters of ASCII letters, digits, `.`, `_` \
                 and `-`.",
            ))
            .pattern(Some(PRODUCT_ID_PATTERN))
            .min_length(Some(1))
            .max_length(Some(crate::validation::MAX_PRODUCT_ID_LEN))
            .into()
    }
}

impl ToSchema for ProductId {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("ProductId")
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
