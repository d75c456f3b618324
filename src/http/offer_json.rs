//! The JSON text of a served offer (`POST /v1/sdk/offers/next`), written field by field in
//! its fixed shape: the same bytes serde's derive writes for [`ServedOffer`], without its
//! generic machinery. Items come from the game's pre-rendered records (the same JSON the
//! catalogue returns), so no item is serialised per request, and `expires_at` goes through
//! the decision record's timestamp formatter instead of chrono's `fmt` path.

use offer_actors::game::ItemJson;
use offer_domain::offer::ServedOffer;

use offer_domain::timestamp;

/// Room for the fixed fields (two UUIDs, the numbers, the timestamp, a variant name).
const FIXED_ROOM: usize = 256;
/// Room per item: a rendered item record is a few hundred bytes, so the buffer is usually
/// allocated once without looking each item up twice; a larger one grows it.
const ITEM_ROOM: usize = 384;

/// The offer as JSON bytes, field for field what serde's derive writes for it. Numbers go
/// through serde_json, so a float that is not finite is `null` as before.
pub fn write(rendered: &ItemJson, offer: &ServedOffer) -> serde_json::Result<Vec<u8>> {
    let mut out = Vec::with_capacity(FIXED_ROOM + ITEM_ROOM * offer.items.len());
    out.extend_from_slice(b"{\"offer_id\":\"");
    out.extend_from_slice(
        offer
            .offer_id
            .hyphenated()
            .encode_lower(&mut uuid::Uuid::encode_buffer())
            .as_bytes(),
    );
    out.extend_from_slice(b"\",\"fallback_level\":");
    serde_json::to_writer(&mut out, &offer.fallback_level)?;
    out.extend_from_slice(b",\"items\":[");
    for (i, item) in offer.items.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        match rendered.get(&item.item_id) {
            Some(json) => out.extend_from_slice(json.get().as_bytes()),
            None => serde_json::to_writer(&mut out, item.as_ref())?,
        }
    }
    out.extend_from_slice(b"],\"price_usd\":");
    serde_json::to_writer(&mut out, &offer.price_usd)?;
    out.extend_from_slice(b",\"price_cents\":");
    serde_json::to_writer(&mut out, &offer.price_cents)?;
    out.extend_from_slice(b",\"expires_at\":");
    timestamp::serialize(
        &offer.expires_at,
        &mut serde_json::Serializer::new(&mut out),
    )?;
    if let Some(experiment) = &offer.experiment {
        out.extend_from_slice(b",\"experiment\":");
        serde_json::to_writer(&mut out, experiment)?;
    }
    out.push(b'}');
    Ok(out)
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;
    use std::sync::Arc;

    use chrono::{DateTime, TimeZone, Utc};
    use offer_domain::catalogue::Item;
    use offer_domain::category::Category;
    use offer_domain::offer::ExperimentRef;
    use offer_domain::testing;
    use serde::Serialize;
    use serde_json::value::RawValue;
    use uuid::Uuid;

    use super::*;

    /// What serde's derive writes for the same answer (the shape the handler wrote before).
    fn derived(rendered: &ItemJson, offer: &ServedOffer) -> Vec<u8> {
        #[derive(Serialize)]
        struct Body<'a> {
            offer_id: Uuid,
            fallback_level: u8,
            items: Vec<ItemRecord<'a>>,
            price_usd: f64,
            price_cents: i64,
            expires_at: DateTime<Utc>,
            #[serde(skip_serializing_if = "Option::is_none")]
            experiment: Option<&'a ExperimentRef>,
        }
        #[derive(Serialize)]
        #[serde(untagged)]
        enum ItemRecord<'a> {
            Rendered(&'a RawValue),
            Live(&'a Item),
        }
        let body = Body {
            offer_id: offer.offer_id,
            fallback_level: offer.fallback_level,
            items: offer
                .items
                .iter()
                .map(|item| match rendered.get(&item.item_id) {
                    Some(json) => ItemRecord::Rendered(json),
                    None => ItemRecord::Live(item),
                })
                .collect(),
            price_usd: offer.price_usd,
            price_cents: offer.price_cents,
            expires_at: offer.expires_at,
            experiment: offer.experiment.as_ref(),
        };
        serde_json::to_vec(&body).expect("serialises")
    }

    fn rendered_of(items: &[&Item]) -> ItemJson {
        items
            .iter()
            .map(|item| {
                let text = serde_json::to_string(item).expect("item");
                (
                    item.item_id.clone(),
                    RawValue::from_string(text).expect("raw"),
                )
            })
            .collect::<HashMap<_, _>>()
    }

    #[test]
    fn writes_the_bytes_serde_writes() {
        let mut gems = testing::item("gem_pack", Category::Currency, 499, 6.25);
        gems.quantity = Some(500);
        gems.currency_id = Some("gems".into());
        gems.description = Some("A \"big\" pack\nof gems — ✨".into());
        let mut sword = testing::item("iron_sword", Category::Equipment, 1999, 25.0);
        sword.value_override_usd = Some(30.5);
        sword.image_url = Some("https://cdn.example/a/b.png?x=1&y=2".into());
        let potion = testing::item("potion", Category::Consumable, 99, 1.1);
        // Rendered: the gems and the sword; the potion is written live.
        let rendered = rendered_of(&[&gems, &sword]);
        let items: Vec<Arc<Item>> = [gems, sword, potion].into_iter().map(Arc::new).collect();
        let base = Utc
            .with_ymd_and_hms(2026, 11, 24, 18, 5, 9)
            .single()
            .expect("valid");
        let experiment = ExperimentRef {
            experiment_id: Uuid::new_v4(),
            variant: "price_\"b\"".into(),
        };
        let mut cases = Vec::new();
        for (price_cents, price_usd) in [
            (2597, 25.97),
            (100, 1.0),
            (0, 0.0),
            (333, 10.0 / 3.0),
            (1, 0.01),
            (123_456_789, 1_234_567.89),
        ] {
            for nanos in [0, 120_000_000, 123_456_000, 999_999_999] {
                for experiment in [None, Some(experiment.clone())] {
                    for take in [0, 1, 3] {
                        cases.push(ServedOffer {
                            offer_id: Uuid::new_v4(),
                            fallback_level: 4,
                            items: items[..take].to_vec(),
                            price_usd,
                            price_cents,
                            expires_at: base + chrono::Duration::nanoseconds(nanos),
                            experiment: experiment.clone(),
                        });
                    }
                }
            }
        }
        cases.push(ServedOffer {
            offer_id: Uuid::nil(),
            fallback_level: 1,
            items: vec![items[2].clone(), items[0].clone()],
            price_usd: f64::NAN,
            price_cents: -5,
            expires_at: Utc::now(),
            experiment: None,
        });
        for offer in cases {
            let fast = write(&rendered, &offer).expect("writes");
            assert_eq!(
                String::from_utf8(fast).expect("utf-8"),
                String::from_utf8(derived(&rendered, &offer)).expect("utf-8")
            );
        }
    }
}
