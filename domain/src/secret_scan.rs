//! The secret scanner: finds anything shaped like a service key in text, whatever its
//! checksum or deployment prefix, so a key pasted into a template, a binding or an exported
//! file is caught before it leaves the studio's machine or reaches storage.
//!
//! The shape is `[a-z0-9]{2,16}_(live_sk|test_sk|auth)_[A-Za-z0-9]{16,}`: an SDK key
//! (production or sandbox) or an authoring key. The checksum is deliberately not verified (a
//! key with a typo is still a leaked key) and any prefix counts (a key of another deployment
//! is still a key). Placeholders are not keys: a body of one repeated character
//! (`svc_live_sk_xxxxxxxxxxxxxxxx`, `svc_auth_0000000000000000`) or of `x`/`X` only; `<KEY>`
//! never matches, as `<` is not a body character.
//!
//! The matcher is written out by hand: one pass over the bytes, no backtracking.
//!
//! It reads text as written. A template can build a key from pieces no text holds whole
//! (`'ab_live_sk_' + rest`); `template::folding` puts those strings together and runs this
//! scan on them.

/// Fewest body characters that make a key.
pub const MIN_BODY_LEN: usize = 16;
/// Fewest prefix characters before the kind marker.
pub const MIN_PREFIX_LEN: usize = 2;
/// Most prefix characters the shape allows (longer runs still match on their last 16).
pub const MAX_PREFIX_LEN: usize = 16;

/// Which kind of key a hit looks like.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyKind {
    /// `_live_sk_`: a production SDK key.
    LiveSdk,
    /// `_test_sk_`: a sandbox SDK key.
    TestSdk,
    /// `_auth_`: an authoring key.
    Authoring,
}

impl KeyKind {
    /// A short name for messages.
    pub fn describe(self) -> &'static str {
        match self {
            Self::LiveSdk => "a production SDK key",
            Self::TestSdk => "a sandbox SDK key",
            Self::Authoring => "an authoring key",
        }
    }
}

/// One key-shaped string found in a text. It never holds the key's body, so reporting a
/// hit cannot leak the key again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretHit {
    /// 1-based line of the text where it starts.
    pub line: u32,
    /// The kind its marker says.
    pub kind: KeyKind,
    /// Its prefix (the last 16 characters at most), safe to show.
    pub prefix: String,
}

impl SecretHit {
    /// A message naming the line and the kind, with the body masked.
    pub fn message(&self) -> String {
        let marker = match self.kind {
            KeyKind::LiveSdk => "live_sk",
            KeyKind::TestSdk => "test_sk",
            KeyKind::Authoring => "auth",
        };
        format!(
            "line {} holds something shaped like {} (`{}_{marker}_...`): remove it; keys are never part of a page",
            self.line,
            self.kind.describe(),
            self.prefix
        )
    }
}

const MARKERS: &[(&[u8], KeyKind)] = &[
    (b"_live_sk_", KeyKind::LiveSdk),
    (b"_test_sk_", KeyKind::TestSdk),
    (b"_auth_", KeyKind::Authoring),
];

fn is_prefix_char(b: u8) -> bool {
    b.is_ascii_lowercase() || b.is_ascii_digit()
}

/// A placeholder body: one character repeated, or `x`/`X` only.
fn is_placeholder(body: &[u8]) -> bool {
    let Some(first) = body.first() else {
        return true;
    };
    body.iter().all(|b| b == first) || body.iter().all(|b| matches!(b, b'x' | b'X'))
}

/// Every key-shaped string in `text`, in order.
pub fn scan(text: &str) -> Vec<SecretHit> {
    scan_keys(text).into_iter().map(|(hit, _)| hit).collect()
}

