//! The secret scan of the strings a template builds: a key split in any of the ways Dart joins
//! strings (adjacent literals, `+`, interpolation of a constant, const and final locals and
//! fields, getters, escapes, text methods, around a binding's gap) is found by the validator,
//! once, at the line that builds it, and never echoed; the folded look-alikes of
//! `testdata/secret_scan_folded_near_misses.json` still pass; hostile shapes (cycles, long
//! chains, strings doubled past any size) end with a bounded amount of work.

use offer_domain::secret_scan::KeyKind;
use offer_domain::template::catalogue::{Catalogue, ItemLookup};
use offer_domain::template::folding::secret_hits;
use offer_domain::template::{Gate, Validation, parse, validate};
use serde_json::json;

const PREFIX: &str = "sk9";
const BODY: &str = "Q2x7Rr0aZ81bKp4mW3nVt6yEu5sD";

/// Look-alikes written as Dart expressions: folded, none is a key.
const FOLDED_NEAR_MISSES: &str = include_str!("../testdata/secret_scan_folded_near_misses.json");

/// A catalogue with no items: these pages bind none.
fn no_items() -> impl Catalogue {
    |_: &str| ItemLookup::Unknown
}

/// A page whose class holds `members` and whose `build` runs `body` (locals, then a return).
fn page(members: &str, body: &str) -> String {
    format!(
        "import 'package:flutter/widgets.dart';\n\nclass KeyPage extends StatelessWidget {{\n  const KeyPage({{super.key}});\n{members}\n  @override\n  Widget build(BuildContext context) {{\n{body}\n  }}\n}}\n"
    )
}

/// A page showing `expr` in a `Text`.
fn showing(expr: &str) -> String {
    page("", &format!("    return Text({expr});"))
}

fn check(template: &str) -> Validation {
    validate(
        template,
        &json!({"items": [], "title": "Spring"}),
        &no_items(),
    )
}

fn secret_findings(v: &Validation) -> Vec<&offer_domain::template::Finding> {
    v.blockers
        .iter()
        .filter(|b| b.gate == Gate::SecretPatternFound)
        .collect()
}

/// Each way of building the key `sk9_live_sk_<BODY>` without writing it in one piece.
fn bypasses() -> Vec<(&'static str, String)> {
    let key = format!("{PREFIX}_live_sk_{BODY}");
    vec![
        (
            "adjacent literals",
            showing(&format!("'{PREFIX}_live_sk_' '{BODY}'")),
        ),
        ("plus", showing(&format!("'{PREFIX}_live_sk_' + '{BODY}'"))),
        (
            "plus in pieces",
            showing(&format!("'{PREFIX}' + '_' + 'live_sk' + '_{BODY}'")),
        ),
        (
            "interpolation of a constant",
            showing(&format!("'${{'{PREFIX}_live_sk_'}}{BODY}'")),
        ),
        (
            "nested interpolation",
            showing(&format!("'{PREFIX}_${{'live_${{'sk'}}'}}_{BODY}'")),
        ),
        (
            "const local",
            page(
                "",
                &format!("    const p = '{PREFIX}_live_sk_';\n    return Text(p + '{BODY}');"),
            ),
        ),
        (
            "final locals in a chain",
            page(
                "",
                &format!(
                    "    final a = '{PREFIX}';\n    final b = '$a' '_live_sk_';\n    final String c = b + '{BODY}';\n    return Text(c);"
                ),
            ),
        ),
        (
            "static const field",
            page(
                &format!("  static const String prefix = '{PREFIX}_live_sk_';"),
                &format!("    return Text(prefix + '{BODY}');"),
            ),
        ),
        (
            "final field through this",
            page(
                &format!("  final prefix = '{PREFIX}_live_sk_';"),
                &format!("    return Text('${{this.prefix}}{BODY}');"),
            ),
        ),
        (
            "arrow getter",
            page(
                &format!("  String get k => '{PREFIX}_live_sk_';"),
                &format!("    return Text(k + '{BODY}');"),
            ),
        ),
        (
            "block getter",
            page(
                &format!(
                    "  String get k {{\n    final head = '{PREFIX}_live';\n    return head + '_sk_';\n  }}"
                ),
                &format!("    return Text('${{k}}{BODY}');"),
            ),
        ),
        (
            "argument-less method",
            page(
                &format!("  String k() => '{PREFIX}_live_sk_';"),
                &format!("    return Text(k() + '{BODY}');"),
            ),
        ),
        (
            "another class's constant",
            format!(
                "{}\nclass Keys {{\n  static const live = '{PREFIX}_live_sk_';\n}}\n",
                showing(&format!("Keys.live + '{BODY}'"))
            ),
        ),
        (
            "escape",
            showing(&format!("'{PREFIX}\\u005flive_sk_{BODY}'")),
        ),
        (
            "text method",
            showing(&format!(
                "'{}_LIVE_SK_'.toLowerCase() + '{BODY}'",
                PREFIX.to_uppercase()
            )),
        ),
        (
            "beside a binding",
            showing(&format!(
                "(offer['title'] as String) + '{PREFIX}_live_sk_' + '{BODY}'"
            )),
        ),
        (
            "a constant condition",
            showing(&format!("true ? '{PREFIX}_live_sk_' + '{BODY}' : 'none'")),
        ),
        ("the key as written too", showing(&format!("'{key}'"))),
    ]
}

