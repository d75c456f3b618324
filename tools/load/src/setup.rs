//! Sets a running engine up over its public REST API, exactly as a studio would: a dashboard
//! admin token minted with the engine's secret, a game, its catalogue, a production SDK key,
//! and open SDK sessions.

use anyhow::{Context, Result, bail};
use futures::{StreamExt as _, TryStreamExt as _};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use reqwest::{Client, RequestBuilder, StatusCode};
use serde::Serialize;
use serde_json::{Value, json};
use uuid::Uuid;

use crate::catalogue::{CURRENCY_ID, NewItem, catalogue};
use crate::{GameMode, SetupArgs};

/// `aud` of dashboard tokens.
const AUDIENCE: &str = "offer-engine-dashboard";
/// `iss` of dashboard tokens.
const ISSUER: &str = "offer-engine";
/// Most items one bulk call may carry.
const BULK_LIMIT: usize = 500;
/// Sessions opened concurrently during setup.
const SESSION_CONCURRENCY: usize = 16;

/// What the setup made.
#[derive(Debug, Clone)]
pub struct Prepared {
    /// The game.
    pub game_id: Uuid,
    /// Its production SDK key.
    pub api_key: String,
    /// The opened sessions, in order (session `i` belongs to player `p<i>`).
    pub sessions: Vec<Uuid>,
}

/// Claims of a dashboard token.
#[derive(Debug, Serialize)]
struct Claims<'a> {
    sub: &'a str,
    studio_id: &'a str,
    role: &'a str,
    aud: &'a str,
    iss: &'a str,
    exp: i64,
    iat: i64,
}

/// Mints an HS256 dashboard admin token for `studio_id`, valid for two hours.
pub fn admin_token(secret: &str, studio_id: &str) -> Result<String> {
    let now = chrono::Utc::now().timestamp();
    let claims = Claims {
        sub: "offer-load",
        studio_id,
        role: "admin",
        aud: AUDIENCE,
        iss: ISSUER,
        exp: now + 2 * 3600,
        iat: now,
    };
    jsonwebtoken::encode(
        &Header::new(Algorithm::HS256),
        &claims,
        &EncodingKey::from_secret(secret.as_bytes()),
    )
    .context("minting the admin token")
}

/// Sends a request and returns its JSON body when the status is `expected`; otherwise an
/// error naming the step, the status and the body.
pub(crate) async fn call(
    request: RequestBuilder,
    expected: StatusCode,
    what: &str,
) -> Result<Value> {
    let response = request
        .send()
        .await
        .with_context(|| format!("{what}: request failed"))?;
    let status = response.status();
    let text = response
        .text()
        .await
        .with_context(|| format!("{what}: reading the answer"))?;
    if status != expected {
        bail!("{what}: expected {expected}, got {status}: {text}");
    }
    if text.is_empty() {
        return Ok(Value::Null);
    }
    serde_json::from_str(&text).with_context(|| format!("{what}: answer is not JSON: {text}"))
}

/// Creates an `rpg` game named `name` (hard currency [`CURRENCY_ID`]) with `items` as its
/// catalogue, bulk-loaded in calls of at most 500; returns its id.
pub(crate) async fn create_game(
    client: &Client,
    base: &str,
    token: &str,
    name: &str,
    items: &[NewItem],
) -> Result<Uuid> {
    let game = call(
        client
            .post(format!("{base}/v1/games"))
            .bearer_auth(token)
            .json(&json!({
                "name": name,
                "genre": "rpg",
                "currencies": [{"currency_id": CURRENCY_ID, "kind": "hard"}],
            })),
        StatusCode::CREATED,
        "POST /v1/games",
    )
    .await?;
    let game_id: Uuid = game["game_id"]
        .as_str()
        .context("POST /v1/games: no game_id")?
        .parse()
        .context("POST /v1/games: game_id is not a UUID")?;
    for chunk in items.chunks(BULK_LIMIT) {
        call(
            client
                .post(format!("{base}/v1/games/{game_id}/items/bulk"))
                .bearer_auth(token)
                .json(&json!({ "items": chunk })),
            StatusCode::OK,
            "POST /v1/games/{game_id}/items/bulk",
        )
        .await?;
    }
    Ok(game_id)
}

