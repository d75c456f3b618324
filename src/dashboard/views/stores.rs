//! A game's store settings page: what each verification level means, the notification URLs
//! to paste in each store's console, and, for an admin, the form that changes the settings
//! and the button that rotates the Google Play token; a viewer reads the settings. The
//! overview's short Stores section links here.

use maud::{Markup, html};
use offer_domain::store_settings::{StoreSettings, Verification};
use offer_domain::validation::FieldError;
use uuid::Uuid;

use crate::auth::Role;
use crate::dashboard::forms::stores::StoresForm;
use crate::dashboard::layout::{csrf, field_errors, other_errors};
use crate::dashboard::session::SignedIn;

/// The fields the form's errors name.
const FIELDS: [&str; 6] = [
    "verification",
    "app_store.bundle_id",
    "app_store.app_apple_id",
    "google_play.package_name",
    "google_play.public_key",
    "google_play",
];

/// Where each store sends the game's notifications, as the page shows them.
pub struct Urls<'a> {
    /// The App Store Server Notifications URL.
    pub app_store: &'a str,
    /// The Google Play push URL (with its token for an admin), once the settings were saved.
    pub google_play: Option<&'a str>,
}

/// A verification level in words.
pub fn verification_name(v: Verification) -> &'static str {
    match v {
        Verification::Off => "Off",
        Verification::Report => "Report",
        Verification::Enforce => "Enforce",
    }
}

/// The store settings page.
pub fn page(
    user: &SignedIn,
    game_id: Uuid,
    settings: &StoreSettings,
    urls: &Urls<'_>,
    typed: &StoresForm,
    errors: &[FieldError],
) -> Markup {
    let base = format!("/dashboard/games/{game_id}/stores");
    html! {
        h1 { "Stores" }
        p { "Receipt verification: " strong #verification { (verification_name(settings.verification)) }
            @if let Some(since) = settings.verified_since { " since " (since.format("%Y-%m-%d %H:%M UTC")) } }
        p.muted { "Off: nothing is checked, purchases count as the game reports them. Report: a purchase without a valid store receipt is kept and flagged unverified, granted as before, and never counted in billing figures. Enforce: only verified purchases grant, and offers no store product can pay for are not served." }
        section {
            h2 { "Notification URLs" }
            p.muted { "Paste the App Store URL as the App Store Server Notifications (version 2) URL in App Store Connect, and the Google Play URL as the push endpoint of the Pub/Sub subscription of real-time developer notifications." }
            dl {
                dt { "App Store" } dd { code #app-store-url { (urls.app_store) } }
                dt { "Google Play" } dd {
                    @match urls.google_play {
                        Some(url) => code #google-play-url { (url) },
                        None => "shown once the settings are saved",
                    }
                }
            }
            @if user.can(Role::Admin) && urls.google_play.is_some() {
                form method="post" action={ (base) "/google-play-token" } data-confirm="Rotate the token? The Google Play URL with the old token stops working at once." {
                    (csrf(user))
                    button type="submit" { "Rotate the Google Play token" }
                }
            }
        }
        section {
            h2 { "Settings" }
            @if user.can(Role::Admin) {
                form.card #stores-form method="post" action=(base) {
                    (csrf(user))
                    (other_errors(errors, &FIELDS))
                    label for="verification-level" { "Receipt verification" }
                    select #verification-level name="verification" {
                        @for (value, name) in [("off", "Off"), ("report", "Report"), ("enforce", "Enforce")] {
                            option value=(value) selected[typed.verification == value] { (name) }
                        }
                    }
                    (field_errors(errors, "verification"))
                    h3 { "App Store (empty bundle id: not sold there)" }
                    label for="bundle-id" { "Bundle id" }
                    input #bundle-id type="text" name="bundle_id" maxlength="155" value=(typed.bundle_id);
                    (field_errors(errors, "app_store.bundle_id"))
                    label for="app-apple-id" { "Apple id of the app (empty while sandbox only)" }
                    input #app-apple-id type="number" min="1" name="app_apple_id" value=(typed.app_apple_id);
                    (field_errors(errors, "app_store.app_apple_id"))
                    label for="accept-sandbox" {
                        input #accept-sandbox type="checkbox" name="accept_sandbox_on_live" checked[typed.accept_sandbox_on_live.is_some()];
                        " Accept sandbox transactions in production (App Review)"
                    }
                    h3 { "Google Play (both empty: not sold there)" }
                    label for="package-name" { "Package name" }
                    input #package-name type="text" name="package_name" maxlength="255" value=(typed.package_name);
                    (field_errors(errors, "google_play.package_name"))
                    label for="public-key" { "Licensing public key (base64, from the Play Console)" }
                    textarea #public-key name="public_key" { (typed.public_key) }
                    (field_errors(errors, "google_play.public_key"))
                    button type="submit" { "Save store settings" }
                }
            } @else {
                dl {
                    dt { "App Store bundle id" } dd { (settings.app_store.as_ref().map(|a| a.bundle_id.as_str()).unwrap_or("not sold there")) }
                    dt { "Google Play package" } dd { (settings.google_play.as_ref().map(|g| g.package_name.as_str()).unwrap_or("not sold there")) }
                }
            }
        }
    }
}

/// The overview's short Stores section: the verification level and a link to the page.
pub fn summary(game_id: Uuid, settings: &StoreSettings) -> Markup {
    let sold: Vec<&str> = [
        settings.app_store.as_ref().map(|_| "App Store"),
        settings.google_play.as_ref().map(|_| "Google Play"),
    ]
    .into_iter()
    .flatten()
    .collect();
    html! {
        section #stores {
            h2 { "Stores" }
            p { "Receipt verification: " strong { (verification_name(settings.verification)) }
                " · " @if sold.is_empty() { "no store configured" } @else { (sold.join(", ")) } }
            p { a href={ "/dashboard/games/" (game_id) "/stores" } { "Store settings and notification URLs" } }
        }
    }
}
