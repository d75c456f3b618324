//! The Redis key layout, one function per key.
//!
//! Every key starts with a configurable prefix (default [`DEFAULT_PREFIX`]) so that several
//! deployments, or every test, can share one Redis without seeing each other. Every key of a
//! game carries the game id as a `{hash tag}`, so a Redis Cluster keeps all of a game's keys
//! in one slot and the multi-key wallet script stays legal there.
//!
//! | key | type | content |
//! | --- | --- | --- |
//! | `<prefix>:global:<collection>` | hash | document id -> JSON bytes (deployment-wide) |
//! | `<prefix>:{<game_id>}:<collection>` | hash | document id -> JSON bytes (one game) |
//! | `<prefix>:{<game_id>}:<env>:wallet:<player_id>` | hash | currency id -> balance |
//! | `<prefix>:{<game_id>}:<env>:tx` | hash | tx id -> balance recorded when first applied |
//! | `<prefix>:{<game_id>}:<env>:ledger` | list | one JSON [`LedgerEntry`](super::LedgerEntry) per money event, append order |
//! | `<prefix>:{<game_id>}:<env>:day:<YYYY-MM-DD>` | hash | `earned:<currency>`, `spent:<currency>`, `rev_t`, `rev_c`; `xearned:<currency>`, `xspent:<currency>` units left out by the day caps, `cearned:<currency>`, `cspent:<currency>` players capped |
//! | `<prefix>:{<game_id>}:<env>:pday:<YYYY-MM-DD>` | hash, expiring | `<e\|s>\|<currency>\|<player>` a player's units that day, `x<e\|s>\|<currency>\|<player>` the part left out |
//! | `<prefix>:{<game_id>}:kill` | string | the kill-switch level 0-3 |
//! | `<prefix>:{<game_id>}:<env>:exp:<experiment_id>` | hash | per variant and player: `s`, `p`, `r` (shown, purchases, revenue cents), see [`Keys::experiment`] |
//! | `<prefix>:{<game_id>}:decision:<decision_id>` | string, with a time to live | one decision record (MessagePack, see `service::play::decision_codec`) |
//! | `<prefix>:global:ttl:<collection>:<id>`, `<prefix>:{<game_id>}:ttl:<collection>:<id>` | string, with a time to live | one short-lived document |
//! | `<prefix>:bus` | pub/sub channel | JSON [`BusMessage`](offer_wire::bus::BusMessage) |
//!
//! `<env>` is [`Environment::tag`] (`prod` or `sandbox`); `<game_id>` is the lowercase
//! hyphenated UUID. A player id may contain any character: it is always the last segment of
//! its key and the hash tag comes first, so it can neither collide with another key nor move
//! the key to another slot.

use chrono::NaiveDate;
use offer_domain::environment::Environment;
use uuid::Uuid;

use super::{Collection, Scope};

/// How long a day's player totals ([`Keys::player_days`]) are kept after their last write
/// ([`PLAYER_DAYS_KEPT`](super::PLAYER_DAYS_KEPT) days).
pub const PLAYER_DAYS_TTL_SECS: i64 = super::PLAYER_DAYS_KEPT * 86_400;

/// What a key found by [`Keys::env_pattern`] names, for a player's erasure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EnvKey {
    /// One of the day's per-player hashes (day spends, unverified day spends, day totals).
    Day(NaiveDate),
    /// An experiment's exposure hash.
    Experiment(Uuid),
}

/// `text` escaped for a glob-style `MATCH` pattern (`SCAN`, `HSCAN`).
pub fn glob_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '\\' | '^' | '-') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// The prefix used when the configuration names none.
pub const DEFAULT_PREFIX: &str = "offer";

/// Builds every key of one key space (one prefix).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Keys {
    prefix: String,
}

impl Keys {
    /// A key space under `prefix`; tests give each case its own prefix.
    pub fn new(prefix: &str) -> Self {
        Self {
            prefix: prefix.to_owned(),
        }
    }

    /// The hash holding a collection's documents.
    pub fn collection(&self, coll: Collection) -> String {
        match coll.scope {
            Scope::Global => format!("{}:global:{}", self.prefix, coll.name),
            Scope::Game(game_id) => format!("{}:{{{game_id}}}:{}", self.prefix, coll.name),
        }
    }

    /// A player's wallet: currency id -> balance.
    pub fn wallet(&self, game_id: Uuid, env: Environment, player_id: &str) -> String {
        format!(
            "{}:{{{game_id}}}:{}:wallet:{player_id}",
            self.prefix,
            env.tag()
        )
    }

    /// The idempotency record: tx id -> balance after its first application.
    pub fn tx(&self, game_id: Uuid, env: Environment) -> String {
        format!("{}:{{{game_id}}}:{}:tx", self.prefix, env.tag())
    }

    /// When each idempotency record's event was received: a sorted set of tx ids scored by
    /// Unix milliseconds, so the records past the retention are found without a scan.
    pub fn tx_received(&self, game_id: Uuid, env: Environment) -> String {
        format!("{}:{{{game_id}}}:{}:txr", self.prefix, env.tag())
    }

