//! Settings, API Keys (admin): issue SDK keys (production or sandbox) and authoring keys, each
//! shown once with a copy button, list every key of the game and revoke one. The keys service
//! (`service/studio/keys.rs`) does the work, as for the REST routes; a revocation reaches every
//! node and every socket opened with the key at once.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use maud::{Markup, html};
use offer_domain::environment::Environment;
use serde::Deserialize;
use uuid::Uuid;

use super::access::{Admin, DashGame};
use super::extract::PagePath;
use super::failure::PageError;
use super::layout::{self, Tab, csrf};
use super::session::{CsrfForm, NoFields, SignedIn};
use crate::service::studio::keys::KeyKind;
use crate::state::AppState;

/// A key just issued, shown this once.
struct Issued {
    label: &'static str,
    secret: String,
}

async fn keys_page(
    state: &AppState,
    at: &DashGame<Admin>,
    issued: Option<Issued>,
) -> Result<Response, PageError> {
    let (user, game_id) = (&at.user, at.game_id());
    let view = at.game.view();
    let keys = state.auth.list(game_id).await?;
    let base = format!("/dashboard/games/{game_id}/keys");
    let body: Markup = html! {
        h1 { "Settings, API Keys" }
        @if let Some(issued) = &issued {
            div.notice role="status" {
                p { strong { "New " (issued.label) ": copy it now, it is never shown again." } }
                label for="new-key" { "The key" }
                input #new-key.secret type="text" readonly value=(issued.secret);
                button type="button" data-copy="new-key" { "Copy" }
            }
        }
        section {
            h2 { "Issue a key" }
            form.inline method="post" action={ (base) "/sdk" } {
                (csrf(user))
                label for="environment" { "SDK key for" }
                select #environment name="environment" {
                    option value="production" { "production" }
                    option value="sandbox" { "sandbox" }
                }
                button type="submit" { "Issue SDK key" }
            }
            form method="post" action={ (base) "/authoring" } {
                (csrf(user))
                p.muted { "An authoring key lets the authoring tool draft custom pages and read the catalogue of this game." }
                button type="submit" { "Issue authoring key" }
            }
        }
        section {
            h2 { "Keys" }
            div.table-wrap { table #keys {
                thead { tr { th { "Kind" } th { "Issued" } th { "By" } th { "Expires" } th { "State" } th { span.muted { "Action" } } } }
                tbody {
                    @for k in &keys {
                        tr data-key-id=(k.key_id) {
                            td { (kind_name(k.kind)) }
                            td { (k.created_at.format("%Y-%m-%d %H:%M")) }
                            td { (k.issued_by.as_deref().unwrap_or("")) }
                            td { (k.expires_at.map(|t| t.format("%Y-%m-%d").to_string()).unwrap_or_default()) }
                            td.state { @if k.revoked_at.is_some() { "revoked" } @else { "active" } }
                            td {
                                @if k.revoked_at.is_none() {
                                    form method="post" action={ (base) "/" (k.key_id) "/revoke" } data-confirm="Revoke this key? Games using it stop at once." {
                                        (csrf(user))
                                        button.danger type="submit" { "Revoke" }
                                    }
                                }
                            }
                        }
                    }
                }
            } }
        }
    };
    Ok(layout::game_page(
        StatusCode::OK,
        user,
        "Settings, API Keys",
        (&view.game, Tab::Keys),
        body,
    ))
}

fn kind_name(kind: KeyKind) -> &'static str {
    match kind {
        KeyKind::Sdk(Environment::Production) => "SDK (production)",
        KeyKind::Sdk(Environment::Sandbox) => "SDK (sandbox)",
        KeyKind::Authoring => "authoring",
    }
}

/// `GET /dashboard/games/{game_id}/keys` (admin).
pub async fn page(
    at: DashGame<Admin>,
    State(state): State<AppState>,
) -> Result<Response, PageError> {
    keys_page(&state, &at, None).await
}

/// The SDK key form.
#[derive(Debug, Deserialize)]
pub struct SdkForm {
    environment: Environment,
}

/// `POST /dashboard/games/{game_id}/keys/sdk` (admin): the page with the new key.
pub async fn issue_sdk(
    at: DashGame<Admin>,
    State(state): State<AppState>,
    CsrfForm { user, form }: CsrfForm<SdkForm>,
) -> Result<Response, PageError> {
    issue(&state, &at, &user, KeyKind::Sdk(form.environment)).await
}

/// `POST /dashboard/games/{game_id}/keys/authoring` (admin): the page with the new key.
pub async fn issue_authoring(
    at: DashGame<Admin>,
    State(state): State<AppState>,
    CsrfForm { user, .. }: CsrfForm<NoFields>,
) -> Result<Response, PageError> {
    issue(&state, &at, &user, KeyKind::Authoring).await
}

/// Issues a key of `kind` on behalf of the signed-in admin (the keys service's one issuance,
/// as for the REST routes) and answers the page with it.
async fn issue(
    state: &AppState,
    at: &DashGame<Admin>,
    user: &SignedIn,
    kind: KeyKind,
) -> Result<Response, PageError> {
    let key = state
        .auth
        .issue(at.game_id(), &user.caller.studio_id, &user.by(), kind)
        .await?;
    let label = match kind {
        KeyKind::Sdk(_) => "SDK key",
        KeyKind::Authoring => "authoring key",
    };
    let issued = Issued {
        label,
        secret: key.token,
    };
    keys_page(state, at, Some(issued)).await
}

/// `POST /dashboard/games/{game_id}/keys/{key_id}/revoke` (admin).
pub async fn revoke(
    at: DashGame<Admin>,
    State(state): State<AppState>,
    PagePath((game_id, key_id)): PagePath<(Uuid, Uuid)>,
    _: CsrfForm<NoFields>,
) -> Result<Response, PageError> {
    state
        .auth
        .revoke(&at.user.by(), game_id, |_| true, key_id)
        .await?;
    Ok(Redirect::to(&format!("/dashboard/games/{game_id}/keys")).into_response())
}
