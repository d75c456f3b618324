//! Pure domain logic of the offer engine.
//!
//! Nothing in this crate performs I/O: every function takes the state it needs as arguments
//! and returns a value, so the HTTP layer, the actors, the benches and the tests all call the
//! same code.
//!
//! Layout:
//! - [`catalogue`]: items, their validation and the three value (USD) rules.
//! - [`game`]: games, currencies, guardrails and the genre calibration table.
//! - [`offer`]: offer configuration records (templates, bundles, experiments) and offers.
//! - [`validation`]: the field-error list every validator returns.
//! - [`holdout`]: the permanent 10% holdout hash.
//! - [`policy`]: guardrail checks (price cap, loot boxes, frequency caps).
//! - [`bandit`]: the L1 Thompson-sampling model.
//! - [`economy`]: FSR quadrants.
//! - [`pipeline`]: the immutable game snapshot and the five-level offer decision.

pub mod bandit;
pub mod catalogue;
pub mod economy;
pub mod game;
pub mod holdout;
pub mod offer;
pub mod pipeline;
pub mod policy;
pub mod validation;
