//! Bindings: the JSON object a page is filled with, and how a template reads it.
//!
//! Shape: `{"items": ["item_id", ...], "<name>": "text" | number, ...}`. `items` lists the
//! catalogue items the page shows, in order (at most [`MAX_BOUND_ITEMS`]); every other key
//! is a named value (at most [`MAX_BINDING_VALUES`], names of at most
//! [`MAX_BINDING_NAME_LEN`] characters, texts of at most [`MAX_BINDING_TEXT_LEN`]).
//!
//! A template reads them through its entry widget's `OfferData` field (`final OfferData
//! offer;`; the name `offer` is assumed when the class declares no such field):
//! - `offer['title']` (or `offer.title`) is the named value `title`;
//! - `offer.items[0]` (or `offer['items'][0]`) is the first bound item, passed as is to
//!   `Image(item: ...)` and `OfferButton(item: ...)`;
//! - `offer.items[0].name` (or `offer.items[0]['name']`) is a field of it, one of
//!   [`ITEM_FIELDS`].
//!
//! `as` casts around a read change nothing. Keys and positions are literals, so every read
//! is checked before the page ever runs.

use std::collections::BTreeMap;

use serde_json::Value;

use super::ast::{Class, Expr, ExprKind, StrPart};

/// Most items one page binds.
pub const MAX_BOUND_ITEMS: usize = 20;
/// Most named values besides `items`.
pub const MAX_BINDING_VALUES: usize = 100;
/// Longest value name.
pub const MAX_BINDING_NAME_LEN: usize = 64;
/// Longest text value, in characters.
pub const MAX_BINDING_TEXT_LEN: usize = 1000;
/// The type of the entry widget's field that holds the bindings.
pub const BINDINGS_TYPE: &str = "OfferData";
/// The bindings' name when the entry widget declares no [`BINDINGS_TYPE`] field.
pub const DEFAULT_ROOT: &str = "offer";

/// A named value.
#[derive(Debug, Clone, PartialEq)]
pub enum BindingValue {
    /// A string.
    Text(String),
    /// A number.
    Number(f64),
}

impl BindingValue {
    /// The value as a page shows it: numbers without a trailing `.0`.
    pub fn display(&self) -> String {
        match self {
            Self::Text(t) => t.clone(),
            Self::Number(n) if n.fract() == 0.0 && n.abs() < 1e15 => format!("{}", *n as i64),
            Self::Number(n) => n.to_string(),
        }
    }
}

/// Bindings in checked form.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Bindings {
    /// Bound item ids, in order.
    pub items: Vec<String>,
    /// Named values by name.
    pub values: BTreeMap<String, BindingValue>,
}

impl Bindings {
    /// Reads the bindings object, or says everything wrong with it.
    pub fn from_json(json: &Value) -> Result<Self, Vec<String>> {
        let Value::Object(map) = json else {
            return Err(vec!["bindings must be a JSON object".into()]);
        };
        let mut problems = Vec::new();
        let mut out = Self::default();
        for (key, value) in map {
            if key == "items" {
                match value {
                    Value::Array(ids) => {
                        if ids.len() > MAX_BOUND_ITEMS {
                            problems.push(format!("at most {MAX_BOUND_ITEMS} items"));
                        }
                        for (i, id) in ids.iter().enumerate() {
                            match id {
                                Value::String(s) => out.items.push(s.clone()),
                                _ => problems.push(format!("items[{i}] must be an item id string")),
                            }
                        }
                    }
                    _ => problems.push("items must be an array of item ids".into()),
                }
                continue;
            }
            if key.is_empty() || key.chars().count() > MAX_BINDING_NAME_LEN {
                problems.push(format!(
                    "a binding name has 1 to {MAX_BINDING_NAME_LEN} characters"
                ));
                continue;
            }
            let v = match value {
                Value::String(s) if s.chars().count() > MAX_BINDING_TEXT_LEN => {
                    problems.push(format!(
                        "`{key}` is longer than {MAX_BINDING_TEXT_LEN} characters"
                    ));
                    continue;
                }
                Value::String(s) => BindingValue::Text(s.clone()),
                Value::Number(n) => match n.as_f64() {
                    Some(f) => BindingValue::Number(f),
                    None => {
                        problems.push(format!("`{key}` is not a finite number"));
                        continue;
                    }
                },
                _ => {
                    problems.push(format!("`{key}` must be a string or a number"));
                    continue;
                }
            };
            out.values.insert(key.clone(), v);
        }
        if out.values.len() > MAX_BINDING_VALUES {
            problems.push(format!("at most {MAX_BINDING_VALUES} named values"));
        }
        if problems.is_empty() {
            Ok(out)
        } else {
            Err(problems)
        }
    }
}

/// The name a class reads its bindings through: its [`BINDINGS_TYPE`] field, else
/// [`DEFAULT_ROOT`].
pub fn binding_root(class: &Class) -> &str {
    class
        .fields
        .iter()
        .find(|f| {
            f.ty.as_deref()
                .is_some_and(|t| t.trim_end_matches('?') == BINDINGS_TYPE)
        })
        .map_or(DEFAULT_ROOT, |f| f.name.as_str())
}