    /// Lifetime real-money spend per player: player id -> cents.
    pub fn spend(&self, game_id: Uuid, env: Environment) -> String {
        format!("{}:{{{game_id}}}:{}:spend", self.prefix, env.tag())
    }

    /// The payers' real-money spend on one UTC day (player -> cents).
    pub fn spend_day(&self, game_id: Uuid, env: Environment, day: NaiveDate) -> String {
        format!(
            "{}:{{{game_id}}}:{}:spend_day:{}",
            self.prefix,
            env.tag(),
            day
        )
    }

    /// The append-only ledger list.
    pub fn ledger(&self, game_id: Uuid, env: Environment) -> String {
        format!("{}:{{{game_id}}}:{}:ledger", self.prefix, env.tag())
    }

    /// Each player's day totals of one UTC day, one hash for the whole game (fields
    /// `<e|s>|<currency>|<player>` every unit reported, `x<e|s>|<currency>|<player>` the
    /// units the day cap left out), so the day caps are derived from one read per day. It
    /// expires [`PLAYER_DAYS_TTL_SECS`] after its last write.
    pub fn player_days(&self, game_id: Uuid, env: Environment, day: NaiveDate) -> String {
        format!("{}:{{{game_id}}}:{}:pday:{}", self.prefix, env.tag(), day)
    }

    /// The per-day aggregate hash (FSR and revenue read these instead of the ledger).
    pub fn day(&self, game_id: Uuid, env: Environment, day: NaiveDate) -> String {
        format!("{}:{{{game_id}}}:{}:day:{}", self.prefix, env.tag(), day)
    }

    /// Purchases kept without a store's proof (unverified, or a sandbox transaction on a
    /// live key): per player, cents, as [`Keys::spend`] keeps counted purchases. Unverified
    /// purchases have keys of their own so that nothing reading revenue can count them.
    pub fn spend_unverified(&self, game_id: Uuid, env: Environment) -> String {
        format!("{}:{{{game_id}}}:{}:uv:spend", self.prefix, env.tag())
    }

    /// Unverified purchases per payer on one UTC day, as [`Keys::spend_day`].
    pub fn spend_day_unverified(&self, game_id: Uuid, env: Environment, day: NaiveDate) -> String {
        format!(
            "{}:{{{game_id}}}:{}:uv:spend_day:{}",
            self.prefix,
            env.tag(),
            day
        )
    }

    /// Unverified purchases on one UTC day by group (`rev_t`, `rev_c`), as [`Keys::day`]
    /// keeps counted revenue.
    pub fn day_unverified(&self, game_id: Uuid, env: Environment, day: NaiveDate) -> String {
        format!("{}:{{{game_id}}}:{}:uv:day:{}", self.prefix, env.tag(), day)
    }

    /// The kill-switch level the wallet script reads.
    pub fn kill(&self, game_id: Uuid) -> String {
        format!("{}:{{{game_id}}}:kill", self.prefix)
    }

    /// The per-player totals of one experiment: a hash whose fields are
    /// `<kind><variant length>:<variant><player_id>`, `kind` one of `s` (offers shown), `p`
    /// (purchases) and `r` (revenue in cents), the length in bytes; so neither a variant name
    /// nor a player id can run into the other.
    pub fn experiment(&self, game_id: Uuid, env: Environment, experiment_id: Uuid) -> String {
        format!(
            "{}:{{{game_id}}}:{}:exp:{experiment_id}",
            self.prefix,
            env.tag()
        )
    }

    /// The `SCAN` pattern that matches every key of one game and environment (and nothing
    /// else: the base ends with the environment's own segment).
    pub fn env_pattern(&self, game_id: Uuid, env: Environment) -> String {
        format!("{}*", glob_escape(&self.env_base(game_id, env)))
    }

    /// What a key of one game and environment names that a player's erasure must reach: the
    /// day of a day spend, an unverified day spend or a player day totals hash, or the
    /// experiment of an exposure hash. `None` for any other key (a wallet, whose player id
    /// may read like anything, is never mistaken: the kind is the segment right after the
    /// environment, and the key must be exactly the one this layout builds for what it
    /// names).
    pub fn erasure_target(&self, game_id: Uuid, env: Environment, key: &str) -> Option<EnvKey> {
        let rest = key.strip_prefix(&self.env_base(game_id, env))?;
        if let Some(id) = rest.strip_prefix("exp:") {
            let experiment: Uuid = id.parse().ok()?;
            return (self.experiment(game_id, env, experiment) == key)
                .then_some(EnvKey::Experiment(experiment));
        }
        let day = ["spend_day:", "uv:spend_day:", "pday:"]
            .iter()
            .find_map(|kind| rest.strip_prefix(kind))?;
        let day: NaiveDate = day.parse().ok()?;
        [
            self.spend_day(game_id, env, day),
            self.spend_day_unverified(game_id, env, day),
            self.player_days(game_id, env, day),
        ]
        .contains(&key.to_owned())
        .then_some(EnvKey::Day(day))
    }

