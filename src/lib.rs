//! Offer engine service library.
