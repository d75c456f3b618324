//! Studio approval: the queue of offers and pages awaiting a decision, a custom page's publish
//! request (an approval of one saved version), and the Monte Carlo simulation run before a
//! decision is made.

pub mod approvals;
pub mod publish_request;
pub mod simulation;
