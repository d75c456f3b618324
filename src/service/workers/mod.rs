//! Background workers each node runs: preview builds, retention sweeps, the decision records'
//! writer and lookup, the L1 model's synchronisation, and the refused events' counters.

pub mod decisions;
pub mod model;
pub mod preview_build;
pub mod refused_events;
pub mod retention;
