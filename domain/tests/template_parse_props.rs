//! Property: the template parser and the validator never panic, whatever the input:
//! arbitrary text, and valid templates with bytes deleted, duplicated or replaced, or cut
//! short. They return a tree or an error with a line inside the input.

use offer_domain::template::catalogue::ItemLookup;
use offer_domain::template::{parse, validate};
use proptest::prelude::*;
use serde_json::json;

const PAGE: &str = include_str!("fixtures/offer_page.dart");

/// Characters that matter to the lexer, so arbitrary strings reach deep into the parser.
const ALPHABET: &[char] = &[
    '(', ')', '[', ']', '{', '}', ',', ';', '.', ':', '?', '!', '=', '>', '<', '$', '\'', '"',
    '\\', 'r', 'a', 'A', '0', 'x', ' ', '\n', '/', '*', '@', '-', '+', '_', 'é',
];

fn check(src: &str) {
    let lines = src.lines().count().max(1) as u32 + 1;
    if let Err(e) = parse(src) {
        assert!(e.line() >= 1 && e.line() <= lines, "{e} in {lines} lines");
    }
    let v = validate(src, &json!({"items": ["a"], "title": "t"}), &|_: &str| {
        ItemLookup::Unknown
    });
    assert_eq!(v.valid, v.blockers.is_empty());
}

/// One edit of a valid template.
#[derive(Debug, Clone)]
enum Edit {
    Delete(usize, usize),
    Duplicate(usize, usize),
    Replace(usize, char),
    Truncate(usize),
}

fn apply(src: &str, edits: &[Edit]) -> String {
    let mut chars: Vec<char> = src.chars().collect();
    for edit in edits {
        let n = chars.len().max(1);
        match *edit {
            Edit::Delete(at, len) => {
                let at = at % n;
                let end = (at + len).min(chars.len());
                chars.drain(at.min(end)..end);
            }
            Edit::Duplicate(at, len) => {
                let at = at % n;
                let end = (at + len).min(chars.len());
                let copy: Vec<char> = chars[at.min(end)..end].to_vec();
                chars.splice(at.min(end)..at.min(end), copy);
            }
            Edit::Replace(at, c) => {
                if !chars.is_empty() {
                    let i = at % chars.len();
                    chars[i] = c;
                }
            }
            Edit::Truncate(at) => chars.truncate(at % n),
        }
    }
    chars.into_iter().collect()
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        (any::<usize>(), 1usize..40).prop_map(|(a, l)| Edit::Delete(a, l)),
        (any::<usize>(), 1usize..200).prop_map(|(a, l)| Edit::Duplicate(a, l)),
        (any::<usize>(), prop::sample::select(ALPHABET)).prop_map(|(a, c)| Edit::Replace(a, c)),
        any::<usize>().prop_map(Edit::Truncate),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn arbitrary_text_never_panics(src in "\\PC{0,300}") {
        check(&src);
    }

    #[test]
    fn token_soup_never_panics(chars in prop::collection::vec(prop::sample::select(ALPHABET), 0..400)) {
        let src: String = chars.into_iter().collect();
        check(&src);
    }

    #[test]
    fn mutated_templates_never_panic(edits in prop::collection::vec(edit(), 1..6)) {
        check(&apply(PAGE, &edits));
    }
}
