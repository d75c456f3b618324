//! The audit trail's record: who changed what, when, from where, and the fields that changed.
//!
//! An entry names its actor (a studio member, a key by its id, or the operator who runs the
//! deployment), the surface the change came through (REST, the dashboard, the command line),
//! the game when the object belongs to one, the action, the object, and the object's changed
//! fields before and after. Only fields that differ are kept, so an entry reads as the change
//! itself; a field whose name says it holds a secret (a key's hash, a password, a token, a
//! signing secret) is replaced by [`REDACTED`] on both sides, so a record never carries one.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use uuid::Uuid;

/// What a secret field holds in a record, before and after: the record says it changed,
/// never what it was or became.
pub const REDACTED: &str = "[redacted]";

/// Who made a change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(tag = "kind", content = "id", rename_all = "snake_case")]
pub enum Actor {
    /// A studio member, by e-mail address.
    Member(String),
    /// A key (SDK, authoring or server), by its id; never the key itself.
    Key(String),
    /// Whoever runs the deployment: its configuration at start, the command line's member
    /// creation. The id names the operator's tool (`config`, `cli`).
    Operator(String),
}

/// The surface a change came through.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Via {
    /// The REST API.
    Rest,
    /// The studio dashboard.
    Dashboard,
    /// The engine's command line.
    Cli,
    /// The engine itself, at start (the operator's configuration).
    Startup,
}

impl Actor {
    /// The member's address, the key's id or the operator's tool.
    pub fn name(&self) -> &str {
        match self {
            Self::Member(name) | Self::Key(name) | Self::Operator(name) => name,
        }
    }
}

/// Who made a change and through which surface: what every audited use case is handed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangedBy {
    /// The actor.
    pub actor: Actor,
    /// The surface.
    pub via: Via,
}

impl ChangedBy {
    /// A member through `via`.
    pub fn member(email: &str, via: Via) -> Self {
        Self {
            actor: Actor::Member(email.to_owned()),
            via,
        }
    }

    /// A key, by id, through the REST API (keys only reach the API).
    pub fn key(key_id: &str) -> Self {
        Self {
            actor: Actor::Key(key_id.to_owned()),
            via: Via::Rest,
        }
    }
}

/// The object a change touched: its kind (`game`, `item`, `key`, ...) and id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ObjectRef {
    /// The kind of object.
    pub kind: String,
    /// Its id within the kind.
    pub id: String,
}

impl ObjectRef {
    /// An object of `kind` with `id`.
    pub fn new(kind: &str, id: impl ToString) -> Self {
        Self {
            kind: kind.to_owned(),
            id: id.to_string(),
        }
    }
}

/// One record of the audit trail.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct AuditEntry {
    /// The record's id: its time and a random part, so ids sort by time (the read's cursor).
    pub id: String,
    /// When the change was made.
    pub at: DateTime<Utc>,
    /// Who made it.
    pub actor: Actor,
    /// Through which surface.
    pub via: Via,
    /// The studio whose object changed (the operator's own settings: none).
    pub studio_id: Option<String>,
    /// The game the object belongs to, when it belongs to one.
    pub game_id: Option<Uuid>,
    /// What was done (`kill_switch.set`, `item.upsert`, `key.revoke`, ...).
    pub action: String,
    /// The object.
    pub object: ObjectRef,
    /// The changed fields as they were (`null`: the object did not exist).
    pub before: Value,
    /// The changed fields as they are now (`null`: the object no longer exists).
    pub after: Value,
}

/// A record's id for a change at `at`: microseconds since the epoch, zero-padded so that ids
/// sort as times do, then a random part that keeps two records of one microsecond apart.
pub fn entry_id(at: DateTime<Utc>, random: Uuid) -> String {
    let micros = at.timestamp_micros().max(0);
    format!("{micros:020}-{}", random.simple())
}

/// True for a field whose name says it holds a secret.
pub fn is_secret_field(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    [
        "hash", "secret", "password", "token", "salt", "private", "signing", "csrf",
    ]
    .iter()
    .any(|word| name.contains(word))
}

/// The fields of `before` and `after` (each an object or `null`) that differ, as two objects
/// (`null` where the object is absent), secrets redacted at every depth. Two equal documents
/// give two empty objects: nothing changed.
pub fn changed_fields(before: &Value, after: &Value) -> (Value, Value) {
    match (before, after) {
        (Value::Object(b), Value::Object(a)) => {
            let mut old = Map::new();
            let mut new = Map::new();
            for (name, value) in b {
                if a.get(name) != Some(value) {
                    old.insert(name.clone(), redact_field(name, value));
                    new.insert(
                        name.clone(),
                        a.get(name).map_or(Value::Null, |v| redact_field(name, v)),
                    );
                }
            }
            for (name, value) in a {
                if !b.contains_key(name) {
                    old.insert(name.clone(), Value::Null);
                    new.insert(name.clone(), redact_field(name, value));
                }
            }
            (Value::Object(old), Value::Object(new))
        }
        (b, a) if b == a => (Value::Object(Map::new()), Value::Object(Map::new())),
        (b, a) => (redact(b), redact(a)),
    }
}

