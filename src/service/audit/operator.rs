//! The operator's billing settings in the audit trail: at every start, each setting that
//! differs from the last recorded configuration is recorded as a change by the operator.
//!
//! The deployment-wide settings (the default rate, the default contract fee, the plans and
//! their fees) are one object every studio reads; each studio listed in `billing.rates` or
//! `billing.contract_fees_usd` has its own object, recorded for that studio only, so no
//! studio reads another's terms. A studio dropped from the configuration is recorded with
//! its terms gone (`null`: the defaults apply again).

use std::collections::BTreeMap;

use offer_domain::audit::{Actor, ChangedBy, ObjectRef, Via};
use serde_json::{Value, json};

use super::{Audit, Watched, audited};
use crate::service::{ServiceResult, Services};
use crate::store::Collection;
use crate::store::codec::{decode, encode};

/// The last recorded configuration: `default`, and `studio:<id>` per studio.
fn recorded() -> Collection {
    Collection::global("operator_settings")
}

/// The id of a studio's own terms.
const STUDIO: &str = "studio:";

/// Records every setting that changed since the last start; how many objects changed.
pub async fn record_at_start(state: &Services) -> ServiceResult<usize> {
    let billing = &state.settings.billing;
    let mut wanted: BTreeMap<String, Value> = BTreeMap::new();
    let plans: Vec<Value> = state
        .plans
        .iter()
        .map(|p| {
            json!({"name": p.name, "max_monthly_players": p.max_monthly_players,
                   "base_fee_usd": p.base_fee_usd})
        })
        .collect();
    wanted.insert(
        "default".to_owned(),
        json!({"default_rate_pct": billing.default_rate_pct,
               "default_contract_fee_usd": billing.default_contract_fee_usd,
               "plans": plans}),
    );
    for studio in billing.rates.keys().chain(billing.contract_fees_usd.keys()) {
        wanted.insert(
            format!("{STUDIO}{studio}"),
            json!({"rate_pct": billing.rates.get(studio),
                   "contract_fee_usd": billing.contract_fees_usd.get(studio)}),
        );
    }
    let stored: BTreeMap<String, Value> = state
        .store
        .list(recorded())
        .await?
        .into_iter()
        .map(|(id, bytes)| Ok((id, decode::<Value>(&bytes)?)))
        .collect::<ServiceResult<_>>()?;
    for id in stored.keys().filter(|id| id.starts_with(STUDIO)) {
        wanted
            .entry(id.clone())
            .or_insert_with(|| json!({"rate_pct": null, "contract_fee_usd": null}));
    }
    let by = ChangedBy {
        actor: Actor::Operator("config".to_owned()),
        via: Via::Startup,
    };
    let mut changed = 0;
    for (id, doc) in wanted {
        if stored.get(&id) == Some(&doc) {
            continue;
        }
        let audit = Audit {
            studio_id: id.strip_prefix(STUDIO).map(str::to_owned),
            game_id: None,
            action: "operator_settings.change",
            object: ObjectRef::new("operator_settings", &id),
            watch: vec![Watched::new(recorded(), &id)],
        };
        let bytes = encode(&doc)?;
        audited(&*state.store, &by, audit, async || {
            Ok(state
                .store
                .put_all(recorded(), vec![(id.clone(), bytes)])
                .await?)
        })
        .await?;
        changed += 1;
    }
    Ok(changed)
}
