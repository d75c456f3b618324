//! Every validator gate with a template (or bindings) that passes it and one that fails it,
//! against a fixed catalogue: `gems_500` (live, with amount and art), `starter_pack` (live,
//! no amount, no art) and `old_pack` (deleted).

use offer_domain::template::catalogue::{Catalogue, ItemLookup, ItemSummary};
use offer_domain::template::{
    Finding, Gate, MAX_NESTING, MAX_NODES, MAX_TEMPLATE_BYTES, Validation, validate,
};
use serde_json::{Value, json};

const PAGE: &str = include_str!("fixtures/offer_page.dart");

fn catalogue() -> impl Catalogue {
    |id: &str| match id {
        "gems_500" => ItemLookup::Live(ItemSummary {
            name: "500 Gems".into(),
            price: "$4.99".into(),
            amount: Some(500),
            art: Some("a1b2c3d4e5f6a1b2c3d4e5f6".into()),
            description: None,
        }),
        "starter_pack" => ItemLookup::Live(ItemSummary {
            name: "Starter pack".into(),
            price: "$0.99".into(),
            amount: None,
            art: None,
            description: None,
        }),
        "old_pack" => ItemLookup::Deleted,
        _ => ItemLookup::Unknown,
    }
}

fn bindings() -> Value {
    json!({"items": ["gems_500"], "title": "Spring sale", "discount": 40})
}

fn check(template: &str, bindings: &Value) -> Validation {
    validate(template, bindings, &catalogue())
}

/// A page whose `build` returns `body` (a widget expression), with the usual imports.
fn page(body: &str) -> String {
    format!(
        "import 'package:flutter/material.dart';\n\
         class P extends StatelessWidget {{\n\
         const P({{super.key, required this.offer}});\n\
         final OfferData offer;\n\
         @override\n\
         Widget build(BuildContext context) {{\n\
         return {body};\n\
         }}\n\
         }}\n"
    )
}

fn gates(v: &Validation) -> Vec<Gate> {
    v.blockers.iter().map(|b| b.gate).collect()
}

/// The gate fails with exactly one blocker of `gate`, at `line` when given.
fn fails(v: &Validation, gate: Gate, line: Option<u32>) {
    assert!(!v.valid, "{v:#?}");
    let hits: Vec<_> = v.blockers.iter().filter(|b| b.gate == gate).collect();
    assert!(!hits.is_empty(), "no {gate:?} in {v:#?}");
    if line.is_some() {
        assert_eq!(hits[0].line, line, "{v:#?}");
    }
}

fn passes(v: &Validation) {
    assert!(v.valid, "{v:#?}");
    assert!(v.blockers.is_empty());
}

#[test]
fn the_fixture_page_is_valid_and_serialises_in_the_wire_shape() {
    let v = check(PAGE, &bindings());
    passes(&v);
    assert!(v.warnings.is_empty(), "{:#?}", v.warnings);
    assert_eq!(
        serde_json::to_value(&v).expect("test input"),
        json!({"valid": true, "blockers": [], "warnings": []})
    );
    let bad = check(&page("Foo()"), &bindings());
    let json = serde_json::to_value(&bad).expect("test input");
    assert_eq!(json["blockers"][0]["gate"], "unknown_widget");
    assert_eq!(json["blockers"][0]["line"], 7);
}

#[test]
fn template_size() {
    let padding = format!("\n// {}\n", "x".repeat(200));
    let mut big = PAGE.to_string();
    while big.len() + padding.len() <= MAX_TEMPLATE_BYTES {
        big.push_str(&padding);
    }
    passes(&check(&big, &bindings()));
    big.push_str(&padding);
    fails(&check(&big, &bindings()), Gate::TemplateTooLarge, None);
}

#[test]
fn bindings_size() {
    let fits = json!({"items": ["gems_500"], "title": "Spring sale", "discount": 40, "note": "n".repeat(900)});
    assert!(!gates(&check(PAGE, &fits)).contains(&Gate::BindingsTooLarge));
    let mut map = serde_json::Map::new();
    for i in 0..40 {
        map.insert(format!("k{i}"), json!("v".repeat(900)));
    }
    fails(
        &check(PAGE, &Value::Object(map)),
        Gate::BindingsTooLarge,
        None,
    );
}

