//! A game's store settings: how strictly purchases are checked against the stores' signed
//! receipts (`verification`), and what identifies the game in each store.
//!
//! Every game starts with verification `off`. `report` and `enforce` need at least one store
//! configured. `verified_since` marks the start of the current stretch of verification: it
//! is set when verification leaves `off`, kept while it moves between `report` and
//! `enforce`, cleared when it goes back to `off`, and set anew when it leaves `off` again, so
//! figures of verified purchases never reach back into a stretch when nothing was checked.
//!
//! The check of the Google Play public key itself (an RSA key of at least 2048 bits) needs a
//! cryptography library and lives with the service; the rules here are those of the fields'
//! shapes and between them.

use std::fmt;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::product_ids::Store;
use crate::validation::{Errors, FieldError};

/// The largest `app_apple_id` taken: 2^53 - 1, the largest whole number every JSON reader
/// holds exactly (Apple's ids have ten digits).
pub const MAX_APP_APPLE_ID: u64 = 9_007_199_254_740_991;

/// Longest App Store bundle id (Apple's limit).
pub const MAX_BUNDLE_ID_LEN: usize = 155;
/// Longest Google Play package name (Google's limit).
pub const MAX_PACKAGE_NAME_LEN: usize = 255;
/// Longest Google Play public key text: base64 of the DER of an RSA key of up to 16384 bits.
pub const MAX_PUBLIC_KEY_LEN: usize = 4096;

/// The App Store bundle id's form as an ECMA-262 pattern: reverse-DNS, at least two labels
/// of ASCII letters, digits and `-`, separated by dots.
pub const BUNDLE_ID_PATTERN: &str = r"^[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+$";
/// The Google Play package name's form: a Java package of at least two segments, each
/// starting with a letter, then letters, digits and `_`.
pub const PACKAGE_NAME_PATTERN: &str = r"^[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z][A-Za-z0-9_]*)+$";

/// How strictly purchases are checked against the stores' receipts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Verification {
    /// Nothing is checked: purchases are taken as the game reports them.
    #[default]
    Off,
    /// Purchases without a valid receipt are kept, flagged unverified and granted, but
    /// never counted in billing figures.
    Report,
    /// Only verified purchases grant; offers no store product can pay for are not served.
    Enforce,
}

impl Verification {
    /// Whether receipts are checked at all.
    pub fn is_on(self) -> bool {
        self != Self::Off
    }
}

/// What identifies the game in the App Store.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AppStoreSettings {
    /// The app's bundle id, reverse-DNS, 1 to 155 characters.
    #[schema(
        pattern = r"^[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+$",
        min_length = 1,
        max_length = 155
    )]
    pub bundle_id: String,
    /// The app's Apple id (a whole number from 1); absent while the app is only tested in
    /// the sandbox.
    #[serde(default)]
    #[schema(minimum = 1, maximum = 9007199254740991_u64)]
    pub app_apple_id: Option<u64>,
    /// Whether a sandbox transaction is accepted in the production environment (App Review
    /// buys with sandbox accounts in the live build).
    #[serde(default)]
    pub accept_sandbox_on_live: bool,
}

/// What identifies the game in Google Play.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct GooglePlaySettings {
    /// The app's package name, Java package form, 1 to 255 characters.
    #[schema(
        pattern = r"^[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z][A-Za-z0-9_]*)+$",
        min_length = 1,
        max_length = 255
    )]
    pub package_name: String,
    /// The app's licensing public key from the Play Console: base64 of the DER
    /// SubjectPublicKeyInfo of an RSA key of at least 2048 bits.
    #[schema(min_length = 1, max_length = 4096)]
    pub public_key: String,
}

/// What an admin sets: the whole settings, which replace the stored ones.
///
/// Refused with 422 besides each field's own bounds: `report` or `enforce` without any store
/// configured (field `verification`), and a Google Play public key that is not an RSA key of
/// at least 2048 bits (field `google_play.public_key`).
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct StoreSettingsInput {
    /// `off`, `report` or `enforce`.
    pub verification: Verification,
    /// The App Store settings, or `null` when the game is not sold there.
    #[serde(default)]
    pub app_store: Option<AppStoreSettings>,
    /// The Google Play settings, or `null` when the game is not sold there.
    #[serde(default)]
    pub google_play: Option<GooglePlaySettings>,
}

