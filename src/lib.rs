//! Offer engine service library.

pub mod store;
