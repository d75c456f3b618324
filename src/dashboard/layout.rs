//! The frame every signed-in page shares (the document's head, the member's bar and a
//! game's tabs) and the small pieces forms repeat: the hidden CSRF field and a field's
//! errors in the API's words.

use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Response};
use maud::{DOCTYPE, Markup, html};
use offer_domain::game::Game;
use offer_domain::validation::FieldError;
use uuid::Uuid;

use super::document::head;
use super::session::{CSRF_FIELD, SignedIn};
use crate::auth::Role;

/// The tabs of a game's pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tab {
    /// Genre, guardrails, mode.
    Overview,
    /// Items and their values.
    Catalogue,
    /// Templates, bundles and experiments.
    Offers,
    /// Kill switch and what is served now.
    Live,
    /// What the AI level's learner has learned.
    Model,
    /// Custom pages, their previews and publish requests, and the authoring runs.
    CustomPages,
    /// Offers and pages waiting for a decision.
    Approvals,
    /// The economy's health and the measured uplift.
    Economy,
    /// The results of the price experiments.
    Experiments,
    /// Settings, API Keys.
    Keys,
    /// Who changed what in the game, and when.
    Audit,
}

impl Tab {
    const ALL: [Tab; 11] = [
        Tab::Overview,
        Tab::Catalogue,
        Tab::Offers,
        Tab::Live,
        Tab::Model,
        Tab::CustomPages,
        Tab::Approvals,
        Tab::Economy,
        Tab::Experiments,
        Tab::Keys,
        Tab::Audit,
    ];

    fn label(self) -> &'static str {
        match self {
            Self::Overview => "Overview",
            Self::Catalogue => "Catalogue",
            Self::Offers => "Offers",
            Self::Live => "Live",
            Self::Model => "Model",
            Self::CustomPages => "Custom pages",
            Self::Approvals => "Approvals",
            Self::Economy => "Economy",
            Self::Experiments => "Experiments",
            Self::Keys => "Settings, API Keys",
            Self::Audit => "Audit trail",
        }
    }

    fn path(self) -> &'static str {
        match self {
            Self::Overview => "",
            Self::Catalogue => "/items",
            Self::Offers => "/offers",
            Self::Live => "/live",
            Self::Model => "/model",
            Self::CustomPages => "/custom-pages",
            Self::Approvals => "/approvals",
            Self::Economy => "/economy",
            Self::Experiments => "/experiments",
            Self::Keys => "/keys",
            Self::Audit => "/audit",
        }
    }

    /// Where the tab leads for the game `game_id`.
    pub fn href(self, game_id: Uuid) -> String {
        format!("/dashboard/games/{game_id}{}", self.path())
    }

    /// Admins only see the keys and the audit trail: the server refuses the rest anyway.
    fn shown_to(self, user: &SignedIn) -> bool {
        !matches!(self, Self::Keys | Self::Audit) || user.can(Role::Admin)
    }
}

/// A signed-in page, with a game's tabs when it is about one game.
pub fn page(
    user: &SignedIn,
    title: &str,
    game: Option<(&Game, Tab)>,
    body: Markup,
) -> Html<String> {
    Html(
        html! {
            (DOCTYPE)
            html lang="en" {
                (head(title))
                body {
                    header.bar {
                        a.brand href="/dashboard/games" { "Offer engine" }
                        nav aria-label="Main" {
                            a href="/dashboard/games" { "Games" }
                            a href="/dashboard/device" { "Device sign-in" }
                        }
                        span.who { (user.caller.sub) " · " (role_name(user.caller.role)) " · " (user.caller.studio_id) }
                        form method="post" action="/dashboard/sign-out" {
                            (csrf(user))
                            button type="submit" { "Sign out" }
                        }
                    }
                    @if let Some((game, current)) = game {
                        nav.tabs aria-label="Game" {
                            @for tab in Tab::ALL.into_iter().filter(|t| t.shown_to(user)) {
                                a href=(tab.href(game.game_id))
                                  aria-current=[(tab == current).then_some("page")] { (tab.label()) }
                            }
                        }
                    }
                    main { (body) }
                }
            }
        }
        .into_string(),
    )
}

/// A page of `game` under its tab `tab`, answered with `status` (200, or the status of a
/// refusal the page shows next to its form). The pages reach it through
/// [`DashGame::page`](super::access::DashGame::page).
pub fn game_page(
    status: StatusCode,
    user: &SignedIn,
    title: &str,
    (game, tab): (&Game, Tab),
    body: Markup,
) -> Response {
    (status, page(user, title, Some((game, tab)), body)).into_response()
}

/// The status of a page showing a form: 200, or 422 when it shows why the form was refused.
pub fn status_of(errors: &[FieldError]) -> StatusCode {
    if errors.is_empty() {
        StatusCode::OK
    } else {
        StatusCode::UNPROCESSABLE_ENTITY
    }
}

/// A role's name.
pub fn role_name(role: Role) -> &'static str {
    match role {
        Role::Viewer => "viewer",
        Role::Developer => "developer",
        Role::Admin => "admin",
    }
}

/// The hidden CSRF field every writing form carries.
pub fn csrf(user: &SignedIn) -> Markup {
    html! { input type="hidden" name=(CSRF_FIELD) value=(user.csrf()); }
}

/// The errors of `field` (and of its entries, `field[3].x`), each in the API's words, shown
/// next to the field.
pub fn field_errors(errors: &[FieldError], field: &str) -> Markup {
    let mine: Vec<&FieldError> = errors
        .iter()
        .filter(|e| {
            e.field == field
                || e.field.starts_with(&format!("{field}["))
                || e.field.starts_with(&format!("{field}."))
        })
        .collect();
    html! {
        @for e in mine {
            p.field-error id={ "error-" (field) } role="alert" {
                @if let Some(i) = e.index { "Entry " (i) ": " }
                @if e.field != field { (e.field) ": " }
                (e.reason)
            }
        }
    }
}

/// The errors no field of the form shows.
pub fn other_errors(errors: &[FieldError], fields: &[&str]) -> Markup {
    html! {
        @for e in errors.iter().filter(|e| !fields.iter().any(|f| e.field == *f || e.field.starts_with(&format!("{f}[")) || e.field.starts_with(&format!("{f}.")))) {
            p.field-error role="alert" {
                @if let Some(i) = e.index { "Entry " (i) ", " }
                (e.field) ": " (e.reason)
            }
        }
    }
}
