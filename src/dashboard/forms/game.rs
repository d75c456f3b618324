//! The forms of the games pages as typed: a new game (its name, genre, a box of currencies,
//! one a line, and a box of inline items in JSON) and a game's guardrails (an empty box turns
//! a limit off), each read into what the games service takes.

use offer_domain::catalogue::ItemInput;
use offer_domain::currency::{Currency, CurrencyKind};
use offer_domain::game::{Guardrails, GuardrailsPatch};
use offer_domain::validation::FieldError;
use serde::Deserialize;

use super::{codes, number};
use crate::service::game::games::NewGame;

/// The fields of the create form, as typed.
#[derive(Debug, Default, Deserialize)]
pub struct CreateForm {
    /// The game's name.
    #[serde(default)]
    pub name: String,
    /// Its genre.
    #[serde(default)]
    pub genre: String,
    /// Its currencies, one a line.
    #[serde(default)]
    pub currencies: String,
    /// The items it starts with, a JSON array.
    #[serde(default)]
    pub items: String,
}

impl CreateForm {
    /// The game the form describes, or why its boxes cannot be read.
    pub fn new_game(&self) -> Result<NewGame, Vec<FieldError>> {
        let mut errors = Vec::new();
        let currencies = currencies(&self.currencies).unwrap_or_else(|e| {
            errors.push(e);
            Vec::new()
        });
        let items = inline_items(&self.items).unwrap_or_else(|e| {
            errors.push(e);
            Vec::new()
        });
        if !errors.is_empty() {
            return Err(errors);
        }
        Ok(NewGame {
            name: self.name.clone(),
            genre: self.genre.clone(),
            currencies,
            items,
            guardrails: Guardrails::default(),
        })
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

impl GuardrailsForm {
    /// The change of the guardrails the form asks for, or why its boxes cannot be read.
    pub fn patch(&self) -> Result<GuardrailsPatch, Vec<FieldError>> {
        let mut errors = Vec::new();
        let patch = GuardrailsPatch {
            max_price_cents: Some(number(
                "max_price_cents",
                &self.max_price_cents,
                &mut errors,
            )),
            max_offers_per_session: Some(number(
                "max_offers_per_session",
                &self.max_offers_per_session,
                &mut errors,
            )),
            min_offer_interval_s: Some(number(
                "min_offer_interval_s",
                &self.min_offer_interval_s,
                &mut errors,
            )),
            loot_box_blocked_countries: Some(codes(&self.loot_box_blocked_countries)),
        };
        if errors.is_empty() {
            Ok(patch)
        } else {
            Err(errors)
        }
    }
}

/// Reads the currencies box of a new game: one currency a line, `id kind [display name]`.
fn currencies(text: &str) -> Result<Vec<Currency>, FieldError> {
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
                max_per_event: None,
                max_per_player_day: None,
            })
        })
        .collect()
}

/// Reads the inline items box of a new game: empty, or a JSON array of items as the REST API
/// takes them.
fn inline_items(text: &str) -> Result<Vec<ItemInput>, FieldError> {
    if text.trim().is_empty() {
        return Ok(Vec::new());
    }
    serde_json::from_str(text)
        .map_err(|e| FieldError::new("items", format!("a JSON array of items: {e}")))
}
