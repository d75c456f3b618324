//! The small parsers of typed form fields that the pages share: a box of dollars, a box of
//! a whole number, a list typed with commas or spaces, and a text that is absent when left
//! blank. A box that does not read adds its error, in the form's words, next to its field,
//! and the page shows the form again with what was typed.

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
}
