//! The permanent holdout group.
//!
//! A holdout player never receives an offer, so the holdout ARPU is a clean control for the
//! revenue-share uplift. Membership is a pure function of the player id and the game id:
//!
//! `h = SHA-256(utf8(player_id) ":" utf8(game_id))`, `game_id` lowercase and hyphenated; the
//! player is in the holdout when the first 8 bytes of `h`, read as a big-endian `u64`, modulo
//! 10,000 are below 1,000.
//!
//! The share is a constant, not configuration: it is 10% and never changes once a game is
//! launched, and there is deliberately no way to put a player into (or out of) the holdout
//! by hand, so a VIP can never be moved into it manually.
//!
//! Test vectors (game `3f2b8c4e-9a1d-4e6f-8b2a-5c7d9e0f1a2b`):
//!
//! | player_id  | bucket | holdout |
//! |------------|--------|---------|
//! | `player_4` | 54     | true    |
//! | `player_5` | 614    | true    |
//! | `player_0` | 9059   | false   |

use sha2::{Digest, Sha256};
use uuid::Uuid;

/// Number of buckets the hash is reduced to.
pub const HOLDOUT_BUCKETS: u64 = 10_000;
/// Buckets below this are the holdout: 1,000 of 10,000 is the fixed 10%.
pub const HOLDOUT_THRESHOLD: u64 = 1_000;

/// The first 8 bytes of `SHA-256(a ":" b)` as a big-endian integer: the deterministic
/// assignment hash shared by the holdout and the experiment variants.
pub(crate) fn hash_pair_u64(a: &str, b: &str) -> u64 {
    let mut h = Sha256::new();
    h.update(a.as_bytes());
    h.update(b":");
    h.update(b.as_bytes());
    let digest = h.finalize();
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest[..8]);
    u64::from_be_bytes(first)
}

/// Whether the player is in the game's permanent holdout (no offer at any level).
///
/// Deterministic: the same player of the same game always lands in the same group, on every
/// node and after every restart, without storing anything.
pub fn is_holdout(player_id: &str, game_id: Uuid) -> bool {
    let mut buf = Uuid::encode_buffer();
    let game = game_id.hyphenated().encode_lower(&mut buf);
    hash_pair_u64(player_id, game) % HOLDOUT_BUCKETS < HOLDOUT_THRESHOLD
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{RngExt, SeedableRng, rngs::StdRng};

    const GAME: &str = "3f2b8c4e-9a1d-4e6f-8b2a-5c7d9e0f1a2b";

    #[test]
    fn fixed_vectors_cross_checked_with_python_hashlib() {
        let game = Uuid::parse_str(GAME).expect("uuid");
        assert!(is_holdout("player_4", game));
        assert!(is_holdout("player_5", game));
        assert!(!is_holdout("player_0", game));
        // Upper-case input parses to the same id, so the hash is the same.
        let upper = Uuid::parse_str(&GAME.to_uppercase()).expect("uuid");
        assert!(is_holdout("player_4", upper));
    }

    #[test]
    fn share_is_ten_percent() {
        let game = Uuid::parse_str(GAME).expect("uuid");
        let mut rng = StdRng::seed_from_u64(7);
        let n = 1_000_000u32;
        let held = (0..n)
            .filter(|_| is_holdout(&format!("p{:016x}", rng.random::<u64>()), game))
            .count();
        let share = f64::from(u32::try_from(held).expect("fits")) / f64::from(n);
        assert!((share - 0.10).abs() <= 0.002, "share {share}");
    }
}
