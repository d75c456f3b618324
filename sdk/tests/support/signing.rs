//! Signed player identity for the tests: the engine tests' P-256 keys
//! (`tests/keys/player-es256-*.pem`), player tokens signed with them, and a game made to
//! require them.

use jsonwebtoken::{Algorithm, EncodingKey, Header, encode};
use reqwest::Method;
use serde_json::json;

use super::Live;

/// Key A, private.
pub const KEY_A: &str = include_str!("../../../tests/keys/player-es256-a.pem");
/// Key A, public.
pub const KEY_A_PUB: &str = include_str!("../../../tests/keys/player-es256-a.pub.pem");
/// Key B, private.
pub const KEY_B: &str = include_str!("../../../tests/keys/player-es256-b.pem");
/// Key B, public.
pub const KEY_B_PUB: &str = include_str!("../../../tests/keys/player-es256-b.pub.pem");

/// Now, in Unix seconds.
pub fn now() -> i64 {
    chrono::Utc::now().timestamp()
}

/// A token of `key` for `player` in `game`, expiring `exp_in` seconds from now.
pub fn token(key: &str, player: &str, game: &str, exp_in: i64) -> String {
    let claims = json!({"sub": player, "aud": game, "exp": now() + exp_in, "iat": now()});
    let key = EncodingKey::from_ec_pem(key.as_bytes()).expect("a test private key");
    encode(&Header::new(Algorithm::ES256), &claims, &key).expect("signed")
}

/// Makes `live`'s game require tokens of the public keys `keys`.
pub fn require(live: &Live, keys: &[&str]) {
    let (status, body) = live.admin.call(
        Method::PUT,
        &format!("/v1/games/{}/player-auth", live.game_id),
        Some(json!({"mode": "required", "keys": keys})),
    );
    assert_eq!(status, 200, "{body}");
}
