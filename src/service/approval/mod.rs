//! Studio approval: the queue of offers and pages awaiting a decision, and the Monte Carlo
//! simulation run before one is made.

pub mod approvals;
pub mod publish_request;
pub mod simulation;
