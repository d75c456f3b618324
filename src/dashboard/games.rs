//! Games: the studio's list and the create form (name, genre, currencies, up to 20 inline
//! items), and a game's overview: genre, quadrant, guardrails and the mode with its promotion
//! Shadow -> Assisted -> Autonomous. Every rule is the service's (`service/games.rs`); a
//! refusal is shown next to its field.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use maud::{Markup, html};
use offer_domain::catalogue::ItemInput;
use offer_domain::currency::{Currency, CurrencyKind};
use offer_domain::game::{Game, Guardrails, GuardrailsPatch, Mode};
use offer_domain::validation::FieldError;
use serde::Deserialize;
use uuid::Uuid;

use super::extract::PagePath;
use super::failure::PageError;
use super::forms::number;
use super::layout::{self, Tab, csrf, field_errors, other_errors};
use super::session::{CsrfForm, SignedIn, game_of};
use crate::auth::Role;
use crate::service::ServiceError;
use crate::service::game::games::{self, NewGame};
use crate::state::AppState;

/// The fields of the create form, as typed.
#[derive(Debug, Default, Deserialize)]
pub struct CreateForm {
    #[serde(default)]
    name: String,
    #[serde(default)]
    genre: String,
    #[serde(default)]
    currencies: String,
    #[serde(default)]
    items: String,
}

/// Reads the currencies box: one currency a line, `id kind [display name]`.
fn parse_currencies(text: &str) -> Result<Vec<Currency>, FieldError> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .enumerate()
        .map(|(i, line)| {
            let mut words = line.splitn(3, char::is_whitespace);
            let id = words.next().unwrap_or_default();
            let kind = match words.next().map(str::trim) {
                Some("hard") => CurrencyKind::Hard,
                Some("earned") => CurrencyKind::Earned,
                _ => {
                    return Err(FieldError::new(
                        "currencies",
                        format!(
                            "line {}: write `id hard` or `id earned`, then an optional name",
                            i + 1
                        ),
                    ));
                }
            };
            Ok(Currency {
                currency_id: id.to_owned(),
                kind,
                name: words
                    .next()
                    .map(|n| n.trim().to_owned())
                    .filter(|n| !n.is_empty()),
                usd_per_unit: None,
            })
        })
        .collect()
}

/// Reads the inline items box: empty, or a JSON array of items as the REST API takes them.
fn parse_items(text: &str) -> Result<Vec<ItemInput>, FieldError> {
    if text.trim().is_empty() {
        return Ok(Vec::new());
    }
    serde_json::from_str(text)
        .map_err(|e| FieldError::new("items", format!("a JSON array of items: {e}")))
}

fn create_form(
    user: &SignedIn,
    genres: &[&String],
    typed: &CreateForm,
    errors: &[FieldError],
) -> Markup {
    html! {
        section {
            h2 { "New game" }
            form method="post" action="/dashboard/games" {
                (csrf(user))
                (other_errors(errors, &["name", "genre", "currencies", "items", "item_id", "guardrails"]))
                label for="name" { "Name" }
                input #name type="text" name="name" required value=(typed.name);
                (field_errors(errors, "name"))
                label for="genre" { "Genre" }
                select #genre name="genre" {
                    @for g in genres {
                        option value=(g) selected[typed.genre == **g] { (g) }
                    }
                }
                (field_errors(errors, "genre"))
                label for="currencies" { "Currencies, one a line: id, hard or earned, optional name" }
                textarea #currencies name="currencies" placeholder="gems hard Gems\ngold earned Gold" { (typed.currencies) }
                (field_errors(errors, "currencies"))
                label for="items" { "Items to start with (optional, at most 20): a JSON array" }
                textarea #items name="items" placeholder=r#"[{"item_id": "gem_pack", "item_name": "Gem pack", "category": "currency_pack", "price_usd": 4.99, "currency_id": "gems", "quantity": 500}]"# { (typed.items) }
                (field_errors(errors, "items"))
                (field_errors(errors, "item_id"))
                button type="submit" { "Create game" }
            }
        }
    }
}

async fn list_page(
    state: &AppState,
    user: &SignedIn,
    typed: &CreateForm,
    errors: &[FieldError],
) -> Result<Response, PageError> {
    let (list, _) = games::list(&state.services, &user.caller.studio_id, None, usize::MAX).await?;
    let mut genres: Vec<&String> = state.services.genres.keys().collect();
    genres.sort();
    let body = html! {
        h1 { "Games" }
        @if list.is_empty() {
            p.muted { "No game yet." }
        } @else {
            div.table-wrap { table {
                thead { tr { th { "Name" } th { "Genre" } th { "Mode" } th { "Created" } } }
                tbody {
                    @for g in &list {
                        tr {
                            td { a href={ "/dashboard/games/" (g.game_id) } { (g.name) } }
                            td { (g.genre) }
                            td { (mode_name(g.mode)) }
                            td { (g.created_at.format("%Y-%m-%d")) }
                        }
                    }
                }
            } }
        }
        @if user.can(Role::Developer) {
            (create_form(user, &genres, typed, errors))
        }
    };
    let status = if errors.is_empty() {
        StatusCode::OK
    } else {
        StatusCode::UNPROCESSABLE_ENTITY
    };
    Ok((status, layout::page(user, "Games", None, body)).into_response())
}

