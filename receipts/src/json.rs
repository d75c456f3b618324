//! JSON decoding into [`ReceiptError`]s whose message names the problem without quoting the
//! input at length.

use serde::de::DeserializeOwned;

use crate::error::ReceiptError;

/// The longest piece of a decoder's message kept in an error.
const MAX_DETAIL_CHARS: usize = 120;

/// Decodes `bytes` as JSON into `T`; `what` names the document in the error.
pub(crate) fn from_json<T: DeserializeOwned>(bytes: &[u8], what: &str) -> Result<T, ReceiptError> {
    serde_json::from_slice(bytes).map_err(|error| {
        let detail: String = error.to_string().chars().take(MAX_DETAIL_CHARS).collect();
        ReceiptError::malformed(format!("{what}: {detail}"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_values_are_cut_from_the_message() {
        let input = format!(r#"{{"n": "{}"}}"#, "x".repeat(10_000));
        #[derive(serde::Deserialize, Debug)]
        #[allow(dead_code)]
        struct Number {
            n: i64,
        }
        let Err(ReceiptError::Malformed(message)) = from_json::<Number>(input.as_bytes(), "doc")
        else {
            panic!("a string is not a number");
        };
        assert!(message.starts_with("doc: "));
        assert!(message.len() < 200);
    }
}
