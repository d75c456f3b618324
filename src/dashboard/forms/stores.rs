//! The store settings form as typed, and the settings it asks for: the verification level,
//! the App Store's bundle id, Apple id and sandbox switch (a blank bundle id: not sold in the
//! App Store), the Google Play package name and public key (both blank: not sold there).

use offer_domain::store_settings::{
    AppStoreSettings, GooglePlaySettings, StoreSettings, StoreSettingsInput, Verification,
};
use offer_domain::validation::FieldError;
use serde::Deserialize;

use super::{number, optional_text};

/// The store settings form, as typed.
#[derive(Debug, Default, Deserialize)]
pub struct StoresForm {
    /// `off`, `report` or `enforce`.
    #[serde(default)]
    pub verification: String,
    /// The App Store bundle id; blank: not sold in the App Store.
    #[serde(default)]
    pub bundle_id: String,
    /// The app's Apple id; blank while sandbox only.
    #[serde(default)]
    pub app_apple_id: String,
    /// The checkbox accepting sandbox transactions in production (present when ticked).
    #[serde(default)]
    pub accept_sandbox_on_live: Option<String>,
    /// The Google Play package name; with the key blank too: not sold in Google Play.
    #[serde(default)]
    pub package_name: String,
    /// The Google Play licensing public key (base64).
    #[serde(default)]
    pub public_key: String,
}

impl StoresForm {
    /// The form showing `settings` as stored.
    pub fn of(settings: &StoreSettings) -> Self {
        let apple = settings.app_store.as_ref();
        let google = settings.google_play.as_ref();
        Self {
            verification: verification_value(settings.verification).to_owned(),
            bundle_id: apple.map(|a| a.bundle_id.clone()).unwrap_or_default(),
            app_apple_id: apple
                .and_then(|a| a.app_apple_id)
                .map(|id| id.to_string())
                .unwrap_or_default(),
            accept_sandbox_on_live: apple
                .filter(|a| a.accept_sandbox_on_live)
                .map(|_| "on".to_owned()),
            package_name: google.map(|g| g.package_name.clone()).unwrap_or_default(),
            public_key: google.map(|g| g.public_key.clone()).unwrap_or_default(),
        }
    }

    /// The settings the form asks for, or why its boxes cannot be read.
    pub fn input(&self) -> Result<StoreSettingsInput, Vec<FieldError>> {
        let mut errors = Vec::new();
        let verification = match self.verification.as_str() {
            "off" => Verification::Off,
            "report" => Verification::Report,
            "enforce" => Verification::Enforce,
            _ => {
                errors.push(FieldError::new("verification", "off, report or enforce"));
                Verification::Off
            }
        };
        let app_apple_id = number("app_store.app_apple_id", &self.app_apple_id, &mut errors);
        let app_store = optional_text(&self.bundle_id).map(|bundle_id| AppStoreSettings {
            bundle_id,
            app_apple_id,
            accept_sandbox_on_live: self.accept_sandbox_on_live.is_some(),
        });
        let package_name = optional_text(&self.package_name);
        let public_key = optional_text(&self.public_key);
        let google_play = if package_name.is_none() && public_key.is_none() {
            None
        } else {
            Some(GooglePlaySettings {
                package_name: package_name.unwrap_or_default(),
                public_key: public_key.unwrap_or_default(),
            })
        };
        if !errors.is_empty() {
            return Err(errors);
        }
        Ok(StoreSettingsInput {
            verification,
            app_store,
            google_play,
        })
    }
}

/// A verification level as the form sends it.
pub fn verification_value(v: Verification) -> &'static str {
    match v {
        Verification::Off => "off",
        Verification::Report => "report",
        Verification::Enforce => "enforce",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blank_boxes_leave_a_store_out_and_the_form_reads_back() {
        let form = StoresForm {
            verification: "report".into(),
            bundle_id: " com.studio.game ".into(),
            app_apple_id: "42".into(),
            accept_sandbox_on_live: Some("on".into()),
            ..StoresForm::default()
        };
        let input = form.input().expect("reads");
        assert_eq!(input.verification, Verification::Report);
        assert!(input.google_play.is_none());
        let apple = input.app_store.expect("the App Store");
        assert_eq!(
            (
                apple.bundle_id.as_str(),
                apple.app_apple_id,
                apple.accept_sandbox_on_live
            ),
            ("com.studio.game", Some(42), true)
        );
        let bad = StoresForm {
            verification: "always".into(),
            app_apple_id: "x".into(),
            ..StoresForm::default()
        };
        let fields: Vec<_> = bad
            .input()
            .expect_err("refused")
            .into_iter()
            .map(|e| e.field)
            .collect();
        assert_eq!(fields, ["verification", "app_store.app_apple_id"]);
    }
}
