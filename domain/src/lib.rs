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

pub mod catalogue;
pub mod game;
pub mod offer;
pub mod validation;
