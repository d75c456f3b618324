//! Integration tests of the offer engine: one binary, one module per area.

mod redis_harness;
mod store_conformance;
