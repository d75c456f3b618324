//! Economy and billing: the faucet/sink report and the quadrant it sets, the player population,
//! the holdout comparison and its cache, and the revenue-share standing.

pub mod billing;
pub mod figures_cache;
pub mod health;
pub mod holdout;
pub mod population;
