//! Economy and billing: the faucet/sink report, the player population, the holdout comparison and
//! its cache, the revenue-share standing, and history import.

pub mod billing;
pub mod figures_cache;
pub mod health;
pub mod holdout;
pub mod population;
