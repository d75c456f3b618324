//! What a decision leaves for the learner: the lesson a shown offer teaches, and the
//! explanation of an AI pick for the decision's trace.
//!
//! Every single-item offer teaches, whatever level served it: an AI offer teaches its arm,
//! any other level's the arm of its item's category at the nearest price point (its choice
//! depends only on context the learner sees, so no correction is needed). Offers of several
//! items teach nothing: no one arm stands for them.

use std::sync::Arc;

use serde::ser::SerializeStruct;
use serde::{Serialize, Serializer};

use crate::bandit::Arm;
use crate::learner::{Choice, Features, Source, nearest_arm};

use crate::catalogue::Item;

/// What showing (and selling) one offer teaches the learner.
#[derive(Debug, Clone, PartialEq)]
pub struct Lesson {
    /// The arm the offer stands for.
    pub arm: Arm,
    /// Whether the AI served it or another level did (weighted by the game's
    /// `fallback_weight`).
    pub source: Source,
    /// The decision's context features.
    pub features: Arc<Features>,
}

impl Lesson {
    /// The lesson of an offer served by `level` (its items at `price_cents`): `None` for
    /// several items or an item outside the AI categories. `chosen` is the learner's arm when
    /// the offer serves it at the arm's own price; an AI offer whose price an experiment
    /// changed teaches the arm of the price shown, like any other level's.
    pub fn of_offer(
        level: u8,
        items: &[Arc<Item>],
        price_cents: i64,
        chosen: Option<Arm>,
        features: &Arc<Features>,
    ) -> Option<Self> {
        let [item] = items else {
            return None;
        };
        let source = if level == 1 {
            Source::Ai
        } else {
            Source::Fallback
        };
        let arm = match chosen {
            Some(arm) => arm,
            None => nearest_arm(item.category, price_cents)?,
        };
        Some(Self {
            arm,
            source,
            features: Arc::clone(features),
        })
    }
}

/// The source's name in a decision record.
pub fn source_name(source: Source) -> &'static str {
    match source {
        Source::Ai => "ai",
        Source::Fallback => "fallback",
    }
}

/// The source of its name in a decision record.
pub fn source_of_name(name: &str) -> Option<Source> {
    match name {
        "ai" => Some(Source::Ai),
        "fallback" => Some(Source::Fallback),
        _ => None,
    }
}

impl Serialize for Lesson {
    /// `{"arm", "source", "features"}`: the features by label, from which any node rebuilds
    /// the hashes (with the record's trigger).
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("Lesson", 3)?;
        st.serialize_field("arm", &self.arm)?;
        st.serialize_field("source", source_name(self.source))?;
        st.serialize_field("features", &Labels(&self.features))?;
        st.end()
    }
}

/// A feature set serialised as its labels.
struct Labels<'a>(&'a Features);

impl Serialize for Labels<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.labels())
    }
}

/// Why the AI picked what it picked, for the decision's trace.
#[derive(Debug, Clone, PartialEq)]
pub struct Explanation {
    /// The context features it used.
    pub features: Arc<Features>,
    /// The arm it picked.
    pub arm: Arm,
    /// The arm's sampled expected revenue, in cents.
    pub sampled_revenue_cents: f64,
    /// The arm that came second and its sampled expected revenue.
    pub runner_up: Option<(Arm, f64)>,
    /// The features that weighed most on the pick, by label, with their contribution to the
    /// arm's log-odds, largest first.
    pub top_features: Vec<(String, f64)>,
}

impl Explanation {
    /// The explanation of a learner's choice.
    pub fn of_choice(choice: &Choice, features: &Arc<Features>) -> Self {
        Self {
            features: Arc::clone(features),
            arm: choice.arm,
            sampled_revenue_cents: choice.sampled_revenue_cents,
            runner_up: choice.runner_up,
            top_features: choice
                .top_labels(features)
                .into_iter()
                .map(|(label, w)| (label.to_owned(), w))
                .collect(),
        }
    }
}

impl Serialize for Explanation {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        /// An arm with its sampled expected revenue.
        #[derive(Serialize)]
        struct Pick {
            arm: Arm,
            sampled_revenue_cents: f64,
        }
        /// A feature with its weight on the pick.
        #[derive(Serialize)]
        struct Weight<'a> {
            feature: &'a str,
            log_odds: f64,
        }
        let mut st = s.serialize_struct("Explanation", 4)?;
        st.serialize_field("features", &Labels(&self.features))?;
        st.serialize_field(
            "chosen",
            &Pick {
                arm: self.arm,
                sampled_revenue_cents: self.sampled_revenue_cents,
            },
        )?;
        st.serialize_field(
            "runner_up",
            &self.runner_up.map(|(arm, r)| Pick {
                arm,
                sampled_revenue_cents: r,
            }),
        )?;
        st.serialize_field(
            "top_features",
            &self
                .top_features
                .iter()
                .map(|(feature, log_odds)| Weight {
                    feature,
                    log_odds: *log_odds,
                })
                .collect::<Vec<_>>(),
        )?;
        st.end()
    }
}