#[test]
fn nesting_depth() {
    let nested = |n: usize| {
        let mut e = "SizedBox()".to_string();
        for _ in 0..n {
            e = format!("Center(child: {e})");
        }
        e
    };
    passes(&check(&page(&nested(30)), &json!({})));
    fails(
        &check(&page(&nested(MAX_NESTING)), &json!({})),
        Gate::NestingTooDeep,
        Some(7),
    );
}

#[test]
fn node_count() {
    let many = format!(
        "Column(children: [{}])",
        "SizedBox(), ".repeat(MAX_NODES / 4)
    );
    passes(&check(&page(&many), &json!({})));
    let too_many = format!("Column(children: [{}])", "0,".repeat(MAX_NODES));
    fails(
        &check(&page(&too_many), &json!({})),
        Gate::TooManyNodes,
        Some(7),
    );
}

#[test]
fn syntax() {
    passes(&check(&page("Text('a' 'b')"), &json!({})));
    fails(
        &check(&page("Text('a';)"), &json!({})),
        Gate::SyntaxError,
        Some(7),
    );
    fails(
        &check("import 'x'\nclass", &json!({})),
        Gate::SyntaxError,
        Some(2),
    );
    fails(
        &check(&page("Text('unterminated)"), &json!({})),
        Gate::SyntaxError,
        Some(7),
    );
}

#[test]
fn balanced_delimiters() {
    passes(&check(&page("Column(children: [Text('(')])"), &json!({})));
    let unclosed = page("Column(\nchildren: [\nText('a'),\n)");
    let v = check(&unclosed, &json!({}));
    fails(&v, Gate::UnbalancedDelimiters, Some(8));
    assert!(v.blockers[0].message.contains("line 8"), "{v:#?}");
}

#[test]
fn imports() {
    for uri in [
        "package:flutter/material.dart",
        "package:flutter/widgets.dart",
        "package:offer_sdk/offer_sdk.dart",
    ] {
        passes(&check(
            &format!("import '{uri}' as m;\n{}", page("SizedBox()")),
            &json!({}),
        ));
    }
    for uri in [
        "dart:io",
        "dart:ffi",
        "dart:isolate",
        "dart:html",
        "dart:convert",
        "package:http/http.dart",
        "package:dio/dio.dart",
        "package:web_socket_channel/io.dart",
        "package:flutter/services.dart",
        "package:shared_preferences/shared_preferences.dart",
    ] {
        let src = format!(
            "import 'package:flutter/material.dart';\nimport '{uri}' show X;\n{}",
            page("SizedBox()")
        );
        fails(&check(&src, &json!({})), Gate::ImportNotAllowed, Some(2));
    }
}

#[test]
fn network_calls() {
    passes(&check(
        &page("Image(item: offer.items[0])"),
        &bindings_one(),
    ));
    for call in [
        "Image.network('https://cdn.example/a.png')",
        "Image(image: NetworkImage('https://x'))",
        "Text('${HttpClient()}')",
        "Text(http.get(Uri.parse('https://x')))",
        "Text(WebSocket.connect('wss://x'))",
    ] {
        fails(&check(&page(call), &json!({})), Gate::NetworkCall, Some(7));
    }
}

fn bindings_one() -> Value {
    json!({"items": ["gems_500"]})
}

#[test]
fn sandbox_apis() {
    passes(&check(
        &page("Text('File and Process are words')"),
        &json!({}),
    ));
    for call in [
        "Text(MethodChannel('pay').name)",
        "Text(Isolate.current)",
        "Text(File('x').path)",
    ] {
        fails(&check(&page(call), &json!({})), Gate::ForbiddenApi, Some(7));
    }
}

#[test]
fn entry_widget() {
    passes(&check(&page("SizedBox()"), &json!({})));
    let no_build = "class P extends StatelessWidget {\n final OfferData offer;\n}\n";
    fails(&check(no_build, &json!({})), Gate::EntryWidgetMissing, None);
    let stateful =
        "class P extends StatefulWidget {\n Widget build(BuildContext c) => SizedBox();\n}\n";
    fails(
        &check(stateful, &json!({})),
        Gate::EntryWidgetMissing,
        Some(1),
    );
    fails(
        &check("import 'package:flutter/material.dart';\n", &json!({})),
        Gate::EntryWidgetMissing,
        None,
    );
}

