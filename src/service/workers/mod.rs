//! Background workers each node runs: preview builds, retention sweeps, the decision records'
//! writer and lookup, and the L1 model's synchronisation.

pub mod decisions;
pub mod model;
pub mod preview_build;
pub mod retention;
