//! Experiment exposures in SQLite: one row per game, environment, experiment, variant and
//! player in `exposures`, added to with an upsert on the writer thread and read with one
//! query by its key's prefix.

use async_trait::async_trait;
use offer_domain::environment::Environment;
use rusqlite::params;
use uuid::Uuid;

use super::SqliteStore;
use super::schema::env_code;
use crate::store::{Exposure, ExposureKey, ExposureTotals, Exposures, StoreResult};

/// A stored count as a count: a negative one is a store fault, read as 0.
fn count(value: i64) -> u64 {
    u64::try_from(value).unwrap_or(0)
}

/// A count as stored.
fn stored(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

#[async_trait]
impl Exposures for SqliteStore {
    async fn add_exposure(&self, key: ExposureKey<'_>, delta: ExposureTotals) -> StoreResult<()> {
        let (game, env, experiment) = (key.game_id, env_code(key.env), key.experiment_id);
        let (variant, player) = (key.variant.to_owned(), key.player_id.to_owned());
        self.write("add_exposure", move |conn| {
            conn.prepare_cached(
                "INSERT INTO exposures
                   (game, env, experiment, variant, player, shown, purchases, revenue)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
                 ON CONFLICT (game, env, experiment, variant, player) DO UPDATE SET
                   shown = shown + excluded.shown,
                   purchases = purchases + excluded.purchases,
                   revenue = revenue + excluded.revenue",
            )?
            .execute(params![
                game.as_bytes().as_slice(),
                env,
                experiment.as_bytes().as_slice(),
                variant,
                player,
                stored(delta.shown),
                stored(delta.purchases),
                stored(delta.revenue_cents)
            ])?;
            Ok(())
        })
        .await
    }

    async fn exposures(
        &self,
        game_id: Uuid,
        env: Environment,
        experiment_id: Uuid,
    ) -> StoreResult<Vec<Exposure>> {
        let env = env_code(env);
        self.read("exposures", move |conn| {
            Ok(conn
                .prepare_cached(
                    "SELECT variant, player, shown, purchases, revenue FROM exposures
                     WHERE game = ?1 AND env = ?2 AND experiment = ?3",
                )?
                .query_map(
                    params![
                        game_id.as_bytes().as_slice(),
                        env,
                        experiment_id.as_bytes().as_slice()
                    ],
                    |row| {
                        Ok(Exposure {
                            variant: row.get(0)?,
                            player_id: row.get(1)?,
                            totals: ExposureTotals {
                                shown: count(row.get(2)?),
                                purchases: count(row.get(3)?),
                                revenue_cents: count(row.get(4)?),
                            },
                        })
                    },
                )?
                .collect::<Result<Vec<_>, _>>()?)
        })
        .await
    }
}
