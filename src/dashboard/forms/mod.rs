//! Every parser of what a dashboard form sends: the small typed boxes the pages share (a box
//! of dollars, a box of a whole number, a list typed with commas or spaces, a text that is
//! absent when left blank), the boxes of the offers page (the templates' JSON, the variants
//! of an experiment, an item's or a bundle's store products), the forms read as a whole
//! ([`bundle`], [`game`], [`item`], [`stores`]) and the uploaded catalogue file
//! ([`items_file`]). A box that does not
//! read adds its error, in the form's words, next to its field, and the page shows the form
//! again with what was typed.

pub mod bundle;
pub mod game;
pub mod item;
pub mod items_file;
pub mod stores;

use offer_domain::offer::{Template, Variant};
use offer_domain::product_ids::StoreProducts;
use offer_domain::validation::FieldError;

/// A decimal box (a price in dollars, a leading `$` allowed): empty is `None`; anything else
/// must read as a number, or `field` is refused.
pub fn decimal(field: &str, text: &str, errors: &mut Vec<FieldError>) -> Option<f64> {
    let text = text.trim().trim_start_matches('$');
    if text.is_empty() {
        return None;
    }
    text.parse().map_or_else(
        |_| {
            errors.push(FieldError::new(field, "a number such as 4.99"));
            None
        },
        Some,
    )
}

/// A number box: empty is `None`; anything else must read as a number of `T`, or `field`
/// is refused.
pub fn number<T: std::str::FromStr>(
    field: &str,
    text: &str,
    errors: &mut Vec<FieldError>,
) -> Option<T> {
    let text = text.trim();
    if text.is_empty() {
        return None;
    }
    text.parse().map_or_else(
        |_| {
            errors.push(FieldError::new(field, "a whole number, or empty"));
            None
        },
        Some,
    )
}

/// A list typed with commas or spaces between its entries.
pub fn words(text: &str) -> Vec<String> {
    text.split([',', ' ', '\n', '\r', '\t'])
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect()
}

/// A text box without its surrounding spaces: `None` when nothing else was typed.
pub fn optional_text(text: &str) -> Option<String> {
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_owned())
}

/// The store products of an item's or a bundle's form: a blank box sells under no product
/// in that store.
pub fn store_products(app_store: &str, google_play: &str) -> StoreProducts {
    StoreProducts {
        app_store: optional_text(app_store),
        google_play: optional_text(google_play),
    }
}

/// A list of codes typed with commas between them (countries), each without its spaces.
pub fn codes(text: &str) -> Vec<String> {
    text.split(',')
        .map(|c| c.trim().to_owned())
        .filter(|c| !c.is_empty())
        .collect()
}

/// Reads the templates box: the whole JSON list of a game's templates.
pub fn templates(text: &str) -> Result<Vec<Template>, FieldError> {
    serde_json::from_str(text)
        .map_err(|e| FieldError::new("templates", format!("not a JSON list of templates: {e}")))
}

/// Reads the variants box of a new experiment: one `name weight [price]` a line, the price
/// `4.99` (a fixed price) or `x0.8` (a multiplier).
pub fn variants(text: &str) -> Result<Vec<Variant>, FieldError> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .enumerate()
        .map(|(i, line)| {
            let bad = |why: &str| FieldError::new("variants", format!("line {}: {why}", i + 1));
            let words: Vec<&str> = line.split_whitespace().collect();
            let (name, weight, price) = match words.as_slice() {
                [name, weight] => (*name, *weight, None),
                [name, weight, price] => (*name, *weight, Some(*price)),
                _ => return Err(bad("write a name, a weight, then an optional price")),
            };
            let weight = weight
                .parse()
                .map_err(|_| bad("the weight is a whole number such as 1"))?;
            let mut variant = Variant {
                name: name.to_owned(),
                weight,
                price_usd: None,
                price_multiplier: None,
            };
            match price {
                None => {}
                Some(p) if p.starts_with(['x', 'X']) => {
                    variant.price_multiplier = Some(
                        p[1..]
                            .parse()
                            .map_err(|_| bad("a multiplier reads like x0.8"))?,
                    );
                }
                Some(p) => {
                    variant.price_usd = Some(
                        p.trim_start_matches('$')
                            .parse()
                            .map_err(|_| bad("a price reads like 4.99"))?,
                    );
                }
            }
            Ok(variant)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_decimal_box_reads_dollars_and_refuses_words() {
        let mut errors = Vec::new();
        assert_eq!(decimal("price_usd", " $4.99 ", &mut errors), Some(4.99));
        assert_eq!(decimal("price_usd", "  ", &mut errors), None);
        assert!(errors.is_empty());
        assert_eq!(decimal("price_usd", "four", &mut errors), None);
        assert_eq!(errors.len(), 1);
        assert_eq!(errors[0].field, "price_usd");
        assert_eq!(errors[0].reason, "a number such as 4.99");
    }

    #[test]
    fn a_number_box_reads_whole_numbers_only() {
        let mut errors = Vec::new();
        assert_eq!(number::<u32>("max", " 12 ", &mut errors), Some(12));
        assert_eq!(number::<u32>("max", "", &mut errors), None);
        assert!(errors.is_empty());
        assert_eq!(number::<u32>("max", "1.5", &mut errors), None);
        assert_eq!(number::<u32>("max", "-3", &mut errors), None);
        let fields: Vec<&str> = errors.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(fields, ["max", "max"]);
        assert_eq!(errors[0].reason, "a whole number, or empty");
    }

    #[test]
    fn words_are_split_by_commas_and_any_spaces() {
        assert_eq!(
            words("sword, shield\tbow\r\n,,helm "),
            ["sword", "shield", "bow", "helm"]
        );
        assert!(words(" , \n").is_empty());
    }

    #[test]
    fn a_blank_text_is_absent() {
        assert_eq!(
            optional_text("  too pricey \n"),
            Some("too pricey".to_owned())
        );
        assert_eq!(optional_text(" \t\n"), None);
    }

    #[test]
    fn codes_are_split_by_commas_only() {
        assert_eq!(codes(" BE, nl ,,FR "), ["BE", "nl", "FR"]);
        assert!(codes(" , ").is_empty());
    }

    #[test]
    fn a_variant_line_reads_a_fixed_price_or_a_multiplier() {
        let read = variants("control 1\n\n cheaper 2 x0.8 \npremium 1 $5.99").expect("variants");
        let seen: Vec<_> = read
            .iter()
            .map(|v| (v.name.as_str(), v.weight, v.price_usd, v.price_multiplier))
            .collect();
        assert_eq!(
            seen,
            [
                ("control", 1, None, None),
                ("cheaper", 2, None, Some(0.8)),
                ("premium", 1, Some(5.99), None),
            ]
        );
        let refused = variants("a 1\nb heavy").expect_err("a weight in words");
        assert_eq!(refused.field, "variants");
        assert_eq!(
            refused.reason,
            "line 2: the weight is a whole number such as 1"
        );
    }

    #[test]
    fn templates_that_are_not_json_are_refused_on_their_box() {
        assert_eq!(templates("[]").expect("an empty list").len(), 0);
        let refused = templates("{").expect_err("not JSON");
        assert_eq!(refused.field, "templates");
        assert!(refused.reason.starts_with("not a JSON list of templates"));
    }
}
