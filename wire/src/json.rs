//! Strict JSON bodies: exactly one document of the shape the route takes, with errors that
//! say whether the bytes are broken (the client sent something that is not the document) or
//! a value is wrong (and which field, at which index of a list).
//!
//! A number is read as JSON (and JSON Schema, hence the OpenAPI document) reads it: `2.0` is
//! the integer 2, so an integer field takes it. A struct is read from an object only, at
//! every depth ([`Objects`]).

use offer_domain::validation::FieldError;
use serde::Deserialize;
use serde::de::DeserializeOwned;

use crate::objects::Objects;

/// What a JSON body must be at its top level.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// `{...}`.
    Object,
    /// `[...]`.
    Array,
}

/// Why a body was not read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum JsonError {
    /// Not one JSON document of the expected shape: broken, trailing data, wrong top level.
    #[error("{0}")]
    Syntax(String),
    /// A readable document with a value of the wrong type or an unknown field.
    #[error("{}: {}", .0.field, .0.reason)]
    Data(FieldError),
}

/// Parses one JSON document of the given shape. Broken syntax, data after the document and
/// the wrong top level are [`JsonError::Syntax`]; a readable document with a wrong value is
/// [`JsonError::Data`] naming the field (`items[3].category` becomes field `category`,
/// index 3).
pub fn parse_json<T: DeserializeOwned>(bytes: &[u8], shape: Shape) -> Result<T, JsonError> {
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
    let (expected, name) = match shape {
        Shape::Object => (b'{', "an object"),
        Shape::Array => (b'[', "an array"),
    };
    if first != Some(&expected) {
        return Err(JsonError::Syntax(format!("the body must be {name}")));
    }
    // The fast path (`end` refuses trailing data); only a failing body is parsed again to
    // locate its error.
    let mut fast = serde_json::Deserializer::from_slice(bytes);
    if let Ok(value) = T::deserialize(Objects(&mut fast))
        && fast.end().is_ok()
    {
        return Ok(value);
    }
    // Syntax first, so that a broken or trailing document is a 400 even when its fields are
    // also wrong.
    let mut syntax = serde_json::Deserializer::from_slice(bytes);
    serde::de::IgnoredAny::deserialize(&mut syntax)
        .and_then(|_| syntax.end())
        .map_err(|e| JsonError::Syntax(e.to_string()))?;
    let de = &mut serde_json::Deserializer::from_slice(bytes);
    serde_path_to_error::deserialize(Objects(de)).or_else(|err| {
        if let Some(value) = with_whole_numbers(bytes)
            && let Ok(read) = T::deserialize(Objects(value))
        {
            return Ok(read);
        }
        let path = err.path().to_string();
        let inner = err.into_inner();
        Err(JsonError::Data(field_error(&path, &inner.to_string())))
    })
}

/// The body as a JSON value with every whole float (`2.0`) written as the integer it is, so
/// that an integer field reads it; `None` when the body has no whole float (reading it again
/// would change nothing) or repeats a key (which the direct reading refuses, and a value
/// would hide).
fn with_whole_numbers(bytes: &[u8]) -> Option<serde_json::Value> {
    let mut value = serde_json::from_slice::<UniqueKeys>(bytes).ok()?.0;
    whole_floats_as_integers(&mut value).then_some(value)
}

/// Rewrites every whole float of `value` that fits an `i64` or `u64` as that integer; true
/// when it rewrote any.
fn whole_floats_as_integers(value: &mut serde_json::Value) -> bool {
    match value {
        serde_json::Value::Number(n) if n.is_f64() => {
            let Some(f) = n.as_f64().filter(|f| f.fract() == 0.0) else {
                return false;
            };
            // The bounds are exact powers of two, so the casts below are exact.
            let whole = if (-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&f)
            {
                serde_json::Number::from(f as i64)
            } else if (0.0..18_446_744_073_709_551_616.0).contains(&f) {
                serde_json::Number::from(f as u64)
            } else {
                return false;
            };
            *n = whole;
            true
        }
        serde_json::Value::Array(items) => rewrite_all(items.iter_mut()),
        serde_json::Value::Object(map) => rewrite_all(map.values_mut()),
        _ => false,
    }
}

/// [`whole_floats_as_integers`] on every value (none skipped once one was rewritten).
fn rewrite_all<'a>(values: impl Iterator<Item = &'a mut serde_json::Value>) -> bool {
    let mut rewrote = false;
    for value in values {
        rewrote |= whole_floats_as_integers(value);
    }
    rewrote
}

/// A JSON value whose objects never repeat a key.
struct UniqueKeys(serde_json::Value);

impl<'de> Deserialize<'de> for UniqueKeys {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(UniqueKeysVisitor).map(Self)
    }
}

struct UniqueKeysVisitor;

impl<'de> serde::de::Visitor<'de> for UniqueKeysVisitor {
    type Value = serde_json::Value;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Self::Value, E> {
        Ok(v.into())
    }

    fn visit_i64<E>(self, v: i64) -> Result<Self::Value, E> {
        Ok(v.into())
    }

    fn visit_u64<E>(self, v: u64) -> Result<Self::Value, E> {
        Ok(v.into())
    }