/// The secret a Google Play notification must carry in its URL: each game has its own, and
/// an admin can rotate it. Its `Debug` never shows it.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct NotificationToken(String);

impl NotificationToken {
    /// Wraps a token made by the caller (32 random bytes, base64url).
    pub fn new(token: String) -> Self {
        Self(token)
    }

    /// The token itself, for the admin's URL and the comparison with a notification's.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for NotificationToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("NotificationToken(redacted)")
    }
}

/// A game's store settings as stored and as the game's live state holds them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoreSettings {
    /// How strictly purchases are checked.
    pub verification: Verification,
    /// The App Store settings, if the game is sold there.
    #[serde(default)]
    pub app_store: Option<AppStoreSettings>,
    /// The Google Play settings, if the game is sold there.
    #[serde(default)]
    pub google_play: Option<GooglePlaySettings>,
    /// When the current stretch of verification began; `None` while it is `off`.
    #[serde(default)]
    pub verified_since: Option<DateTime<Utc>>,
    /// The Google Play notification URL's secret: made with the first save, changed by a
    /// rotation only.
    #[serde(default)]
    pub google_play_token: Option<NotificationToken>,
    /// Last change; `None` for a game whose settings were never saved.
    #[serde(default)]
    pub updated_at: Option<DateTime<Utc>>,
}

impl StoreSettings {
    /// Whether `store` is configured.
    pub fn configured(&self, store: Store) -> bool {
        match store {
            Store::AppStore => self.app_store.is_some(),
            Store::GooglePlay => self.google_play.is_some(),
        }
    }

    /// The settings after an admin's `input` at `now`, checked (every error found). The
    /// token is kept; `verified_since` follows the rule of the module.
    pub fn replaced(
        &self,
        input: StoreSettingsInput,
        now: DateTime<Utc>,
    ) -> Result<StoreSettings, Vec<FieldError>> {
        let mut e = Errors::default();
        if let Some(apple) = &input.app_store {
            if !is_bundle_id(&apple.bundle_id) {
                e.push(
                    "app_store.bundle_id",
                    format!(
                        "must be a reverse-DNS bundle id (labels of letters, digits and `-` \
                         joined by dots, at least two), at most {MAX_BUNDLE_ID_LEN} characters"
                    ),
                );
            }
            if apple
                .app_apple_id
                .is_some_and(|id| !(1..=MAX_APP_APPLE_ID).contains(&id))
            {
                e.push(
                    "app_store.app_apple_id",
                    format!("must be a whole number from 1 to {MAX_APP_APPLE_ID}"),
                );
            }
        }
        if let Some(google) = &input.google_play {
            if !is_package_name(&google.package_name) {
                e.push(
                    "google_play.package_name",
                    format!(
                        "must be a Java package name (segments starting with a letter, then \
                         letters, digits and `_`, joined by dots, at least two), at most \
                         {MAX_PACKAGE_NAME_LEN} characters"
                    ),
                );
            }
            if google.public_key.is_empty() || google.public_key.len() > MAX_PUBLIC_KEY_LEN {
                e.push(
                    "google_play.public_key",
                    format!("must be 1 to {MAX_PUBLIC_KEY_LEN} characters of base64"),
                );
            }
        }
        if input.verification.is_on() && input.app_store.is_none() && input.google_play.is_none() {
            e.push(
                "verification",
                "report and enforce need a store: configure app_store or google_play first",
            );
        }
        let verified_since = match (self.verification.is_on(), input.verification.is_on()) {
            (_, false) => None,
            (false, true) => Some(now),
            (true, true) => self.verified_since.or(Some(now)),
        };
        e.finish(StoreSettings {
            verification: input.verification,
            app_store: input.app_store,
            google_play: input.google_play,
            verified_since,
            google_play_token: self.google_play_token.clone(),
            updated_at: Some(now),
        })
    }
}

