//! Context features: what a decision's moment and player say, as a short list of hashed
//! indicator features.
//!
//! A feature is a label such as `trigger=currency_low` or `attr:level~t1:11`, hashed to 64
//! bits by a hash fixed in this file (FNV-1a then a SplitMix64 finaliser), so the cells it
//! lands in are the same on every node and in every release: the store keeps statistics by
//! cell. Nothing is kept per distinct value: a value never seen costs a hash, and a
//! player-id-like attribute only adds noise to cells shared with other features.
//!
//! Numbers are bucketed on a log scale (`log2(1 + |v|)`, signed) by two tilings half a
//! bucket apart, each bucket half a power of two wide: level 40 and level 45 share one of their
//! two buckets, so what is learned at one level carries to its neighbours.

use std::collections::HashMap;

use crate::bandit::{Segment, SpenderTier};

/// Most features one context yields: the fixed ones first, then session attributes in name
/// order. Bounds the work of a decision whatever the session sends.
pub const MAX_FEATURES: usize = 64;

/// Highest bucket of days since install (`floor(log2(1 + days))`): two years and more share
/// the last one.
const MAX_INSTALL_BUCKET: u32 = 10;

/// What a decision knows about its moment and its player.
#[derive(Debug, Clone, Copy)]
pub struct Context<'a> {
    /// The trigger event that asks for an offer (`currency_low`, `first_loss`, ...).
    pub trigger: &'a str,
    /// The player's platform, as the session names it.
    pub platform: Option<&'a str>,
    /// ISO country code.
    pub country: Option<&'a str>,
    /// Lifetime real-money spend in cents, for the spender tier.
    pub spend_cents: i64,
    /// Whole days since the player's first session, when known.
    pub days_since_install: Option<i64>,
    /// Every other session attribute.
    pub attributes: &'a HashMap<String, serde_json::Value>,
}

/// The active features of one context: their labels (for decision traces) and hashes (for
/// the weight table), the bias first. Every feature has the value 1.
#[derive(Debug, Clone, PartialEq)]
pub struct Features {
    /// The trigger, then every label, one after the other.
    text: String,
    /// Where the trigger ends in `text`.
    trigger_len: usize,
    /// Where each label ends in `text`.
    ends: Vec<usize>,
    hashes: Vec<u64>,
}

impl Features {
    /// The features of `ctx`; attributes named in `ignored` are skipped (the game's list of
    /// attributes that must not steer offers, or that carry nothing, such as a session id).
    pub fn extract(ctx: &Context<'_>, ignored: &[String]) -> Self {
        let mut out = Builder::new(ctx.trigger, 8 + 2 * ctx.attributes.len());
        out.label(&["bias"]);
        out.label(&["trigger=", ctx.trigger]);
        if let Some(p) = ctx.platform {
            out.start();
            out.str("platform=");
            out.mapped(p, str::make_ascii_lowercase);
            out.finish();
        }
        if let Some(c) = ctx.country {
            out.start();
            out.str("country=");
            out.mapped(c, str::make_ascii_uppercase);
            out.finish();
        }
        let tier = match Segment::of(None, ctx.spend_cents).tier {
            SpenderTier::NonPayer => "non_payer",
            SpenderTier::Payer => "payer",
            SpenderTier::Whale => "whale",
        };
        out.label(&["tier=", tier]);
        if let Some(days) = ctx.days_since_install {
            let bucket = (days.max(0) as f64).ln_1p() / std::f64::consts::LN_2;
            let bucket = (bucket.floor() as u32).min(MAX_INSTALL_BUCKET);
            out.start();
            out.str("installed~");
            out.int(i64::from(bucket));
            out.finish();
        }
        let mut attributes: Vec<(&String, &serde_json::Value)> = ctx
            .attributes
            .iter()
            .filter(|(k, _)| !ignored.contains(k))
            .collect();
        attributes.sort_unstable_by(|a, b| a.0.cmp(b.0));
        for (name, value) in attributes {
            if out.full() {
                break;
            }
            match value {
                serde_json::Value::String(s) => out.label(&["attr:", name, "=", s]),
                serde_json::Value::Bool(b) => {
                    out.label(&["attr:", name, if *b { "=true" } else { "=false" }]);
                }
                serde_json::Value::Number(n) => {
                    let Some(v) = n.as_f64().filter(|v| v.is_finite()) else {
                        continue;
                    };
                    let l = v.signum() * v.abs().ln_1p() / std::f64::consts::LN_2;
                    // Buckets of a finite f64's log fit an i64.
                    let (t0, t1) = ((2.0 * l).floor() as i64, (2.0 * l + 0.5).floor() as i64);
                    // The two tilings' labels share `attr:<name>~t`: written and hashed once.
                    out.start();
                    out.str("attr:");
                    out.str(name);
                    out.str("~t");
                    let prefix = out.mark();
                    out.str("0:");
                    out.int(t0);
                    out.finish();
                    out.resume(prefix);
                    out.str("1:");
                    out.int(t1);
                    out.finish();
                }
                _ => {}
            }
        }
        out.features
    }

