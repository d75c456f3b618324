//! Experiment exposures in Redis: one hash per experiment of a game and environment
//! (`<prefix>:{<game_id>}:<env>:exp:<experiment_id>`, its fields laid out in
//! [`Keys::experiment`](crate::store::keys::Keys::experiment)), added to with `HINCRBY` in
//! one `MULTI` (one key, so one slot on a cluster) and read with one `HGETALL`.

use std::collections::HashMap;

use async_trait::async_trait;
use offer_domain::environment::Environment;
use uuid::Uuid;

use super::{RedisStore, bounded};
use crate::store::{Exposure, ExposureKey, ExposureTotals, Exposures, StoreError, StoreResult};

/// The field of one counter of a variant's player.
fn field(kind: char, variant: &str, player_id: &str) -> String {
    format!("{kind}{}:{variant}{player_id}", variant.len())
}

/// A field read back: its kind, variant and player.
fn parse(field: &str) -> Option<(char, &str, &str)> {
    let kind = field.chars().next()?;
    let rest = field.get(1..)?;
    let (len, rest) = rest.split_once(':')?;
    let len: usize = len.parse().ok()?;
    Some((kind, rest.get(..len)?, rest.get(len..)?))
}

/// A counter as a count: a negative one is a store fault, read as 0.
fn count(value: i64) -> u64 {
    u64::try_from(value).unwrap_or(0)
}

#[async_trait]
impl Exposures for RedisStore {
    async fn add_exposure(&self, key: ExposureKey<'_>, delta: ExposureTotals) -> StoreResult<()> {
        let hash = self
            .keys
            .experiment(key.game_id, key.env, key.experiment_id);
        let mut pipe = ::redis::pipe();
        pipe.atomic();
        for (kind, by) in [
            ('s', delta.shown),
            ('p', delta.purchases),
            ('r', delta.revenue_cents),
        ] {
            if by > 0 {
                pipe.cmd("HINCRBY")
                    .arg(&hash)
                    .arg(field(kind, key.variant, key.player_id))
                    .arg(i64::try_from(by).unwrap_or(i64::MAX))
                    .ignore();
            }
        }
        if pipe.is_empty() {
            return Ok(());
        }
        let mut conn = self.conn.clone();
        bounded(
            self.timeout,
            "add_exposure",
            pipe.query_async::<()>(&mut conn),
        )
        .await
    }

    async fn exposures(
        &self,
        game_id: Uuid,
        env: Environment,
        experiment_id: Uuid,
    ) -> StoreResult<Vec<Exposure>> {
        let mut cmd = ::redis::cmd("HGETALL");
        cmd.arg(self.keys.experiment(game_id, env, experiment_id));
        let fields: Vec<(String, i64)> = self.query("exposures", &cmd).await?;
        let mut by_player: HashMap<(String, String), ExposureTotals> = HashMap::new();
        for (name, value) in fields {
            let (kind, variant, player) = parse(&name).ok_or_else(|| {
                StoreError::Corrupt(format!("an experiment counter `{name}` cannot be read"))
            })?;
            let totals = by_player
                .entry((variant.to_owned(), player.to_owned()))
                .or_default();
            match kind {
                's' => totals.shown = count(value),
                'p' => totals.purchases = count(value),
                'r' => totals.revenue_cents = count(value),
                _ => {
                    return Err(StoreError::Corrupt(format!(
                        "an experiment counter `{name}` of an unknown kind"
                    )));
                }
            }
        }
        Ok(by_player
            .into_iter()
            .map(|((variant, player_id), totals)| Exposure {
                variant,
                player_id,
                totals,
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_field_names_its_variant_and_player_apart() {
        for (variant, player) in [("a", "b:c"), ("12:x", "3"), ("ü", ":"), ("v", "")] {
            let f = field('r', variant, player);
            assert_eq!(parse(&f), Some(('r', variant, player)), "{f}");
        }
        assert_eq!(parse("s9:ab"), None);
        assert_eq!(parse(""), None);
    }
}