/// Creates a game with its catalogue and a production SDK key, and opens
/// `args.sessions` sessions. `base` is `http://host:port` without a trailing slash.
pub async fn prepare(base: &str, secret: &str, args: &SetupArgs) -> Result<Prepared> {
    let client = Client::builder()
        .build()
        .context("building the HTTP client")?;
    let token = admin_token(secret, "load-studio")?;

    let items = catalogue(args.items);
    let game_id = create_game(&client, base, &token, "Load test RPG", &items).await?;

    if args.mode == GameMode::Autonomous {
        // Autonomous mode needs a price ceiling: the catalogue's dearest item, so the
        // learner may pick any of them.
        // Catalogue prices are dollars with two decimals, far inside i64 as cents.
        #[allow(clippy::cast_possible_truncation)]
        let dearest_cents = items
            .iter()
            .map(|i| (i.price_usd * 100.0).round() as i64)
            .max()
            .unwrap_or(0);
        call(
            client
                .patch(format!("{base}/v1/games/{game_id}/guardrails"))
                .bearer_auth(&token)
                .json(&json!({ "max_price_cents": dearest_cents })),
            StatusCode::OK,
            "PATCH /v1/games/{game_id}/guardrails",
        )
        .await?;
        promote(&client, base, &token, game_id).await?;
    }
    let api_key = production_key(&client, base, &token, game_id).await?;

    let sessions = open_sessions(&client, base, &api_key, args.sessions, "p").await?;

    Ok(Prepared {
        game_id,
        api_key,
        sessions,
    })
}

/// Promotes `game_id` from Shadow to Autonomous, one step at a time as the engine asks
/// (Shadow, Assisted, Autonomous).
pub async fn promote(client: &Client, base: &str, token: &str, game_id: Uuid) -> Result<()> {
    for mode in ["assisted", "autonomous"] {
        call(
            client
                .post(format!("{base}/v1/games/{game_id}/mode"))
                .bearer_auth(token)
                .json(&json!({ "mode": mode })),
            StatusCode::OK,
            "POST /v1/games/{game_id}/mode",
        )
        .await?;
    }
    Ok(())
}

/// Issues a production SDK key for `game_id` with the admin `token`; the key.
pub async fn production_key(
    client: &Client,
    base: &str,
    token: &str,
    game_id: Uuid,
) -> Result<String> {
    let answer = call(
        client
            .post(format!("{base}/v1/games/{game_id}/sdk-keys"))
            .bearer_auth(token)
            .json(&json!({"environment": "production"})),
        StatusCode::CREATED,
        "POST /v1/games/{game_id}/sdk-keys",
    )
    .await?;
    Ok(answer["api_key"]
        .as_str()
        .context("POST .../sdk-keys: no api_key")?
        .to_owned())
}

/// Opens `n` sessions over REST with `key`, session `i` for player `<prefix><i>`, and returns
/// their ids in order.
pub async fn open_sessions(
    client: &Client,
    base: &str,
    key: &str,
    n: usize,
    prefix: &str,
) -> Result<Vec<Uuid>> {
    let players = (0..n)
        .map(|i| {
            let attributes = json!({"country": "US", "platform": "android"});
            (format!("{prefix}{i}"), attributes)
        })
        .collect();
    open_sessions_for(client, base, key, players).await
}

/// Opens one session over REST with `key` per `(player id, session attributes)`, and returns
/// their ids in order.
pub async fn open_sessions_for(
    client: &Client,
    base: &str,
    key: &str,
    players: Vec<(String, Value)>,
) -> Result<Vec<Uuid>> {
    let sessions: Vec<Uuid> = players.iter().map(|_| Uuid::new_v4()).collect();
    futures::stream::iter(players.into_iter().zip(&sessions))
        .map(|((player_id, attributes), session_id)| {
            let request = client
                .post(format!("{base}/v1/sdk/sessions"))
                .bearer_auth(key)
                .json(&json!({
                    "session_id": session_id,
                    "player_id": player_id,
                    "attributes": attributes,
                }));
            call(request, StatusCode::CREATED, "POST /v1/sdk/sessions")
        })
        .buffer_unordered(SESSION_CONCURRENCY)
        .try_collect::<Vec<_>>()
        .await?;
    Ok(sessions)
}

#[cfg(test)]
mod tests {
    use super::*;
    use jsonwebtoken::{DecodingKey, Validation};

    #[test]
    fn admin_token_has_the_dashboard_claims() {
        let secret = "s".repeat(48);
        let token = admin_token(&secret, "studio-1").expect("token");
        let mut validation = Validation::new(Algorithm::HS256);
        validation.set_audience(&[AUDIENCE]);
        validation.set_issuer(&[ISSUER]);
        let data = jsonwebtoken::decode::<Value>(
            &token,
            &DecodingKey::from_secret(secret.as_bytes()),
            &validation,
        )
        .expect("valid");
        assert_eq!(data.claims["role"], "admin");
        assert_eq!(data.claims["studio_id"], "studio-1");
        assert!(data.claims["iat"].as_i64() < data.claims["exp"].as_i64());
    }
}