#[test]
fn every_bypass_is_found_once_without_echoing_the_key() {
    for (name, template) in bypasses() {
        let v = check(&template);
        let found = secret_findings(&v);
        assert_eq!(found.len(), 1, "{name}: {:?}\n{template}", v.blockers);
        assert!(!v.valid, "{name}");
        assert!(found[0].message.contains("a production SDK key"), "{name}");
        assert!(found[0].message.contains(PREFIX), "{name}");
        assert!(
            !found[0].message.contains(BODY),
            "{name}: the body is never shown"
        );
        // Nothing else blocks: the key alone makes these pages invalid.
        assert_eq!(v.blockers.len(), 1, "{name}: {:?}", v.blockers);
    }
}

#[test]
fn a_hit_names_the_line_that_builds_the_key() {
    let template = page(
        "  static const p = 'ab_auth_';",
        &format!("    final shown = 'x';\n    return Text(p + '{BODY}' + shown);"),
    );
    let tree = parse(&template).expect("a page");
    let hits = secret_hits(&tree, &template);
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert_eq!(hits[0].kind, KeyKind::Authoring);
    assert_eq!(hits[0].prefix, "ab");
    let line = template
        .lines()
        .position(|l| l.contains("return Text"))
        .expect("the return");
    assert_eq!(hits[0].line as usize, line + 1);
}

#[test]
fn two_keys_are_two_hits_and_one_key_used_twice_is_one() {
    let template = page(
        &format!("  static const k = 'ab_test_sk_' '{BODY}';"),
        &format!(
            "    return Column(children: [Text(k), Text(k + '!'), Text('cd_test_sk_' '{BODY}')]);"
        ),
    );
    let v = check(&template);
    let prefixes: Vec<bool> = secret_findings(&v)
        .iter()
        .map(|f| f.message.contains("`ab_"))
        .collect();
    assert_eq!(prefixes, [true, false], "{:?}", v.blockers);
}

#[test]
fn folded_near_misses_are_not_keys() {
    let exprs: Vec<String> = serde_json::from_str(FOLDED_NEAR_MISSES).expect("a list of strings");
    assert!(exprs.len() > 10);
    for expr in exprs {
        let template = showing(&expr);
        let v = check(&template);
        assert!(v.valid, "{expr}: {:?}", v.blockers);
    }
}

#[test]
fn a_cycle_of_constants_folds_to_nothing() {
    let template = page(
        "  static const a = b + 'x';\n  static const b = a + 'y';\n  String get c => c;",
        &format!("    return Text(a + b + c + 'ab_live_sk_' + '{BODY}');"),
    );
    let tree = parse(&template).expect("a page");
    // The key beside the cycle is still found: the cycle is a gap.
    assert_eq!(secret_hits(&tree, &template).len(), 1);
}

#[test]
fn a_key_after_a_string_doubled_past_every_bound_is_found() {
    // 40 doublings would be a terabyte; folding keeps the ends of what it cannot keep whole.
    let mut locals = String::from("    final d0 = 'abc';\n");
    for i in 1..=40 {
        locals.push_str(&format!("    final d{i} = d{} + d{};\n", i - 1, i - 1));
    }
    let after = page(
        "",
        &format!("{locals}    return Text(d40 + 'ab_live_sk_' + '{BODY}');"),
    );
    let before = page(
        "",
        &format!("{locals}    return Text('ab_live_sk_' + ('{BODY}' + d40));"),
    );
    for template in [after, before] {
        let tree = parse(&template).expect("a page");
        assert_eq!(secret_hits(&tree, &template).len(), 1);
    }
}

#[test]
fn a_long_chain_of_names_is_resolved_without_recursion() {
    // Each local names the one before: 3000 deep, more than a call stack of folds would take.
    let mut locals = String::from("    final n0 = 'ab_live_sk_';\n");
    for i in 1..=3000 {
        locals.push_str(&format!("    final n{i} = n{};\n", i - 1));
    }
    let template = page("", &format!("{locals}    return Text(n3000 + '{BODY}');"));
    let tree = parse(&template).expect("a page");
    assert_eq!(secret_hits(&tree, &template).len(), 1);
}