#[test]
fn known_widgets() {
    passes(&check(
        &page("Center(child: Text('a'.toUpperCase()))"),
        &json!({}),
    ));
    fails(
        &check(&page("ListView(children: [])"), &json!({})),
        Gate::UnknownWidget,
        Some(7),
    );
    fails(
        &check(
            &page("Text('a', style: TextStyle(color: Colors.chartreuse))"),
            &json!({}),
        ),
        Gate::UnknownWidget,
        Some(7),
    );
    fails(
        &check(&page("Text('a'.runes())"), &json!({})),
        Gate::UnknownWidget,
        Some(7),
    );
}

#[test]
fn helper_methods_and_classes_are_known() {
    let src = "import 'package:flutter/material.dart';\n\
        class Badge extends StatelessWidget {\n\
          const Badge({super.key, required this.label});\n\
          final String label;\n\
          @override\n\
          Widget build(BuildContext context) => Text(label);\n\
        }\n\
        class P extends StatelessWidget {\n\
          const P({super.key, required this.offer});\n\
          final OfferData offer;\n\
          Widget _title(String t) => Text(t);\n\
          @override\n\
          Widget build(BuildContext context) {\n\
            return Column(children: [_title('x'), Badge(label: 'y')]);\n\
          }\n\
        }\n";
    passes(&check(src, &json!({})));
    let wrong = src.replace("Badge(label: 'y')", "Badge(text: 'y')");
    let v = check(&wrong, &json!({}));
    fails(&v, Gate::UnknownArgument, Some(14));
    fails(&v, Gate::MissingArgument, Some(14));
}

#[test]
fn known_arguments() {
    passes(&check(
        &page("Padding(padding: EdgeInsets.all(8), child: Text('a', maxLines: 2))"),
        &json!({}),
    ));
    fails(
        &check(&page("Text('a', fontSize: 12)"), &json!({})),
        Gate::UnknownArgument,
        Some(7),
    );
    fails(
        &check(&page("Text('a', 'b')"), &json!({})),
        Gate::UnknownArgument,
        Some(7),
    );
    fails(
        &check(&page("Padding(child: Text('a'))"), &json!({})),
        Gate::MissingArgument,
        Some(7),
    );
    fails(
        &check(&page("Text()"), &json!({})),
        Gate::MissingArgument,
        Some(7),
    );
}

#[test]
fn bindings_shape() {
    passes(&check(
        &page("Text(offer['title'])"),
        &json!({"title": "Sale"}),
    ));
    for bad in [
        json!([]),
        json!({"items": "gems_500"}),
        json!({"items": [1]}),
        json!({"flag": true}),
    ] {
        fails(&check(&page("SizedBox()"), &bad), Gate::BadBindings, None);
    }
}

#[test]
fn bound_values_exist() {
    passes(&check(
        &page("Text(offer.title as String)"),
        &json!({"title": "Sale"}),
    ));
    fails(
        &check(&page("Text(offer['subtitle'])"), &json!({"title": "Sale"})),
        Gate::UnknownBinding,
        Some(7),
    );
    fails(
        &check(&page("Image(item: offer.items[1])"), &bindings_one()),
        Gate::UnknownBinding,
        Some(7),
    );
    fails(
        &check(&page("Text(offer[key])"), &json!({})),
        Gate::UnknownBinding,
        Some(7),
    );
    fails(
        &check(&page("Image(item: offer['title'])"), &json!({"title": "x"})),
        Gate::UnknownBinding,
        Some(7),
    );
}

#[test]
fn bound_items_exist_and_are_live() {
    passes(&check(
        &page("OfferButton(item: offer.items[0])"),
        &bindings_one(),
    ));
    fails(
        &check(
            &page("OfferButton(item: offer.items[0])"),
            &json!({"items": ["nope"]}),
        ),
        Gate::UnknownItem,
        None,
    );
    fails(
        &check(
            &page("OfferButton(item: offer.items[0])"),
            &json!({"items": ["old_pack"]}),
        ),
        Gate::DeletedItem,
        None,
    );
}

