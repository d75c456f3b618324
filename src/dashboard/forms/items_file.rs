//! Reads an uploaded catalogue file into the entries of a bulk upsert: JSON (an array of items,
//! or `{"items": [...]}` as the REST bulk route takes) or CSV (a header row naming the item
//! fields, then one item a row; empty cells are left out, quoted cells may hold commas; the
//! store products are the columns `store_products.app_store` and
//! `store_products.google_play`). Every entry is read on its own, so one answer reports every
//! unreadable row with its position, as the service reports every invalid one.

use offer_domain::catalogue::ItemInput;
use offer_domain::validation::FieldError;
use serde_json::{Map, Value};

use crate::service::game::items::ItemEntry;

/// CSV columns whose cells are numbers.
const NUMBER_COLUMNS: [&str; 4] = ["price_usd", "price_cents", "quantity", "value_override_usd"];
/// CSV columns whose cells are `true` or `false`.
const BOOL_COLUMNS: [&str; 3] = ["is_consumable", "fallback_eligible", "is_loot_box"];

/// The entries of a file; `Err` when the file as a whole does not read.
pub fn read(name: &str, bytes: &[u8]) -> Result<Vec<ItemEntry>, FieldError> {
    let text = std::str::from_utf8(bytes)
        .map_err(|_| FieldError::new("file", "the file is not UTF-8 text"))?;
    let looks_json =
        name.to_ascii_lowercase().ends_with(".json") || text.trim_start().starts_with(['[', '{']);
    if looks_json {
        read_json(text)
    } else {
        read_csv(text)
    }
}

fn entry(value: Value, row: usize) -> ItemEntry {
    serde_json::from_value::<ItemInput>(value)
        .map_err(|e| vec![FieldError::new("items", e.to_string()).at(row)])
}

fn read_json(text: &str) -> Result<Vec<ItemEntry>, FieldError> {
    let value: Value = serde_json::from_str(text)
        .map_err(|e| FieldError::new("file", format!("malformed JSON: {e}")))?;
    let list = match value {
        Value::Array(list) => list,
        Value::Object(mut obj) => match obj.remove("items") {
            Some(Value::Array(list)) => list,
            _ => {
                return Err(FieldError::new(
                    "file",
                    "a JSON object must hold an `items` array",
                ));
            }
        },
        _ => {
            return Err(FieldError::new(
                "file",
                "a JSON array of items, or {\"items\": [...]}",
            ));
        }
    };
    Ok(list
        .into_iter()
        .enumerate()
        .map(|(i, v)| entry(v, i))
        .collect())
}

/// Splits one CSV line into cells; a quoted cell may hold commas and doubled quotes.
fn cells(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cell = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                cell.push('"');
                chars.next();
            }
            ('"', _) => quoted = !quoted,
            (',', false) => out.push(std::mem::take(&mut cell)),
            _ => cell.push(c),
        }
    }
    out.push(cell);
    out
}

fn read_csv(text: &str) -> Result<Vec<ItemEntry>, FieldError> {
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let header: Vec<String> = lines
        .next()
        .map(|l| cells(l).into_iter().map(|h| h.trim().to_owned()).collect())
        .ok_or_else(|| FieldError::new("file", "the CSV file is empty: a header row first"))?;
    Ok(lines
        .enumerate()
        .map(|(row, line)| {
            let mut obj = Map::new();
            for (name, cell) in header.iter().zip(cells(line)) {
                let cell = cell.trim();
                if cell.is_empty() {
                    continue;
                }
                let value = if NUMBER_COLUMNS.contains(&name.as_str()) {
                    match cell.parse::<serde_json::Number>() {
                        Ok(n) => Value::Number(n),
                        Err(_) => {
                            return Err(vec![FieldError::new(name.as_str(), "a number").at(row)]);
                        }
                    }
                } else if BOOL_COLUMNS.contains(&name.as_str()) {
                    match cell {
                        "true" => Value::Bool(true),
                        "false" => Value::Bool(false),
                        _ => {
                            return Err(vec![
                                FieldError::new(name.as_str(), "true or false").at(row),
                            ]);
                        }
                    }
                } else {
                    Value::String(cell.to_owned())
                };
                // `store_products.app_store` and `store_products.google_play` fill the one
                // object the item takes.
                if let Some(store) = name.strip_prefix("store_products.") {
                    let products = obj
                        .entry("store_products")
                        .or_insert_with(|| Value::Object(Map::new()));
                    if let Value::Object(products) = products {
                        products.insert(store.to_owned(), value);
                    }
                    continue;
                }
                obj.insert(name.clone(), value);
            }
            entry(Value::Object(obj), row)
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_rows_read_as_items_and_bad_cells_name_their_row() {
        let csv = "item_id,item_name,category,price_usd,description,store_products.app_store\n\
                   sword,Sword,equipment,1.99,\"sharp, shiny\",com.game.sword\n\
                   axe,Axe,equipment,cheap,,\n";
        let entries = read("items.csv", csv.as_bytes()).expect("reads");
        assert_eq!(entries.len(), 2);
        let sword = entries[0].as_ref().expect("first row reads");
        assert_eq!(sword.item_id, "sword");
        assert_eq!(sword.description.as_deref(), Some("sharp, shiny"));
        assert_eq!(
            sword.store_products.app_store.as_deref(),
            Some("com.game.sword")
        );
        let errors = entries[1].as_ref().expect_err("second row refused");
        assert_eq!(errors[0].field, "price_usd");
        assert_eq!(errors[0].index, Some(1));
    }

    #[test]
    fn json_reads_as_an_array_or_an_items_object() {
        let one = r#"[{"item_id":"a","item_name":"A","category":"cosmetic","price_usd":1}]"#;
        assert_eq!(read("x.json", one.as_bytes()).expect("array").len(), 1);
        let wrapped = format!("{{\"items\": {one}}}");
        assert_eq!(read("x.json", wrapped.as_bytes()).expect("object").len(), 1);
        assert!(read("x.json", b"{\"nope\": 1}").is_err());
    }
}