/// `GET /dashboard/games`.
pub async fn list(State(state): State<AppState>, user: SignedIn) -> Result<Response, PageError> {
    list_page(&state, &user, &CreateForm::default(), &[]).await
}

/// `POST /dashboard/games` (developer).
pub async fn create(
    State(state): State<AppState>,
    CsrfForm { user, form }: CsrfForm<CreateForm>,
) -> Result<Response, PageError> {
    user.require(Role::Developer)?;
    let mut errors = Vec::new();
    let currencies = parse_currencies(&form.currencies).unwrap_or_else(|e| {
        errors.push(e);
        Vec::new()
    });
    let items = parse_items(&form.items).unwrap_or_else(|e| {
        errors.push(e);
        Vec::new()
    });
    if !errors.is_empty() {
        return list_page(&state, &user, &form, &errors).await;
    }
    let new = NewGame {
        name: form.name.clone(),
        genre: form.genre.clone(),
        currencies,
        items,
        guardrails: Guardrails::default(),
    };
    match games::create(&state.services, &user.caller.studio_id, new).await {
        Ok(handle) => Ok(
            Redirect::to(&format!("/dashboard/games/{}", handle.view().game.game_id))
                .into_response(),
        ),
        Err(ServiceError::Validation(errors) | ServiceError::Conflicts(errors)) => {
            list_page(&state, &user, &form, &errors).await
        }
        Err(e) => Err(e.into()),
    }
}

/// A mode's name.
pub fn mode_name(mode: Mode) -> &'static str {
    match mode {
        Mode::Shadow => "Shadow",
        Mode::Assisted => "Assisted",
        Mode::Autonomous => "Autonomous",
    }
}

fn mode_value(mode: Mode) -> &'static str {
    match mode {
        Mode::Shadow => "shadow",
        Mode::Assisted => "assisted",
        Mode::Autonomous => "autonomous",
    }
}

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map(|v| v.to_string()).unwrap_or_default()
}