#[test]
fn item_fields_are_known() {
    passes(&check(
        &page("Text(offer.items[0]['price'])"),
        &bindings_one(),
    ));
    fails(
        &check(&page("Text(offer.items[0].cost)"), &bindings_one()),
        Gate::UnknownItemField,
        Some(7),
    );
}

#[test]
fn secrets_in_the_template_and_the_bindings() {
    passes(&check(
        &page("Text('svc_live_sk_<KEY>')"),
        &json!({"note": "svc_test_sk_xxxxxxxxxxxxxxxxxxxx"}),
    ));
    let key = "acme_live_sk_9fK2mQ7xLp3ZtR8vWb1NcY6hJd4sGe0a";
    let v = check(&page(&format!("Text('{key}')")), &json!({}));
    fails(&v, Gate::SecretPatternFound, Some(7));
    assert!(
        !v.blockers[0].message.contains("9fK2mQ7x"),
        "the key is never echoed"
    );
    let v = check(
        &page("SizedBox()"),
        &json!({"note": "other_auth_Zq8Wm2Lx5Vb7Nk3Jp9Rt6Yh4"}),
    );
    fails(&v, Gate::SecretPatternFound, None);
    assert!(v.blockers[0].message.contains("note"));
}

#[test]
fn warnings_do_not_block() {
    let v = check(
        &page("Text(offer.items[0].description)"),
        &json!({"items": ["starter_pack"], "unused": 1}),
    );
    passes(&v);
    let w: Vec<Gate> = v.warnings.iter().map(|f| f.gate).collect();
    assert_eq!(w, vec![Gate::ItemFieldEmpty, Gate::UnusedBinding]);
}

/// The warnings of one gate.
fn warned(v: &Validation, gate: Gate) -> Vec<&Finding> {
    v.warnings.iter().filter(|f| f.gate == gate).collect()
}

#[test]
fn render_limits_the_tree_shows_warn_without_blocking() {
    let big = check(
        &page("Text('W', style: TextStyle(fontSize: 20000))"),
        &bindings(),
    );
    passes(&big);
    let hits = warned(&big, Gate::FontSizeOverLimit);
    assert_eq!(hits.len(), 1, "{big:#?}");
    assert_eq!(hits[0].line, Some(7));
    assert!(hits[0].message.contains("20000") && hits[0].message.contains("512"));
    let largest = check(
        &page("Text('W', style: TextStyle(fontSize: 512.0))"),
        &bindings(),
    );
    assert!(
        warned(&largest, Gate::FontSizeOverLimit).is_empty(),
        "{largest:#?}"
    );

    // Methods calling each other ten ways, seven deep: ten million calls.
    let mut fan_out = String::from(
        "class F extends StatelessWidget {\n  final OfferData offer;\n  Widget build(BuildContext context) => m1();\n",
    );
    for level in 1..7 {
        let calls = vec![format!("m{}()", level + 1); 10].join(", ");
        fan_out.push_str(&format!(
            "  Widget m{level}() => Column(children: [{calls}]);\n"
        ));
    }
    fan_out.push_str("  Widget m7() => Text(offer['title']);\n}\n");
    let v = check(&fan_out, &bindings());
    passes(&v);
    let hits = warned(&v, Gate::EvaluationOverLimit);
    assert_eq!(hits.len(), 1, "{v:#?}");
    assert_eq!(hits[0].line, Some(3));
    assert!(hits[0].message.contains("200000"), "{}", hits[0].message);
    // The fixture page is far from either limit.
    let fixture = check(PAGE, &bindings());
    assert!(warned(&fixture, Gate::EvaluationOverLimit).is_empty());
    assert!(warned(&fixture, Gate::FontSizeOverLimit).is_empty());
}

#[test]
fn all_problems_are_reported_at_once() {
    let src = format!(
        "import 'dart:io';\n{}",
        page("ListView(foo: offer['nope'])")
    );
    let v = check(&src, &json!({"items": ["old_pack"]}));
    let g = gates(&v);
    for gate in [
        Gate::ImportNotAllowed,
        Gate::UnknownWidget,
        Gate::UnknownBinding,
        Gate::DeletedItem,
    ] {
        assert!(g.contains(&gate), "{gate:?} missing in {v:#?}");
    }
}
