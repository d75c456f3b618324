//! The strict JSON body reader never panics, and accepts a body only when it is exactly one
//! JSON document of the requested shape. "Document" is JSON's grammar, read without building
//! values (so a string the grammar allows but a `String` cannot hold, a lone surrogate escape
//! in a field the body ignores, is still a document).
#![no_main]

use libfuzzer_sys::fuzz_target;
use offer_wire::json::{JsonError, Shape, parse_json};

/// A body shaped like the engine's: named fields, a list, optional values.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Body {
    #[serde(rename = "name")]
    _name: String,
    #[serde(default, rename = "items")]
    _items: Vec<Item>,
}

#[derive(Debug, serde::Deserialize)]
struct Item {
    #[serde(rename = "item_id")]
    _item_id: String,
    #[serde(default, rename = "price_usd")]
    _price_usd: Option<f64>,
}

/// Whether `data` is exactly one JSON document (by the grammar) whose top level is `shape`.
fn one_document(data: &[u8], shape: Shape) -> bool {
    let first = data.iter().find(|b| !b.is_ascii_whitespace());
    let expected = match shape {
        Shape::Object => b'{',
        Shape::Array => b'[',
    };
    let mut de = serde_json::Deserializer::from_slice(data);
    first == Some(&expected)
        && <serde::de::IgnoredAny as serde::Deserialize>::deserialize(&mut de).is_ok()
        && de.end().is_ok()
}

fuzz_target!(|data: &[u8]| {
    for shape in [Shape::Object, Shape::Array] {
        let typed = match shape {
            Shape::Object => parse_json::<Body>(data, shape).map(|_| ()),
            Shape::Array => parse_json::<Vec<Item>>(data, shape).map(|_| ()),
        };
        let document = one_document(data, shape);
        match (&typed, document) {
            (Ok(()), false) => panic!("typed read accepted what is not one document of its shape"),
            // A broken document is a syntax error, never a data error.
            (Err(JsonError::Data(e)), false) => panic!("a data error on a broken document: {e:?}"),
            _ => {}
        }
    }
});