fn overview(
    user: &SignedIn,
    game: &Game,
    quadrant: &str,
    errors: &[FieldError],
    problem: Option<&str>,
) -> Markup {
    let g = &game.guardrails;
    html! {
        h1 { (game.name) }
        @if let Some(problem) = problem { p.error role="alert" { (problem) } }
        section {
            h2 { "Game" }
            dl {
                dt { "Genre" } dd { (game.genre) }
                dt { "FSR quadrant" } dd { (quadrant) }
                dt { "Currencies" } dd {
                    @for c in &game.currencies { (c.currency_id) " (" (format!("{:?}", c.kind).to_lowercase()) ") " }
                }
                dt { "Launched" } dd { (game.launched_at.map_or_else(|| "not yet".to_owned(), |t| t.format("%Y-%m-%d").to_string())) }
            }
        }
        section {
            h2 { "Mode" }
            p { "Now: " strong #mode { (mode_name(game.mode)) } }
            p.muted { "Shadow computes offers silently; Assisted needs an approval for each AI offer; Autonomous acts within the guardrails (it needs a price ceiling). Promote one step at a time." }
            (field_errors(errors, "mode"))
            @if user.can(Role::Admin) {
                @for to in [Mode::Shadow, Mode::Assisted, Mode::Autonomous] {
                    @if to != game.mode {
                        form.inline method="post" action={ "/dashboard/games/" (game.game_id) "/mode" } {
                            (csrf(user))
                            input type="hidden" name="mode" value=(mode_value(to));
                            button type="submit" { "Switch to " (mode_name(to)) }
                        }
                        " "
                    }
                }
            }
        }
        section {
            h2 { "Guardrails" }
            @if user.can(Role::Developer) {
                form method="post" action={ "/dashboard/games/" (game.game_id) "/guardrails" } {
                    (csrf(user))
                    label for="max_price_cents" { "Price ceiling in cents (empty: none)" }
                    input #max_price_cents type="number" min="0" name="max_price_cents" value=(opt(g.max_price_cents));
                    (field_errors(errors, "max_price_cents"))
                    label for="max_offers_per_session" { "Most offers per session (empty: off)" }
                    input #max_offers_per_session type="number" min="0" name="max_offers_per_session" value=(opt(g.max_offers_per_session));
                    (field_errors(errors, "max_offers_per_session"))
                    label for="min_offer_interval_s" { "Least seconds between two offers (empty: off)" }
                    input #min_offer_interval_s type="number" min="0" name="min_offer_interval_s" value=(opt(g.min_offer_interval_s));
                    (field_errors(errors, "min_offer_interval_s"))
                    label for="loot_box_blocked_countries" { "Countries where loot boxes are never offered (ISO codes, comma separated)" }
                    input #loot_box_blocked_countries type="text" name="loot_box_blocked_countries" value=(g.loot_box_blocked_countries.join(", "));
                    (field_errors(errors, "loot_box_blocked_countries"))
                    (other_errors(errors, &["mode", "max_price_cents", "max_offers_per_session", "min_offer_interval_s", "loot_box_blocked_countries"]))
                    button type="submit" { "Save guardrails" }
                }
            } @else {
                dl {
                    dt { "Price ceiling (cents)" } dd { (opt(g.max_price_cents)) }
                    dt { "Most offers per session" } dd { (opt(g.max_offers_per_session)) }
                    dt { "Least seconds between offers" } dd { (opt(g.min_offer_interval_s)) }
                    dt { "Loot boxes blocked in" } dd { (g.loot_box_blocked_countries.join(", ")) }
                }
            }
        }
    }
}

/// Where a write from the game page goes next: back to the page when the service saved it,
/// the page again with the service's field errors (422) when it refused the fields.
async fn after_write<T>(
    state: &AppState,
    user: &SignedIn,
    game_id: Uuid,
    result: Result<T, ServiceError>,
) -> Result<Response, PageError> {
    match result {
        Ok(_) => Ok(Redirect::to(&format!("/dashboard/games/{game_id}")).into_response()),
        Err(ServiceError::Validation(errors)) => {
            show_page(
                state,
                user,
                game_id,
                &errors,
                None,
                StatusCode::UNPROCESSABLE_ENTITY,
            )
            .await
        }
        Err(e) => Err(e.into()),
    }
}

async fn show_page(
    state: &AppState,
    user: &SignedIn,
    game_id: Uuid,
    errors: &[FieldError],
    problem: Option<&str>,
    status: StatusCode,
) -> Result<Response, PageError> {
    let handle = game_of(&state.services, user, game_id).await?;
    let view = handle.view();
    let quadrant = serde_json::to_value(view.snapshot.quadrant())
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default();
    let body = overview(user, &view.game, &quadrant, errors, problem);
    Ok(layout::game_page(
        status,
        user,
        &view.game.name,
        (&view.game, Tab::Overview),
        body,
    ))
}

/// `GET /dashboard/games/{game_id}`.
pub async fn show(
    State(state): State<AppState>,
    user: SignedIn,
    PagePath(game_id): PagePath<Uuid>,
) -> Result<Response, PageError> {
    show_page(&state, &user, game_id, &[], None, StatusCode::OK).await
}

/// The mode form.
#[derive(Debug, Deserialize)]
pub struct ModeForm {
    mode: Mode,
}

/// `POST /dashboard/games/{game_id}/mode` (admin).
pub async fn set_mode(
    State(state): State<AppState>,
    PagePath(game_id): PagePath<Uuid>,
    CsrfForm { user, form }: CsrfForm<ModeForm>,
) -> Result<Response, PageError> {
    let handle = game_of(&state.services, &user, game_id).await?;
    user.require(Role::Admin)?;
    match games::set_mode(&state.services, &handle, form.mode).await {
        Err(ServiceError::Conflict(why)) => {
            show_page(
                &state,
                &user,
                game_id,
                &[],
                Some(&why),
                StatusCode::CONFLICT,
            )
            .await
        }
        result => after_write(&state, &user, game_id, result).await,
    }
}

/// The guardrails form, as typed: an empty box turns a limit off.
#[derive(Debug, Deserialize)]
pub struct GuardrailsForm {
    #[serde(default)]
    max_price_cents: String,
    #[serde(default)]
    max_offers_per_session: String,
    #[serde(default)]
    min_offer_interval_s: String,
    #[serde(default)]
    loot_box_blocked_countries: String,
}

/// `POST /dashboard/games/{game_id}/guardrails` (developer).
pub async fn set_guardrails(
    State(state): State<AppState>,
    PagePath(game_id): PagePath<Uuid>,
    CsrfForm { user, form }: CsrfForm<GuardrailsForm>,
) -> Result<Response, PageError> {
    let handle = game_of(&state.services, &user, game_id).await?;
    user.require(Role::Developer)?;
    let mut errors = Vec::new();
    let patch = GuardrailsPatch {
        max_price_cents: Some(number(
            "max_price_cents",
            &form.max_price_cents,
            &mut errors,
        )),
        max_offers_per_session: Some(number(
            "max_offers_per_session",
            &form.max_offers_per_session,
            &mut errors,
        )),
        min_offer_interval_s: Some(number(
            "min_offer_interval_s",
            &form.min_offer_interval_s,
            &mut errors,
        )),
        loot_box_blocked_countries: Some(
            form.loot_box_blocked_countries
                .split(',')
                .map(|c| c.trim().to_owned())
                .filter(|c| !c.is_empty())
                .collect(),
        ),
    };
    if !errors.is_empty() {
        return show_page(
            &state,
            &user,
            game_id,
            &errors,
            None,
            StatusCode::UNPROCESSABLE_ENTITY,
        )
        .await;
    }
    let result = games::patch_guardrails(&state.services, &handle, patch).await;
    after_write(&state, &user, game_id, result).await
}
