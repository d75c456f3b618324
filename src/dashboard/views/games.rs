//! The games: the studio's list with the create form (developer), and a game's overview
//! (genre, quadrant, currencies, the mode with its switch for an admin, the guardrails with
//! their form for a developer).

use maud::{Markup, html};
use offer_domain::game::{Game, Mode};
use offer_domain::validation::FieldError;

use crate::auth::Role;
use crate::dashboard::forms::game::CreateForm;
use crate::dashboard::layout::{csrf, field_errors, other_errors};
use crate::dashboard::session::SignedIn;

/// The studio's games and, for a developer, the create form showing `typed` with `errors`
/// next to their fields; `genres` are the genres a game may have, sorted.
pub fn list(
    user: &SignedIn,
    list: &[Game],
    genres: &[&String],
    typed: &CreateForm,
    errors: &[FieldError],
) -> Markup {
    html! {
        h1 { "Games" }
        @if list.is_empty() {
            p.muted { "No game yet." }
        } @else {
            div.table-wrap { table {
                thead { tr { th { "Name" } th { "Genre" } th { "Mode" } th { "Created" } } }
                tbody {
                    @for g in list {
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
            (create_form(user, genres, typed, errors))
        }
    }
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

/// A mode's name.
fn mode_name(mode: Mode) -> &'static str {
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

/// A game's overview, with the service's refusal of a write: `errors` next to their fields,
/// or the `problem` of the whole page (a mode the game may not switch to).
pub fn overview(
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
                    @for c in &game.currencies {
                        (c.currency_id) " (" (format!("{:?}", c.kind).to_lowercase())
                        @if let Some(cap) = c.max_per_player_day { ", at most " (cap) " a player a day in the figures" }
                        ") "
                    }
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