    /// Features given by their labels, for a caller that builds its own (and for tests and
    /// benches). The trigger picks the prior's preferred category.
    pub fn from_labels(trigger: &str, labels: Vec<String>) -> Self {
        let mut out = Builder::new(trigger, labels.len());
        for l in &labels {
            out.label(&[l]);
        }
        out.features
    }

    /// The trigger event of the context.
    pub fn trigger(&self) -> &str {
        &self.text[..self.trigger_len]
    }

    /// The label of feature `i`.
    pub fn label(&self, i: usize) -> Option<&str> {
        let end = *self.ends.get(i)?;
        let start = if i == 0 {
            self.trigger_len
        } else {
            self.ends[i - 1]
        };
        self.text.get(start..end)
    }

    /// The labels, bias first.
    pub fn labels(&self) -> impl Iterator<Item = &str> {
        (0..self.ends.len()).filter_map(|i| self.label(i))
    }

    /// The hashes, in label order.
    pub fn hashes(&self) -> &[u64] {
        &self.hashes
    }

    /// Number of active features.
    pub fn len(&self) -> usize {
        self.hashes.len()
    }

    /// Whether there is no feature (never the case for extracted ones: the bias is always
    /// there).
    pub fn is_empty(&self) -> bool {
        self.hashes.is_empty()
    }
}

/// Builds [`Features`] label by label into one buffer, hashing each label as it is written,
/// so a context costs three allocations whatever its number of features.
struct Builder {
    features: Features,
    /// Where the label being written starts in the text.
    start: usize,
    /// The FNV-1a state of the label being written.
    state: u64,
}

/// A point in a label being written: its length so far and hash state, to write several
/// labels that share a prefix.
#[derive(Clone, Copy)]
struct Mark {
    len: usize,
    state: u64,
}

impl Builder {
    fn new(trigger: &str, capacity: usize) -> Self {
        let capacity = capacity.min(MAX_FEATURES);
        let mut text = String::with_capacity(trigger.len() + 24 * capacity);
        text.push_str(trigger);
        Self {
            features: Features {
                text,
                trigger_len: trigger.len(),
                ends: Vec::with_capacity(capacity),
                hashes: Vec::with_capacity(capacity),
            },
            start: trigger.len(),
            state: FNV_OFFSET,
        }
    }

    /// Whether [`MAX_FEATURES`] labels are there.
    fn full(&self) -> bool {
        self.features.ends.len() >= MAX_FEATURES
    }

    /// Appends one label made of `parts`, unless the builder is full.
    fn label(&mut self, parts: &[&str]) {
        self.start();
        for p in parts {
            self.str(p);
        }
        self.finish();
    }

    /// Starts a label.
    fn start(&mut self) {
        self.start = self.features.text.len();
        self.state = FNV_OFFSET;
    }

    /// Writes `s` into the label.
    fn str(&mut self, s: &str) {
        self.features.text.push_str(s);
        self.state = fnv(self.state, s.bytes());
    }

    /// Writes `s` with its ASCII letters changed in place by `f` (such as
    /// [`str::make_ascii_lowercase`]), which keeps the text's length and validity.
    fn mapped(&mut self, s: &str, f: fn(&mut str)) {
        let from = self.features.text.len();
        self.features.text.push_str(s);
        f(&mut self.features.text[from..]);
        self.state = fnv(self.state, self.features.text[from..].bytes());
    }

    /// Writes `v` in decimal into the label.
    fn int(&mut self, v: i64) {
        let mut buf = [0u8; 20];
        let mut at = buf.len();
        let mut u = v.unsigned_abs();
        loop {
            at -= 1;
            // A digit: u % 10 < 10.
            buf[at] = b'0' + (u % 10) as u8;
            u /= 10;
            if u == 0 {
                break;
            }
        }
        if v < 0 {
            self.str("-");
        }
        for &d in &buf[at..] {
            // Digits are ASCII.
            self.features.text.push(char::from(d));
        }
        self.state = fnv(self.state, buf[at..].iter().copied());
    }

    /// The label written so far, to [`Builder::resume`] another from.
    fn mark(&self) -> Mark {
        Mark {
            len: self.features.text.len() - self.start,
            state: self.state,
        }
    }

    /// Starts a label with the prefix the previous label had at `mark` (nothing when that
    /// label was dropped: the builder is full and drops this one too).
    fn resume(&mut self, mark: Mark) {
        let prev = self.start;
        self.start = self.features.text.len();
        if prev + mark.len <= self.start {
            self.features.text.extend_from_within(prev..prev + mark.len);
            self.state = mark.state;
        }
    }

    /// Ends the label: records its end and hash, or drops it when the builder is full.
    fn finish(&mut self) {
        let f = &mut self.features;
        if f.ends.len() >= MAX_FEATURES {
            f.text.truncate(self.start);
            return;
        }
        f.hashes.push(mix(self.state));
        f.ends.push(f.text.len());
    }
}