/// What an expression reads of the bindings.
#[derive(Debug, Clone, PartialEq)]
pub enum Read {
    /// The bindings object itself.
    Root,
    /// The list of bound items.
    Items,
    /// A named value.
    Value(String),
    /// The bound item at a position.
    Item(i64),
    /// A field of the bound item at a position; the name is checked against
    /// [`ITEM_FIELDS`] by whoever uses it.
    ItemField(i64, String),
    /// A read the subset does not allow, and why (a computed key, for example).
    Unsupported(String),
}

/// What `e` reads of the bindings named `root`, or `None` when it is not a bindings read.
pub fn classify(e: &Expr, root: &str) -> Option<Read> {
    match &e.kind {
        ExprKind::Ident(name) if name == root => Some(Read::Root),
        ExprKind::Cast { expr, .. } => classify(expr, root),
        ExprKind::Member { target, name } => {
            if matches!(&target.kind, ExprKind::Ident(t) if t == "this") && name == root {
                return Some(Read::Root);
            }
            step(classify(target, root)?, Key::Name(name))
        }
        ExprKind::Index { target, index } => {
            let outer = classify(target, root)?;
            let key = match &index.kind {
                ExprKind::Int(i) => Key::Position(*i),
                ExprKind::Str(parts) => match parts.as_slice() {
                    [] => Key::Name(""),
                    [StrPart::Text(t)] => Key::Name(t),
                    _ => Key::Computed,
                },
                _ => Key::Computed,
            };
            step(outer, key)
        }
        _ => None,
    }
}

enum Key<'a> {
    Name(&'a str),
    Position(i64),
    Computed,
}

/// One access step from an already classified read.
fn step(outer: Read, key: Key<'_>) -> Option<Read> {
    match (outer, key) {
        (Read::Root, Key::Name("items")) => Some(Read::Items),
        (Read::Root, Key::Name(name)) => Some(Read::Value(name.to_string())),
        (Read::Items, Key::Position(i)) => Some(Read::Item(i)),
        (Read::Item(i), Key::Name(field)) => Some(Read::ItemField(i, field.to_string())),
        (Read::Root, _) => Some(Read::Unsupported(
            "a value is read by a literal name, `offer['title']`".into(),
        )),
        (Read::Items, _) => Some(Read::Unsupported(
            "an item is read by a literal position, `offer.items[0]`".into(),
        )),
        (Read::Item(_), _) => Some(Read::Unsupported(
            "an item field is read by a literal name, `offer.items[0].name`".into(),
        )),
        _ => None,
    }
}

/// A field of a bound item a template may read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ItemField {
    /// `id`: the item id.
    Id,
    /// `name`: the display name.
    Name,
    /// `price`: the price as text (`$4.99`, `500 gems`, `Free`).
    Price,
    /// `amount`: the amount granted, the offer tile's badge; items without one show nothing.
    Amount,
    /// `art`: the item's art (for `Image(item: ...)`; as text, its asset id).
    Art,
    /// `description`: the free-text description.
    Description,
}

/// Every readable item field, by name.
pub const ITEM_FIELDS: &[(&str, ItemField)] = &[
    ("id", ItemField::Id),
    ("name", ItemField::Name),
    ("price", ItemField::Price),
    ("amount", ItemField::Amount),
    ("art", ItemField::Art),
    ("description", ItemField::Description),
];

impl ItemField {
    /// The field called `name`, if there is one.
    pub fn parse(name: &str) -> Option<Self> {
        ITEM_FIELDS
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, f)| *f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::template::parse;
    use serde_json::json;

    fn read_of(src_expr: &str) -> Option<Read> {
        let src = format!(
            "class P extends StatelessWidget {{ final OfferData data; Widget build(BuildContext c) => {src_expr}; }}"
        );
        let t = parse(&src).expect("test input");
        let class = t.entry().expect("test input");
        let root = binding_root(class);
        classify(
            class
                .method("build")
                .expect("test input")
                .returned()
                .expect("test input"),
            root,
        )
    }

    #[test]
    fn reads_are_classified_in_both_spellings() {
        assert_eq!(read_of("data['title']"), Some(Read::Value("title".into())));
        assert_eq!(
            read_of("data.title as String"),
            Some(Read::Value("title".into()))
        );
        assert_eq!(read_of("this.data['x']"), Some(Read::Value("x".into())));
        assert_eq!(read_of("data.items[1]"), Some(Read::Item(1)));
        assert_eq!(
            read_of("data['items'][0]['price']"),
            Some(Read::ItemField(0, "price".into()))
        );
        assert_eq!(
            read_of("data.items[0].name"),
            Some(Read::ItemField(0, "name".into()))
        );
        assert!(matches!(read_of("data[key]"), Some(Read::Unsupported(_))));
        assert!(matches!(
            read_of("data.items[i]"),
            Some(Read::Unsupported(_))
        ));
        assert_eq!(read_of("offer['title']"), None);
        assert_eq!(read_of("data.items[0].name.length"), None);
    }

    #[test]
    fn bindings_shape() {
        let b = Bindings::from_json(&json!({"items": ["gems_500"], "title": "Sale", "pct": 40}))
            .expect("test input");
        assert_eq!(b.items, vec!["gems_500"]);
        assert_eq!(b.values["pct"].display(), "40");
        assert!(Bindings::from_json(&json!([])).is_err());
        let errs = Bindings::from_json(&json!({"items": [1], "x": true, "y": null}))
            .expect_err("an error");
        assert_eq!(errs.len(), 3);
    }
}
