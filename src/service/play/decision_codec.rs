//! The stored form of a decision record: MessagePack, each struct a map keyed by its field
//! names and every value in its human-readable form (ids and times as the same strings the
//! JSON view shows), so a record reads back as the same tree of maps, lists, strings and
//! numbers as its JSON.
//!
//! Why not JSON: the records are written for every offer served, and JSON spends most of an
//! encoding checking each byte of every string for characters to escape (the trace's notes,
//! the item ids, the learner's feature labels); MessagePack copies strings as they are. A
//! record encodes in about a third of the instructions and takes fewer bytes in the store.
//!
//! Records written as JSON (by earlier builds, until their time to live ends) are still read:
//! a JSON record starts with `{`, which no MessagePack map does (a map's first byte is
//! `0x80`..=`0x8f`, `0xde` or `0xdf`).

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::store::codec::MAX_DOCUMENT_BYTES;
use crate::store::{StoreError, StoreResult};

/// Bytes reserved for one encoded record: a record with a one-item offer and a short trace
/// takes about 500, so most records are written without growing the buffer.
const RECORD_BYTES: usize = 768;

/// A record as the store keeps it; a record over the store's document bound is refused.
pub fn encode<T: Serialize>(record: &T) -> StoreResult<Vec<u8>> {
    let mut bytes = Vec::with_capacity(RECORD_BYTES);
    let mut ser = rmp_serde::Serializer::new(&mut bytes)
        .with_struct_map()
        .with_human_readable();
    record
        .serialize(&mut ser)
        .map_err(|e| StoreError::Corrupt(format!("unencodable decision record: {e}")))?;
    if bytes.len() > MAX_DOCUMENT_BYTES {
        return Err(StoreError::Unstorable(format!(
            "the decision record would take {} bytes; at most {MAX_DOCUMENT_BYTES} can be stored",
            bytes.len()
        )));
    }
    Ok(bytes)
}

/// Reads a stored record, or the fields of it that `T` names, whichever form it was written
/// in.
pub fn decode<T: DeserializeOwned>(bytes: &[u8]) -> StoreResult<T> {
    if bytes.first() == Some(&b'{') {
        return crate::store::codec::decode(bytes);
    }
    let mut de = rmp_serde::Deserializer::from_read_ref(bytes).with_human_readable();
    T::deserialize(&mut de)
        .map_err(|e| StoreError::Corrupt(format!("corrupt decision record: {e}")))
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;
    use serde_json::json;
    use uuid::Uuid;

    use super::*;

    #[derive(Serialize)]
    struct Record {
        offer_id: Uuid,
        note: &'static str,
        price_cents: Option<i64>,
        weights: Vec<f64>,
    }

    #[derive(Deserialize, Debug, PartialEq)]
    struct Part {
        offer_id: Uuid,
        #[serde(default)]
        missing: Option<String>,
    }

    #[test]
    fn a_record_reads_back_as_its_json_and_in_part() {
        let record = Record {
            offer_id: Uuid::new_v4(),
            note: "shadow \"unsampled\"",
            price_cents: None,
            weights: vec![0.25, -1.5],
        };
        let bytes = encode(&record).expect("encodes");
        assert_ne!(bytes.first(), Some(&b'{'));
        let tree: serde_json::Value = decode(&bytes).expect("decodes");
        assert_eq!(tree, serde_json::to_value(&record).expect("json"));
        let part: Part = decode(&bytes).expect("decodes in part");
        assert_eq!(
            part,
            Part {
                offer_id: record.offer_id,
                missing: None
            }
        );
    }

    #[test]
    fn a_record_written_as_json_still_reads() {
        let id = Uuid::new_v4();
        let bytes = serde_json::to_vec(&json!({"offer_id": id, "extra": [1, 2]})).expect("json");
        let part: Part = decode(&bytes).expect("decodes");
        assert_eq!(part.offer_id, id);
    }

    #[test]
    fn garbage_is_corrupt_not_a_panic() {
        for bytes in [&[0xc1_u8][..], &[0x81, 0xa1], &[], b"{not json"] {
            assert!(
                matches!(decode::<Part>(bytes), Err(StoreError::Corrupt(_))),
                "{bytes:?}"
            );
        }
    }
}