    /// The text every key of one game and environment starts with.
    fn env_base(&self, game_id: Uuid, env: Environment) -> String {
        format!("{}:{{{game_id}}}:{}:", self.prefix, env.tag())
    }

    /// The `SCAN` pattern that matches every decision record of a game.
    pub fn decisions_pattern(&self, game_id: Uuid) -> String {
        format!(
            "{}*",
            glob_escape(&format!("{}:{{{game_id}}}:decision:", self.prefix))
        )
    }

    /// One decision record, which Redis deletes when its time to live ends.
    pub fn decision(&self, game_id: Uuid, decision_id: Uuid) -> String {
        format!("{}:{{{game_id}}}:decision:{decision_id}", self.prefix)
    }

    /// One short-lived document, which Redis deletes when its time to live ends. The id is
    /// the last segment, so no id reaches another key.
    pub fn expiring(&self, coll: Collection, id: &str) -> String {
        match coll.scope {
            Scope::Global => format!("{}:global:ttl:{}:{id}", self.prefix, coll.name),
            Scope::Game(game_id) => format!("{}:{{{game_id}}}:ttl:{}:{id}", self.prefix, coll.name),
        }
    }

    /// The pub/sub channel between engine nodes.
    pub fn bus(&self) -> String {
        format!("{}:bus", self.prefix)
    }
}

impl Default for Keys {
    fn default() -> Self {
        Self::new(DEFAULT_PREFIX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn game_keys_share_one_hash_tag() {
        let keys = Keys::new("p");
        let game = Uuid::nil();
        let tag = format!("{{{game}}}");
        let all = [
            keys.collection(Collection::game(game, "items")),
            keys.wallet(game, Environment::Production, "pl{x}"),
            keys.tx(game, Environment::Sandbox),
            keys.ledger(game, Environment::Production),
            keys.day(
                game,
                Environment::Production,
                NaiveDate::from_ymd_opt(2024, 3, 9).unwrap_or_default(),
            ),
            keys.kill(game),
            keys.decision(game, Uuid::nil()),
            keys.experiment(game, Environment::Sandbox, Uuid::nil()),
            keys.expiring(Collection::game(game, "codes"), "x"),
        ];
        for key in &all {
            assert!(key.starts_with(&format!("p:{tag}:")), "{key}");
        }
        assert_eq!(
            all[4],
            "p:{00000000-0000-0000-0000-000000000000}:prod:day:2024-03-09"
        );
        assert_eq!(
            keys.collection(Collection::global("games")),
            "p:global:games"
        );
        assert_eq!(keys.bus(), "p:bus");
    }

    #[test]
    fn the_erasure_finds_days_and_experiments_and_nothing_else() {
        let keys = Keys::new("p*[x]");
        let (game, env) = (Uuid::new_v4(), Environment::Production);
        let day = NaiveDate::from_ymd_opt(2019, 12, 31).unwrap_or_default();
        let experiment = Uuid::new_v4();
        for key in [
            keys.spend_day(game, env, day),
            keys.spend_day_unverified(game, env, day),
            keys.player_days(game, env, day),
        ] {
            assert_eq!(
                keys.erasure_target(game, env, &key),
                Some(EnvKey::Day(day)),
                "{key}"
            );
        }
        assert_eq!(
            keys.erasure_target(game, env, &keys.experiment(game, env, experiment)),
            Some(EnvKey::Experiment(experiment))
        );
        let other = Uuid::new_v4();
        for key in [
            keys.wallet(game, env, "x:spend_day:2019-12-31"),
            keys.wallet(game, env, &format!("exp:{experiment}")),
            keys.day(game, env, day),
            keys.ledger(game, env),
            keys.spend_day(game, Environment::Sandbox, day),
            keys.spend_day(other, env, day),
            keys.experiment(other, env, experiment),
            format!("{}x", keys.spend_day(game, env, day)),
        ] {
            assert_eq!(keys.erasure_target(game, env, &key), None, "{key}");
        }
        assert_eq!(
            keys.env_pattern(game, env),
            format!(
                "p\\*\\[x\\]:{{{}}}:prod:*",
                game.to_string().replace('-', "\\-")
            )
        );
    }

    /// The day keys name the day through `NaiveDate`'s own text, which must stay the
    /// `%Y-%m-%d` the keys were written with, for every year (keys already stored must be
    /// found again).
    #[test]
    fn day_keys_name_the_day_as_year_month_day() {
        for year in [-1, 0, 1, 999, 1970, 2026, 9999, 10_000, 262_000] {
            for (month, day) in [(1, 1), (2, 29), (12, 31)] {
                let Some(date) = NaiveDate::from_ymd_opt(year, month, day) else {
                    continue;
                };
                assert_eq!(
                    date.to_string(),
                    date.format("%Y-%m-%d").to_string(),
                    "{date:?}"
                );
            }
        }
    }
}
