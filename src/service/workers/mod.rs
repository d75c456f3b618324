//! Background workers each node runs: preview builds, retention sweeps, the decision records'
//! writer and lookup, the L1 model's synchronisation, the refused events' counters, and the
//! audit trail's interrupted changes.

pub mod audit;
pub mod decisions;
pub mod model;
pub mod preview_build;
pub mod refused_events;
pub mod retention;
