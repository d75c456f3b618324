//! How documents are written to and read from the store: JSON, the same bytes in every
//! backend, so a document written by one node (or backend) reads back on any other.
//!
//! Every document is bounded before it is written: at most [`MAX_DOCUMENT_DEPTH`] levels of
//! nested arrays and objects and at most [`MAX_DOCUMENT_BYTES`] once encoded. The JSON reader
//! refuses nesting deeper than 127 levels, so without the bound a document built from a
//! deeper input (MessagePack has no such reader limit) would be written and then fail every
//! read. A document over a bound is [`StoreError::Unstorable`] (the caller's input, answered
//! 422); only bytes that cannot be read back are [`StoreError::Corrupt`] (answered 500).

use serde::Serialize;
use serde::de::DeserializeOwned;

use super::{StoreError, StoreResult};

/// Deepest nesting of arrays and objects a stored document may have: the engine's own
/// documents nest a few levels, so this leaves room for free-form values inside them while
/// staying far below the reader's limit.
pub const MAX_DOCUMENT_DEPTH: usize = 32;

/// Largest stored document, encoded: far above any document the engine writes (the
/// largest, a game's hundred templates or experiments, is tens of KiB).
pub const MAX_DOCUMENT_BYTES: usize = 1024 * 1024;

/// Serialises a document for the store, refusing one over the bounds.
pub fn encode<T: Serialize>(value: &T) -> StoreResult<Vec<u8>> {
    let bytes = serde_json::to_vec(value)
        .map_err(|e| StoreError::Corrupt(format!("unencodable document: {e}")))?;
    if bytes.len() > MAX_DOCUMENT_BYTES {
        return Err(StoreError::Unstorable(format!(
            "the document would take {} bytes; at most {MAX_DOCUMENT_BYTES} can be stored",
            bytes.len()
        )));
    }
    if nests_deeper_than(&bytes, MAX_DOCUMENT_DEPTH) {
        return Err(StoreError::Unstorable(format!(
            "the document nests arrays and objects more than {MAX_DOCUMENT_DEPTH} levels deep"
        )));
    }
    Ok(bytes)
}

/// Reads a stored document; bytes this build cannot read are [`StoreError::Corrupt`].
pub fn decode<T: DeserializeOwned>(bytes: &[u8]) -> StoreResult<T> {
    serde_json::from_slice(bytes).map_err(|e| StoreError::Corrupt(format!("corrupt document: {e}")))
}

/// Whether JSON text nests arrays and objects more than `limit` levels deep (brackets
/// inside strings do not count).
fn nests_deeper_than(json: &[u8], limit: usize) -> bool {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for &b in json {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > limit {
                    return true;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    /// `levels` arrays, one inside the other.
    fn nested(levels: usize) -> Value {
        (0..levels).fold(json!(1), |inner, _| json!([inner]))
    }

    #[test]
    fn a_document_at_the_depth_limit_round_trips() {
        let doc = nested(MAX_DOCUMENT_DEPTH);
        let bytes = encode(&doc).expect("at the limit");
        assert_eq!(decode::<Value>(&bytes).expect("reads back"), doc);
    }

    #[test]
    fn a_deeper_document_is_unstorable_not_corrupt() {
        for levels in [MAX_DOCUMENT_DEPTH + 1, 127, 1000] {
            let doc = json!({ "attributes": { "a": nested(levels - 2) } });
            assert!(
                matches!(encode(&doc), Err(StoreError::Unstorable(_))),
                "{levels} levels"
            );
        }
    }

    #[test]
    fn brackets_inside_strings_do_not_count() {
        let doc = json!({ "s": "[[[[{{{{\"[[[[".repeat(100), "t": "\\" });
        assert!(encode(&doc).is_ok());
        assert!(!nests_deeper_than(br#"{"a":"\\\"[[["}"#, 1));
        assert!(nests_deeper_than(br#"{"a":"\\","b":[[]]}"#, 2));
    }

    #[test]
    fn an_oversized_document_is_unstorable() {
        let doc = json!({ "s": "x".repeat(MAX_DOCUMENT_BYTES) });
        assert!(matches!(encode(&doc), Err(StoreError::Unstorable(_))));
        let fits = json!({ "s": "x".repeat(MAX_DOCUMENT_BYTES - 16) });
        assert!(encode(&fits).is_ok());
    }

    #[test]
    fn unreadable_bytes_are_corrupt() {
        assert!(matches!(
            decode::<Value>(b"{not json"),
            Err(StoreError::Corrupt(_))
        ));
    }
}