    fn visit_f64<E>(self, v: f64) -> Result<Self::Value, E> {
        Ok(v.into())
    }

    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(v.into())
    }

    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(serde_json::Value::Null)
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut items = Vec::new();
        while let Some(UniqueKeys(item)) = seq.next_element()? {
            items.push(item);
        }
        Ok(serde_json::Value::Array(items))
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut object = serde_json::Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let UniqueKeys(value) = map.next_value()?;
            if object.insert(key, value).is_some() {
                return Err(serde::de::Error::custom("duplicate key"));
            }
        }
        Ok(serde_json::Value::Object(object))
    }
}

/// A list entry read on its own, so that one unreadable entry does not hide the problems
/// of the others: every entry of a bulk call is reported in one answer.
#[derive(Debug)]
pub struct Lenient<T>(pub Result<T, Vec<FieldError>>);

impl<'de, T: DeserializeOwned> serde::Deserialize<'de> for Lenient<T> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = serde_json::Value::deserialize(deserializer)?;
        let read = serde_path_to_error::deserialize::<_, T>(Objects(&value)).or_else(|err| {
            // As for a whole body: `2.0` is the integer 2.
            let mut whole = value.clone();
            if whole_floats_as_integers(&mut whole)
                && let Ok(read) = T::deserialize(Objects(whole))
            {
                return Ok(read);
            }
            let path = err.path().to_string();
            Err(vec![entry_error(&path, &err.into_inner().to_string())])
        });
        Ok(Self(read))
    }
}

/// A field error of one list entry, whose position the caller adds.
fn entry_error(path: &str, reason: &str) -> FieldError {
    let field = if path == "." || path.is_empty() {
        "item"
    } else {
        path
    };
    FieldError::new(field, reason.split(" at line ").next().unwrap_or(reason))
}

/// Turns a serde path such as `items[3].category` into a field error with its index.
fn field_error(path: &str, reason: &str) -> FieldError {
    // Drop serde's " at line 1 column 42" suffix: the path says where.
    let reason = reason.split(" at line ").next().unwrap_or(reason);
    if let Some(rest) = path.strip_prefix("items[")
        && let Some((idx, field)) = rest.split_once(']')
        && let Ok(i) = idx.parse::<usize>()
    {
        let field = field.trim_start_matches('.');
        let field = if field.is_empty() { "items" } else { field };
        return FieldError::new(field, reason).at(i);
    }
    let field = if path == "." || path.is_empty() {
        "body"
    } else {
        path
    };
    FieldError::new(field, reason)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(deny_unknown_fields)]
    struct Game {
        name: String,
    }

    #[test]
    fn one_document_of_the_right_shape_only() {
        let ok: Game = parse_json(br#" {"name": "x"} "#, Shape::Object).expect("read");
        assert_eq!(ok.name, "x");
        for broken in [
            &br#"{"name": "x"}garbage"#[..],
            br#"{"name": "x"} {"name": "y"}"#,
            b"[]",
            b"",
            br#"{"name": "#,
        ] {
            let got = parse_json::<Game>(broken, Shape::Object);
            assert!(matches!(got, Err(JsonError::Syntax(_))), "{got:?}");
        }
        let list: Vec<Game> = parse_json(br#"[{"name": "x"}]"#, Shape::Array).expect("read");
        assert_eq!(list.len(), 1);
    }

    #[test]
    fn a_whole_float_is_an_integer_but_a_repeated_key_stays_refused() {
        #[derive(Debug, Deserialize, PartialEq)]
        #[serde(deny_unknown_fields)]
        struct Level {
            level: u8,
        }
        let read: Level = parse_json(br#"{"level": 2.0}"#, Shape::Object).expect("read");
        assert_eq!(read, Level { level: 2 });
        for refused in [&br#"{"level": 2.5}"#[..], br#"{"level": 2.0, "level": 3}"#] {
            let got = parse_json::<Level>(refused, Shape::Object);
            assert!(matches!(got, Err(JsonError::Data(_))), "{got:?}");
        }
        let entries: Vec<Lenient<Level>> =
            parse_json(br#"[{"level": 1.0}, {"level": 1.5}]"#, Shape::Array).expect("read");
        assert_eq!(entries[0].0, Ok(Level { level: 1 }));
        assert!(entries[1].0.is_err());
    }

    #[test]
    fn a_wrong_value_names_its_field_and_index() {
        let got = parse_json::<Game>(br#"{"name": 3}"#, Shape::Object);
        let Err(JsonError::Data(field)) = got else {
            panic!("expected a data error, got {got:?}");
        };
        assert_eq!(field.field, "name");
        #[derive(Debug, Deserialize)]
        #[expect(dead_code, reason = "read only to be deserialised")]
        struct Bulk {
            items: Vec<Game>,
        }
        let got = parse_json::<Bulk>(
            br#"{"items": [{"name": "a"}, {"nom": "b"}]}"#,
            Shape::Object,
        );
        let Err(JsonError::Data(field)) = got else {
            panic!("expected a data error, got {got:?}");
        };
        assert_eq!(field.index, Some(1));
    }
}
