//! Signed player identity from the Rust SDK against a spawned engine whose game requires it
//! (`PUT .../player-auth` with `mode: required`): a valid token opens the session, the socket
//! serves offers and events reach the wallet; a token near its `exp` is renewed through the
//! game's callback before it is sent past it (the engine's keys are rotated meanwhile, so
//! only the new token would do); and a refused token is reported with the engine's code, sent
//! no more, and the session opens once the game gives a good one. The keys are the engine
//! tests' `tests/keys/player-es256-*.pem`.

// This file uses part of the shared fixture only.
#[allow(dead_code)]
mod support;

use std::time::Duration;

use offer_sdk::{InitOptions, Sdk, SdkCallback, SdkEvent};
use reqwest::Method;
use serde_json::json;
use support::signing::{KEY_A, KEY_A_PUB, KEY_B, KEY_B_PUB, now, require, token};
use support::{Live, eventually, options_with, outside_holdout, wait_for};

/// Options for a game whose player ids come from the token (`player_id_source: jwt`), with
/// `token` given at init.
fn signed_options(live: &Live, token: String) -> InitOptions {
    let mut options = options_with(
        &live.sdk_data,
        r#"{"auto_login": true, "player_id_source": "jwt"}"#,
    );
    options.player_token = Some(token);
    options
}

/// The player's `gems` balance as the engine holds it.
fn gems(live: &Live, player: &str) -> serde_json::Value {
    let path = format!("/v1/games/{}/players/{player}", live.game_id);
    let (status, body) = live.admin.call(Method::GET, &path, None);
    if status == 200 {
        body["balances"]["gems"].clone()
    } else {
        serde_json::Value::Null
    }
}

/// A `currency_earned` of `amount` gems.
fn earned(amount: i64, tx_id: &str) -> SdkEvent {
    SdkEvent::CurrencyEarned {
        currency_id: "gems".into(),
        amount,
        source: Some("quest".into()),
        tx_id: tx_id.into(),
        ts: None,
    }
}

#[test]
fn a_valid_token_opens_the_session_and_every_batch_carries_it() {
    let live = Live::start();
    require(&live, &[KEY_A_PUB]);
    let player = outside_holdout(&live.game_id, "signed");
    let sdk = Sdk::init(
        &live.config(),
        None,
        None,
        signed_options(&live, token(KEY_A, &player, &live.game_id, 3600)),
    )
    .expect("init");
    assert_eq!(
        sdk.player_id().as_deref(),
        Some(player.as_str()),
        "the token's sub"
    );
    wait_for(&sdk, "ready", |c| matches!(c, SdkCallback::Ready { .. }));
    sdk.request_offer("first_loss");
    wait_for(&sdk, "an offer", |c| matches!(c, SdkCallback::Offer(_)));
    sdk.track(earned(120, "signed-1")).expect("queued");
    wait_for(&sdk, "the balance", |c| {
        matches!(c, SdkCallback::Balance { balance: 120, .. })
    });
    eventually("the gems reach the wallet", || gems(&live, &player) == 120);
    assert_eq!(sdk.player_token_refusal(), None);

    // Without the SDK's token, the same session is refused: the batch above went with one.
    let (status, body) = live.admin.call_as(
        &live.key,
        Method::POST,
        "/v1/sdk/events",
        Some(json!({"session_id": sdk.session_id(), "events": [
            {"type": "currency_earned", "currency_id": "gems", "amount": 1, "tx_id": "bare"}]})),
    );
    assert_eq!(status, 401, "{body}");
    assert_eq!(body["error"]["code"], "player_token_required");
}

#[test]
fn a_token_near_its_expiry_is_renewed_through_the_callback_before_it_is_sent_past_it() {
    let live = Live::start();
    require(&live, &[KEY_A_PUB]);
    let player = outside_holdout(&live.game_id, "renewed");
    let mut options = signed_options(&live, token(KEY_A, &player, &live.game_id, 8));
    options.token_refresh_margin = Duration::from_secs(3);
    let mut expires = now() + 8;
    let sdk = Sdk::init(&live.config(), None, None, options).expect("init");
    // The session opens with the short token (a slow start may already ask to renew it: the
    // answer is another short one of the same key).
    let deadline = std::time::Instant::now() + support::PATIENCE;
    loop {
        assert!(std::time::Instant::now() < deadline, "no ready");
        match sdk.wait(Duration::from_millis(200)) {
            Some(SdkCallback::Ready { .. }) => break,
            Some(SdkCallback::PlayerTokenNeeded { .. }) => {
                expires = now() + 8;
                sdk.set_player_token(&token(KEY_A, &player, &live.game_id, 8))
                    .expect("the same player");
            }
            _ => {}
        }
    }
    // Past the token's exp, the studio rotates to key B: the old token would now be refused
    // even within the engine's clock skew.
    eventually("the token expires", || now() > expires);
    require(&live, &[KEY_B_PUB]);
    sdk.track(earned(75, "renewed-1")).expect("queued");
    let SdkCallback::PlayerTokenNeeded {
        reason, player_id, ..
    } = wait_for(&sdk, "the token callback", |c| {
        matches!(c, SdkCallback::PlayerTokenNeeded { .. })
    })
    else {
        unreachable!("wait_for returns what it waited for");
    };
    assert_eq!(
        reason, "expiring",
        "asked because of exp, not after a refusal"
    );
    assert_eq!(player_id.as_deref(), Some(player.as_str()));
    sdk.set_player_token(&token(KEY_B, &player, &live.game_id, 3600))
        .expect("the same player");
    wait_for(&sdk, "the balance", |c| {
        matches!(c, SdkCallback::Balance { balance: 75, .. })
    });
    eventually("the gems reach the wallet", || gems(&live, &player) == 75);
    assert_eq!(sdk.player_token_refusal(), None);
    // A token of another player is not taken.
    assert!(
        sdk.set_player_token(&token(KEY_B, "someone_else", &live.game_id, 3600))
            .is_err()
    );
}

#[test]
fn a_refused_token_is_reported_with_its_code_and_the_next_one_opens_the_session() {
    let live = Live::start();
    require(&live, &[KEY_A_PUB]);
    let player = outside_holdout(&live.game_id, "refused");
    // Signed by a key the game does not know.
    let sdk = Sdk::init(
        &live.config(),
        None,
        None,
        signed_options(&live, token(KEY_B, &player, &live.game_id, 3600)),
    )
    .expect("init");
    sdk.track(earned(40, "refused-1")).expect("queued");
    let SdkCallback::PlayerTokenNeeded {
        reason, refusal, ..
    } = wait_for(&sdk, "the token callback", |c| {
        matches!(c, SdkCallback::PlayerTokenNeeded { .. })
    })
    else {
        unreachable!("wait_for returns what it waited for");
    };
    assert_eq!(reason, "refused");
    let refusal = refusal.expect("the engine's refusal");
    assert_eq!(refusal.code, "player_token_invalid");
    assert!(
        refusal.message.contains("unknown_key"),
        "{}",
        refusal.message
    );
    assert_eq!(sdk.player_token_refusal(), Some(refusal));
    assert!(!sdk.connected());

    sdk.set_player_token(&token(KEY_A, &player, &live.game_id, 3600))
        .expect("the same player");
    wait_for(&sdk, "ready", |c| matches!(c, SdkCallback::Ready { .. }));
    eventually("the queued gems reach the wallet", || {
        gems(&live, &player) == 40
    });
    assert_eq!(sdk.player_token_refusal(), None);
}