/// FNV-1a's starting state.
const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;

/// FNV-1a's step over `bytes` from `state`.
fn fnv(mut state: u64, bytes: impl Iterator<Item = u8>) -> u64 {
    for b in bytes {
        state ^= u64::from(b);
        state = state.wrapping_mul(0x0000_0100_0000_01b3);
    }
    state
}

/// SplitMix64's finaliser: a bijection of u64 with good avalanche.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attrs(pairs: &[(&str, serde_json::Value)]) -> HashMap<String, serde_json::Value> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.clone()))
            .collect()
    }

    fn ctx<'a>(a: &'a HashMap<String, serde_json::Value>) -> Context<'a> {
        Context {
            trigger: "currency_low",
            platform: Some("iOS"),
            country: Some("fr"),
            spend_cents: 500,
            days_since_install: Some(9),
            attributes: a,
        }
    }

    #[test]
    fn every_source_of_context_becomes_a_feature() {
        let a = attrs(&[
            ("level", 40.into()),
            ("mode", "pvp".into()),
            ("vip", true.into()),
            ("session_id", "abc".into()),
            ("nested", serde_json::json!({"x": 1})),
        ]);
        let f = Features::extract(&ctx(&a), &["session_id".to_owned()]);
        assert_eq!(
            f.labels().collect::<Vec<_>>(),
            [
                "bias",
                "trigger=currency_low",
                "platform=ios",
                "country=FR",
                "tier=payer",
                "installed~3",
                "attr:level~t0:10",
                "attr:level~t1:11",
                "attr:mode=pvp",
                "attr:vip=true",
            ]
        );
        assert_eq!(f.len(), f.hashes().len());
        assert_eq!(f.trigger(), "currency_low");
    }

    #[test]
    fn neighbouring_levels_share_a_bucket() {
        let labels = |level: i64| {
            let a = attrs(&[("level", level.into())]);
            let f = Features::extract(&ctx(&a), &[]);
            f.labels().map(str::to_owned).collect::<Vec<_>>()
        };
        let (l40, l45) = (labels(40), labels(45));
        assert!(
            l40.iter()
                .any(|l| l.starts_with("attr:level") && l45.contains(l))
        );
        assert_ne!(l40, l45);
    }

    #[test]
    fn the_feature_count_is_bounded() {
        let a: HashMap<String, serde_json::Value> =
            (0..200).map(|i| (format!("a{i:03}"), i.into())).collect();
        let f = Features::extract(&ctx(&a), &[]);
        assert_eq!(f.len(), MAX_FEATURES);
        // Attributes are taken in name order, so the same session gives the same features.
        assert_eq!(f, Features::extract(&ctx(&a), &[]));
    }

    /// FNV-1a over the bytes, then SplitMix64's finaliser so that nearby labels spread over the
    /// whole table. Fixed here rather than borrowed from `std`, whose hasher may change between
    /// releases: the store keeps statistics by cell.
    fn hash_label(label: &str) -> u64 {
        mix(fnv(FNV_OFFSET, label.bytes()))
    }

    #[test]
    fn each_hash_is_the_hash_of_its_label() {
        let a = attrs(&[
            ("level", 40.into()),
            ("gold", (-1234.5).into()),
            ("mode", "pvp".into()),
            ("vip", false.into()),
        ]);
        let f = Features::extract(&ctx(&a), &[]);
        assert_eq!(f.len(), 12);
        for (label, h) in f.labels().zip(f.hashes()) {
            assert_eq!(hash_label(label), *h, "{label}");
        }
        assert!(
            f.labels().any(|l| l == "attr:gold~t0:-21"),
            "{:?}",
            f.labels().collect::<Vec<_>>()
        );
    }

    #[test]
    fn a_full_builder_drops_both_tilings_cleanly() {
        // 6 fixed features and 29 numbers need 64; one more string first leaves one slot for
        // the last number's pair.
        let mut a: HashMap<String, serde_json::Value> =
            (0..29).map(|i| (format!("n{i:02}"), i.into())).collect();
        a.insert("m".to_owned(), "x".into());
        let f = Features::extract(&ctx(&a), &[]);
        assert_eq!(f.len(), MAX_FEATURES);
        assert_eq!(f.labels().count(), MAX_FEATURES);
        assert_eq!(f.label(MAX_FEATURES - 1), Some("attr:n28~t0:9"));
        for (label, h) in f.labels().zip(f.hashes()) {
            assert_eq!(hash_label(label), *h, "{label}");
        }
    }

    #[test]
    fn the_hash_is_fixed() {
        // The store keeps statistics by cell: the hash must never change.
        assert_eq!(hash_label("bias"), 0xde1e_ad34_96fd_97dc);
        assert_eq!(hash_label("trigger=currency_low"), 0xdfdd_b101_f175_3b57);
        assert_eq!(hash_label(""), mix(0xcbf2_9ce4_8422_2325));
        assert_ne!(hash_label("a"), hash_label("b"));
    }
}
