//! A static estimate of how many evaluation steps a render of a template takes, so the
//! validator can warn before a preview fails at the step limit
//! ([`MAX_EVAL_STEPS`](super::limits::MAX_EVAL_STEPS)).
//!
//! It follows the renderer's evaluation: the entry widget's `build`, each expression one
//! step, each call of a helper method or of a widget class of the template one step plus
//! that method's (or class's fields, constructor defaults and `build`) own steps, one level
//! deeper, and nothing past [`MAX_CALL_DEPTH`]. Both branches
//! of a conditional are counted, so the estimate is an upper bound of the expressions a
//! render evaluates. Methods that call each other many ways multiply: ten ways seven deep
//! is ten million calls, though no call is deeper than seven.

use std::collections::HashMap;

use super::ast::{Class, Expr, ExprKind, Stmt, Template};
use super::limits::MAX_CALL_DEPTH;
use super::widgets::constructor;

/// Estimated evaluation steps of a render of `tree`, saturating; 0 without an entry widget.
pub fn estimated_steps(tree: &Template) -> u64 {
    let Some(entry) = tree.entry() else {
        return 0;
    };
    let mut estimate = Estimate {
        tree,
        memo: HashMap::new(),
    };
    estimate.method(entry, "build", 0)
}

/// The walk, with the cost of each (class, method, depth) remembered: a method called from
/// many places is costed once per depth.
struct Estimate<'a> {
    tree: &'a Template,
    memo: HashMap<(&'a str, &'a str, usize), u64>,
}

impl<'a> Estimate<'a> {
    /// Steps of calling `class.name` at `depth`: its parameters' defaults and its body.
    fn method(&mut self, class: &'a Class, name: &'a str, depth: usize) -> u64 {
        let Some(method) = class.methods.iter().find(|m| m.name == name) else {
            return 0;
        };
        if let Some(&known) = self.memo.get(&(class.name.as_str(), name, depth)) {
            return known;
        }
        let defaults = method.params.iter().filter_map(|p| p.default.as_ref());
        let body = method.body.iter().map(|s| match s {
            Stmt::Local { init, .. } => init,
            Stmt::Return(e) => e,
        });
        let exprs: Vec<&'a Expr> = defaults.chain(body).collect();
        let total = exprs.into_iter().fold(0u64, |sum, e| {
            sum.saturating_add(self.expr(class, e, depth))
        });
        self.memo.insert((class.name.as_str(), name, depth), total);
        total
    }

    /// Steps of instantiating widget class `class` at `depth`: its fields' initialisers,
    /// its constructor's defaults and its `build`.
    fn instantiate(&mut self, class: &'a Class, depth: usize) -> u64 {
        let fields = class.fields.iter().filter_map(|f| f.init.as_ref());
        let defaults = class
            .constructor()
            .into_iter()
            .flat_map(|c| c.params.iter().filter_map(|p| p.default.as_ref()));
        let exprs: Vec<&'a Expr> = fields.chain(defaults).collect();
        let own = exprs.into_iter().fold(0u64, |sum, e| {
            sum.saturating_add(self.expr(class, e, depth))
        });
        own.saturating_add(self.method(class, "build", depth))
    }

    /// Steps of evaluating `root` in a method of `class` running at `depth`: one per
    /// expression, and what each call of the template's own methods and classes costs.
    fn expr(&mut self, class: &'a Class, root: &'a Expr, depth: usize) -> u64 {
        let mut nodes = 0u64;
        let mut calls: Vec<&'a Expr> = Vec::new();
        root.walk(&mut |e| {
            nodes += 1;
            if let ExprKind::Call { callee, .. } = &e.kind {
                calls.push(&**callee);
            }
        });
        let mut total = nodes;
        if depth >= MAX_CALL_DEPTH {
            return total;
        }
        for callee in calls {
            let name = callee.dotted_name();
            if name.as_deref().and_then(constructor).is_some() {
                continue;
            }
            let cost = match (
                name.as_deref().and_then(|n| self.tree.class(n)),
                &callee.kind,
            ) {
                (Some(other), _) => self.instantiate(other, depth + 1),
                (None, ExprKind::Ident(method)) => self.method(class, method, depth + 1),
                _ => 0,
            };
            total = total.saturating_add(cost.saturating_add(1));
        }
        total
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::template::parse;
    use crate::testing::fan_out_page;

    fn estimate(src: &str) -> u64 {
        estimated_steps(&parse(src).expect("parses"))
    }

    #[test]
    fn fan_out_multiplies_and_the_call_depth_limit_ends_self_calls() {
        let small = estimate(&fan_out_page(3, 4));
        assert!((27..2_000).contains(&small), "{small}");
        let huge = estimate(&fan_out_page(10, 7));
        assert!(huge > 1_000_000, "{huge}");
        // A class that builds itself ends at the depth limit: a few steps per level.
        let recursive = estimate(
            "class R extends StatelessWidget {\n  Widget build(BuildContext c) => Column(children: [R(), R()]);\n}\n",
        );
        assert!(recursive > 500 && recursive < 10_000, "{recursive}");
        assert_eq!(estimate("class N { }\n"), 0);
    }
}