/// Every key-shaped string in `text`, in order, each with the key itself: for a caller that
/// must tell one key from another (the same key met twice is reported once), never to show.
pub fn scan_keys(text: &str) -> Vec<(SecretHit, &str)> {
    let bytes = text.as_bytes();
    let mut hits = Vec::new();
    let mut line = 1u32;
    let mut counted = 0usize;
    let mut i = 0usize;
    while i < bytes.len() {
        if bytes[i] != b'_' {
            i += 1;
            continue;
        }
        let rest = &bytes[i..];
        let Some((marker, kind)) = MARKERS.iter().find(|(m, _)| rest.starts_with(m)) else {
            i += 1;
            continue;
        };
        let prefix_len = bytes[..i]
            .iter()
            .rev()
            .take_while(|b| is_prefix_char(**b))
            .count();
        let body_start = i + marker.len();
        let body_len = bytes[body_start..]
            .iter()
            .take_while(|b| b.is_ascii_alphanumeric())
            .count();
        let body = &bytes[body_start..body_start + body_len];
        if prefix_len < MIN_PREFIX_LEN || body_len < MIN_BODY_LEN || is_placeholder(body) {
            i += 1;
            continue;
        }
        let shown = prefix_len.min(MAX_PREFIX_LEN);
        line += bytes[counted..i].iter().filter(|b| **b == b'\n').count() as u32;
        counted = i;
        // Prefix, marker and body are ASCII, so both ends fall on character boundaries.
        let key = text
            .get(i - prefix_len..body_start + body_len)
            .unwrap_or_default();
        hits.push((
            SecretHit {
                line,
                kind: *kind,
                prefix: String::from_utf8_lossy(&bytes[i - shown..i]).into_owned(),
            },
            key,
        ));
        i = body_start + body_len;
    }
    hits
}

#[cfg(test)]
mod tests {
    use super::*;

    const BODY: &str = "Ab3dEf6hIj9kLm2nOp5rSt8vWx1zQw4eRt7y";

    #[test]
    fn finds_every_kind_with_any_prefix_and_checksum() {
        for (marker, kind) in [
            ("live_sk", KeyKind::LiveSdk),
            ("test_sk", KeyKind::TestSdk),
            ("auth", KeyKind::Authoring),
        ] {
            let text = format!("const k = 'acme42_{marker}_{BODY}';");
            let hits = scan(&text);
            assert_eq!(hits.len(), 1, "{text}");
            assert_eq!(hits[0].kind, kind);
            assert_eq!(hits[0].prefix, "acme42");
            assert!(!hits[0].message().contains(BODY));
        }
    }

    #[test]
    fn a_broken_checksum_or_another_prefix_still_matches() {
        // Sixteen characters: no checksum at all.
        assert_eq!(scan("zz_live_sk_AAAAbbbbCCCCdddd").len(), 1);
        // A deployment prefix other than this one, inside other text.
        assert_eq!(
            scan("url?key=otherstudio_test_sk_0123456789abcdefXYZ&x").len(),
            1
        );
    }

    #[test]
    fn scan_keys_hands_back_each_key_whole() {
        let text = format!("é 'ab_auth_{BODY}' and cd_test_sk_{BODY}!");
        let keys: Vec<&str> = scan_keys(&text).into_iter().map(|(_, k)| k).collect();
        assert_eq!(
            keys,
            [format!("ab_auth_{BODY}"), format!("cd_test_sk_{BODY}")]
        );
    }

    #[test]
    fn counts_lines() {
        let text = format!("a\nb\nc ab_auth_{BODY}\n\nd ab_auth_{BODY}");
        let lines: Vec<u32> = scan(&text).iter().map(|h| h.line).collect();
        assert_eq!(lines, vec![3, 5]);
    }

    /// Placeholders and strings that look nearly like keys; the authoring tool's scanner
    /// is tested against the same list, so the two scanners cannot drift apart on them.
    const NEAR_MISSES: &str = include_str!("../testdata/secret_scan_near_misses.json");

    #[test]
    fn placeholders_and_near_misses_are_not_keys() {
        let texts: Vec<String> = serde_json::from_str(NEAR_MISSES).expect("a list of strings");
        assert!(texts.len() > 10);
        for text in texts {
            assert!(scan(&text).is_empty(), "{text}");
        }
    }

    #[test]
    fn multibyte_text_is_safe() {
        assert!(scan("é_live_sk_ü…_auth_").is_empty());
        assert_eq!(scan(&format!("é ab_auth_{BODY} ü")).len(), 1);
    }
}