/// True when `changed_fields` found nothing that changed.
pub fn is_unchanged(before: &Value, after: &Value) -> bool {
    let empty = |v: &Value| v.as_object().is_some_and(Map::is_empty);
    empty(before) && empty(after)
}

/// `value` under the field `name`: redacted whole when the name is a secret's, else with
/// its own secret fields redacted.
fn redact_field(name: &str, value: &Value) -> Value {
    if is_secret_field(name) && !value.is_null() {
        Value::String(REDACTED.to_owned())
    } else {
        redact(value)
    }
}

/// `value` with every secret field's value replaced by its SHA-256 digest, at every depth:
/// what an intent keeps of a document before a change, so that a change of a secret alone
/// is still seen (the digests differ) while the intent never holds the secret itself. The
/// record made from it redacts those fields like any other secret.
pub fn sealed(value: &Value) -> Value {
    match value {
        Value::Object(fields) => Value::Object(
            fields
                .iter()
                .map(|(name, v)| {
                    let v = if is_secret_field(name) && !v.is_null() {
                        let digest = Sha256::digest(v.to_string().as_bytes());
                        Value::String(format!("sha256:{}", hex_of(&digest)))
                    } else {
                        sealed(v)
                    };
                    (name.clone(), v)
                })
                .collect(),
        ),
        Value::Array(values) => Value::Array(values.iter().map(sealed).collect()),
        other => other.clone(),
    }
}

/// Lower-case hexadecimal of `bytes`.
fn hex_of(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// `value` with every secret field redacted, at every depth.
pub fn redact(value: &Value) -> Value {
    match value {
        Value::Object(fields) => Value::Object(
            fields
                .iter()
                .map(|(name, v)| (name.clone(), redact_field(name, v)))
                .collect(),
        ),
        Value::Array(values) => Value::Array(values.iter().map(redact).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn only_the_changed_fields_are_kept() {
        let before = json!({"name": "Sword", "price": 100, "tags": ["a"]});
        let after = json!({"name": "Sword", "price": 150, "new": true});
        let (old, new) = changed_fields(&before, &after);
        assert_eq!(old, json!({"price": 100, "tags": ["a"], "new": null}));
        assert_eq!(new, json!({"price": 150, "tags": null, "new": true}));
    }

    #[test]
    fn equal_documents_changed_nothing() {
        let doc = json!({"a": 1});
        let (old, new) = changed_fields(&doc, &doc);
        assert!(is_unchanged(&old, &new));
    }

    #[test]
    fn creation_and_deletion_keep_the_whole_object() {
        let doc = json!({"name": "Sword", "key_hash": "abc"});
        let (old, new) = changed_fields(&Value::Null, &doc);
        assert_eq!(old, Value::Null);
        assert_eq!(new, json!({"name": "Sword", "key_hash": REDACTED}));
        let (old, new) = changed_fields(&doc, &Value::Null);
        assert_eq!(old, json!({"name": "Sword", "key_hash": REDACTED}));
        assert_eq!(new, Value::Null);
    }

    #[test]
    fn secrets_are_redacted_at_every_depth_and_on_both_sides() {
        let before = json!({"google_play": {"push_token": "old-secret"}, "password_hash": "x"});
        let after = json!({"google_play": {"push_token": "new-secret"}, "password_hash": "y"});
        let (old, new) = changed_fields(&before, &after);
        let text = format!("{old}{new}");
        assert!(!text.contains("secret\""), "{text}");
        assert!(!text.contains("old-secret") && !text.contains("new-secret"));
        assert_eq!(old["password_hash"], json!(REDACTED));
        assert_eq!(new["google_play"]["push_token"], json!(REDACTED));
    }

    #[test]
    fn a_sealed_secret_is_a_digest_that_still_shows_its_change() {
        let before = sealed(&json!({"name": "k", "key_hash": "aaa", "nested": [{"token": "t1"}]}));
        let after = sealed(&json!({"name": "k", "key_hash": "bbb", "nested": [{"token": "t1"}]}));
        assert!(!before.to_string().contains("aaa") && !before.to_string().contains("t1"));
        let (old, new) = changed_fields(&before, &after);
        assert_eq!(old, json!({"key_hash": REDACTED}));
        assert_eq!(new, json!({"key_hash": REDACTED}));
    }

    #[test]
    fn ids_sort_as_times() {
        let early = entry_id(DateTime::from_timestamp(1_000, 0).expect("t"), Uuid::nil());
        let late = entry_id(DateTime::from_timestamp(20_000, 5).expect("t"), Uuid::max());
        assert!(early < late);
    }
}