/// Whether `id` is a reverse-DNS bundle id of at most [`MAX_BUNDLE_ID_LEN`] characters
/// ([`BUNDLE_ID_PATTERN`]).
pub fn is_bundle_id(id: &str) -> bool {
    id.len() <= MAX_BUNDLE_ID_LEN
        && dotted(id, |label| {
            !label.is_empty()
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-')
        })
}

/// Whether `name` is a Java package name of at most [`MAX_PACKAGE_NAME_LEN`] characters
/// ([`PACKAGE_NAME_PATTERN`]).
pub fn is_package_name(name: &str) -> bool {
    name.len() <= MAX_PACKAGE_NAME_LEN
        && dotted(name, |segment| {
            segment
                .as_bytes()
                .first()
                .is_some_and(u8::is_ascii_alphabetic)
                && segment
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_')
        })
}

/// Whether `text` is at least two dot-separated parts, each passing `part`.
fn dotted(text: &str, part: impl Fn(&str) -> bool) -> bool {
    let mut parts = 0;
    for p in text.split('.') {
        if !part(p) {
            return false;
        }
        parts += 1;
    }
    parts >= 2
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Duration;

    fn input(verification: Verification, apple: bool) -> StoreSettingsInput {
        StoreSettingsInput {
            verification,
            app_store: apple.then(|| AppStoreSettings {
                bundle_id: "com.studio.game".into(),
                app_apple_id: Some(1_234_567_890),
                accept_sandbox_on_live: false,
            }),
            google_play: None,
        }
    }

    #[test]
    fn identifiers_follow_the_stores_forms() {
        for ok in ["com.studio.game", "a.b", "com.my-studio.Game2"] {
            assert!(is_bundle_id(ok), "{ok}");
        }
        for bad in [
            "game",
            "com..game",
            ".com.game",
            "com.game.",
            "com.gäme",
            "com.g_ame",
        ] {
            assert!(!is_bundle_id(bad), "{bad}");
        }
        assert!(!is_bundle_id(&format!("com.{}", "a".repeat(152))));
        for ok in ["com.studio.game", "a.b", "com.my_studio.Game2"] {
            assert!(is_package_name(ok), "{ok}");
        }
        for bad in [
            "game",
            "com.1game",
            "com.my-studio.game",
            "com..game",
            "_a.b",
        ] {
            assert!(!is_package_name(bad), "{bad}");
        }
    }

    #[test]
    fn verification_needs_a_store() {
        let off = StoreSettings::default();
        let err = off
            .replaced(input(Verification::Report, false), Utc::now())
            .expect_err("no store");
        assert_eq!(err[0].field, "verification");
        assert!(
            off.replaced(input(Verification::Off, false), Utc::now())
                .is_ok()
        );
    }

    #[test]
    fn verified_since_starts_each_stretch_of_verification() {
        let t0 = Utc::now();
        let off = StoreSettings::default();
        let report = off
            .replaced(input(Verification::Report, true), t0)
            .expect("valid");
        assert_eq!(report.verified_since, Some(t0));
        let enforce = report
            .replaced(input(Verification::Enforce, true), t0 + Duration::hours(1))
            .expect("valid");
        assert_eq!(
            enforce.verified_since,
            Some(t0),
            "kept from report to enforce"
        );
        let back_off = enforce
            .replaced(input(Verification::Off, true), t0 + Duration::hours(2))
            .expect("valid");
        assert_eq!(back_off.verified_since, None);
        let t3 = t0 + Duration::hours(3);
        let again = back_off
            .replaced(input(Verification::Report, true), t3)
            .expect("valid");
        assert_eq!(again.verified_since, Some(t3), "a new stretch");
    }

    #[test]
    fn the_token_never_shows_in_debug_output() {
        let settings = StoreSettings {
            google_play_token: Some(NotificationToken::new("s3cret".into())),
            ..StoreSettings::default()
        };
        assert!(!format!("{settings:?}").contains("s3cret"));
    }
}
