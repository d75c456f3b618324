//! The validator: every static gate a template and its bindings must pass before a draft
//! is worth previewing, each problem reported with a stable gate name, a message and, for
//! the template, its line.
//!
//! The template is lexed and parsed once; each gate runs on the tokens or the tree. Gates
//! that need a readable template are skipped when it cannot be read (too large, not lexable,
//! unbalanced, unparsable): their findings would only repeat the first problem. Blockers
//! make the page invalid; warnings do not.

use std::collections::{BTreeSet, HashSet};

use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

use super::ast::{Arg, Class, Expr, ExprKind, Stmt, Template};
use super::bindings::{Bindings, ItemField, Read, binding_root, classify};
use super::catalogue::{Catalogue, ItemLookup, ItemSummary};
use super::cost::estimated_steps;
use super::folding;
use super::forbidden::{self, Danger};
use super::gate::Gate;
use super::lexer::{check_balance, lex};
use super::limits::{MAX_EVAL_STEPS, MAX_FONT_SIZE};
use super::parser::parse_tokens;
use super::widgets::{Ctor, CtorSpec, METHODS, constant, constructor, is_constant_group};
use super::{MAX_BINDINGS_BYTES, MAX_TEMPLATE_BYTES};
use crate::secret_scan;

/// One problem: a blocker or a warning.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct Finding {
    /// Which gate.
    pub gate: Gate,
    /// What is wrong and, where it helps, how to fix it.
    pub message: String,
    /// 1-based template line, for findings in the template.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
}

/// The validator's answer.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, ToSchema)]
pub struct Validation {
    /// True when there are no blockers.
    pub valid: bool,
    /// Problems that make the page invalid.
    pub blockers: Vec<Finding>,
    /// Problems worth fixing that do not block.
    pub warnings: Vec<Finding>,
}

impl Validation {
    fn block(&mut self, gate: Gate, message: impl Into<String>, line: Option<u32>) {
        self.blockers.push(Finding {
            gate,
            message: message.into(),
            line,
        });
    }

    fn warn(&mut self, gate: Gate, message: impl Into<String>, line: Option<u32>) {
        self.warnings.push(Finding {
            gate,
            message: message.into(),
            line,
        });
    }
}

/// Runs every gate on `template` and `bindings`, looking bound items up in `catalogue`.
pub fn validate(template: &str, bindings: &Value, catalogue: &impl Catalogue) -> Validation {
    let mut v = Validation::default();
    if template.len() > MAX_TEMPLATE_BYTES {
        v.block(
            Gate::TemplateTooLarge,
            format!(
                "the template is {} bytes, over the {MAX_TEMPLATE_BYTES}-byte limit",
                template.len()
            ),
            None,
        );
    }
    let bound = check_bindings(bindings, &mut v);
    for hit in secret_scan::scan(template) {
        v.block(Gate::SecretPatternFound, hit.message(), Some(hit.line));
    }
    scan_binding_secrets(bindings, &mut v);
    let items = bound
        .as_ref()
        .map(|b| check_items(b, catalogue, &mut v))
        .unwrap_or_default();
    if template.len() <= MAX_TEMPLATE_BYTES
        && let Some(tree) = read_template(template, &mut v)
    {
        check_tree(&tree, bound.as_ref(), &items, &mut v);
        for hit in folding::secret_hits(&tree, template) {
            v.block(Gate::SecretPatternFound, hit.message(), Some(hit.line));
        }
    }
    v.valid = v.blockers.is_empty();
    v
}

/// Size and shape of the bindings; `None` when they cannot be used.
fn check_bindings(json: &Value, v: &mut Validation) -> Option<Bindings> {
    let size = serde_json::to_vec(json).map_or(usize::MAX, |b| b.len());
    if size > MAX_BINDINGS_BYTES {
        v.block(
            Gate::BindingsTooLarge,
            format!(
                "the bindings are {size} bytes of JSON, over the {MAX_BINDINGS_BYTES}-byte limit"
            ),
            None,
        );
        return None;
    }
    match Bindings::from_json(json) {
        Ok(b) => Some(b),
        Err(problems) => {
            for p in problems {
                v.block(Gate::BadBindings, p, None);
            }
            None
        }
    }
}

/// The secret scan over every string of the bindings, keys included, however nested.
fn scan_binding_secrets(json: &Value, v: &mut Validation) {
    let mut stack = vec![("".to_string(), json)];
    while let Some((path, value)) = stack.pop() {
        let mut report = |text: &str, what: &str| {
            for hit in secret_scan::scan(text) {
                v.block(
                    Gate::SecretPatternFound,
                    format!(
                        "{what} holds something shaped like {} (`{}_...`): remove it; keys are never part of a page",
                        hit.kind.describe(),
                        hit.prefix
                    ),
                    None,
                );
            }
        };
        match value {
            Value::String(s) => report(s, &format!("binding `{path}`")),
            Value::Array(a) => {
                for (i, x) in a.iter().enumerate() {
                    stack.push((format!("{path}[{i}]"), x));
                }
            }
            Value::Object(o) => {
                for (k, x) in o {
                    report(k, "a binding name");
                    let child = if path.is_empty() {
                        k.clone()
                    } else {
                        format!("{path}.{k}")
                    };
                    stack.push((child, x));
                }
            }
            _ => {}
        }
    }
}

/// Each bound item in the catalogue: its summary when live.
fn check_items(
    b: &Bindings,
    catalogue: &impl Catalogue,
    v: &mut Validation,
) -> Vec<Option<ItemSummary>> {
    b.items
        .iter()
        .map(|id| match catalogue.lookup(id) {
            ItemLookup::Live(s) => Some(s),
            ItemLookup::Deleted => {
                v.block(
                    Gate::DeletedItem,
                    format!("item `{id}` is deleted: bind a live item"),
                    None,
                );
                None
            }
            ItemLookup::Unknown => {
                v.block(
                    Gate::UnknownItem,
                    format!("no catalogue item has the id `{id}`"),
                    None,
                );
                None
            }
        })
        .collect()
}

/// Lexes, scans for forbidden APIs, checks delimiters and parses: the tree, or `None` with
/// the reason recorded.
fn read_template(template: &str, v: &mut Validation) -> Option<Template> {
    let tokens = match lex(template) {
        Ok(t) => t,
        Err(e) => {
            v.block(e.gate(), e.to_string(), Some(e.line()));
            return None;
        }
    };
    for api in forbidden::scan(&tokens) {
        let (gate, what) = match api.danger {
            Danger::Network => (Gate::NetworkCall, "reaches the network"),
            Danger::Sandbox => (Gate::ForbiddenApi, "leaves the widget sandbox"),
        };
        v.block(
            gate,
            format!("`{}` {what}: a page shows its bindings only", api.name),
            Some(api.line),
        );
    }
    let parsed = check_balance(&tokens).and_then(|()| parse_tokens(&tokens));
    match parsed {
        Ok(t) => Some(t),
        Err(e) => {
            v.block(e.gate(), e.to_string(), Some(e.line()));
            None
        }
    }
}

/// What the tree gates share while walking.
struct Walk<'a> {
    tree: &'a Template,
    bound: Option<&'a Bindings>,
    items: &'a [Option<ItemSummary>],
    /// Network and sandbox names already reported, not to be reported again as unknown.
    forbidden: HashSet<String>,
    used_values: BTreeSet<String>,
    used_items: BTreeSet<i64>,
    /// Some read was not a literal: usage cannot be told, so no unused warnings.
    dynamic_read: bool,
}

fn check_tree(
    tree: &Template,
    bound: Option<&Bindings>,
    items: &[Option<ItemSummary>],
    v: &mut Validation,
) {
    for import in &tree.imports {
        if let Some(reason) = forbidden::import_refusal(&import.uri) {
            v.block(Gate::ImportNotAllowed, reason, Some(import.line));
        }
    }
    check_entry(tree, v);
    check_steps(tree, v);
    let forbidden = v
        .blockers
        .iter()
        .filter(|f| matches!(f.gate, Gate::NetworkCall | Gate::ForbiddenApi))
        .filter_map(|f| f.message.split('`').nth(1).map(str::to_string))
        .collect();
    let mut w = Walk {
        tree,
        bound,
        items,
        forbidden,
        used_values: BTreeSet::new(),
        used_items: BTreeSet::new(),
        dynamic_read: false,
    };
    for class in &tree.classes {
        let mut exprs: Vec<&Expr> = Vec::new();
        exprs.extend(class.fields.iter().filter_map(|f| f.init.as_ref()));
        for c in &class.constructors {
            exprs.extend(c.params.iter().filter_map(|p| p.default.as_ref()));
        }
        for m in &class.methods {
            exprs.extend(m.params.iter().filter_map(|p| p.default.as_ref()));
            exprs.extend(m.body.iter().map(|s| match s {
                Stmt::Local { init, .. } => init,
                Stmt::Return(e) => e,
            }));
        }
        for e in exprs {
            w.expr(class, e, v);
        }
    }
    if let (Some(b), false) = (bound, w.dynamic_read) {
        for name in b.values.keys().filter(|k| !w.used_values.contains(*k)) {
            v.warn(
                Gate::UnusedBinding,
                format!("binding `{name}` is never read"),
                None,
            );
        }
        for (i, id) in b.items.iter().enumerate() {
            if !w.used_items.contains(&(i as i64)) {
                v.warn(
                    Gate::UnusedBinding,
                    format!("item `{id}` (items[{i}]) is bound but never shown"),
                    None,
                );
            }
        }
    }
}

/// Warns when the page would take more evaluation steps than a preview allows.
fn check_steps(tree: &Template, v: &mut Validation) {
    let steps = estimated_steps(tree);
    if steps > MAX_EVAL_STEPS {
        let line = tree.entry().and_then(|c| c.method("build")).map(|m| m.line);
        v.warn(
            Gate::EvaluationOverLimit,
            format!(
                "helper methods and widget classes call each other so often that the page \
                 takes about {steps} evaluation steps, over the {MAX_EVAL_STEPS} a preview \
                 allows: call each helper fewer times, or build a repeated part once in a \
                 local"
            ),
            line,
        );
    }
}

fn check_entry(tree: &Template, v: &mut Validation) {
    match tree.entry() {
        Some(class) => {
            let build = class.method("build");
            if build.and_then(|m| m.returned()).is_none() {
                v.block(
                    Gate::EntryWidgetMissing,
                    format!("`{}.build` returns nothing", class.name),
                    build.map(|m| m.line),
                );
            }
        }
        None => {
            let stateful = tree
                .classes
                .iter()
                .find(|c| c.extends.as_deref() == Some("StatefulWidget"));
            let (message, line) = match stateful {
                Some(c) => (
                    format!(
                        "`{}` is a StatefulWidget: a page is a StatelessWidget, its state comes from the bindings",
                        c.name
                    ),
                    Some(c.line),
                ),
                None => (
                    "no entry widget: a class extending StatelessWidget with a `build` method"
                        .to_string(),
                    None,
                ),
            };
            v.block(Gate::EntryWidgetMissing, message, line);
        }
    }
}

impl Walk<'_> {
    fn expr(&mut self, class: &Class, root: &Expr, v: &mut Validation) {
        let bindings_root = binding_root(class);
        let mut callees: HashSet<*const Expr> = HashSet::new();
        root.walk(&mut |e| {
            match &e.kind {
                ExprKind::Call { callee, args } => {
                    callees.insert(&**callee as *const Expr);
                    self.call(class, callee, args, e.line, bindings_root, v);
                }
                ExprKind::Member { .. } if !callees.contains(&(e as *const Expr)) => {
                    if let Some(name) = e.dotted_name() {
                        let group_known = name
                            .split_once('.')
                            .is_some_and(|(g, _)| is_constant_group(g));
                        if group_known
                            && constant(&name).is_none()
                            && !self.forbidden.contains(&name)
                        {
                            v.block(
                                Gate::UnknownWidget,
                                format!("`{name}` is not a constant of the widget table"),
                                Some(e.line),
                            );
                        }
                    }
                }
                _ => {}
            }
            if let Some(read) = classify(e, bindings_root) {
                self.read(read, e.line, v);
            }
        });
    }

    fn call(
        &mut self,
        class: &Class,
        callee: &Expr,
        args: &[Arg],
        line: u32,
        root: &str,
        v: &mut Validation,
    ) {
        let name = callee.dotted_name();
        if let Some(spec) = name.as_deref().and_then(constructor) {
            check_args(spec, args, line, v);
            check_font_size(spec, args, v);
            for arg in args.iter().filter(|a| a.name.as_deref() == Some("item")) {
                self.item_arg(spec, &arg.value, root, v);
            }
            return;
        }
        if let Some(other) = name.as_deref().and_then(|n| self.tree.class(n)) {
            let params = other
                .constructor()
                .map(|c| c.params.as_slice())
                .unwrap_or_default();
            for arg in args {
                if let Some(n) = &arg.name
                    && !params.iter().any(|p| p.named && &p.name == n)
                {
                    v.block(
                        Gate::UnknownArgument,
                        format!("`{}` takes no argument `{n}`", other.name),
                        Some(arg.value.line),
                    );
                }
            }
            for p in params.iter().filter(|p| p.named && p.required) {
                if !args
                    .iter()
                    .any(|a| a.name.as_deref() == Some(p.name.as_str()))
                {
                    v.block(
                        Gate::MissingArgument,
                        format!("`{}` needs the argument `{}`", other.name, p.name),
                        Some(line),
                    );
                }
            }
            return;
        }
        match &callee.kind {
            ExprKind::Ident(n) if class.method(n).is_some() => {}
            ExprKind::Member {
                target,
                name: method,
            } if METHODS.contains(&method.as_str()) && !starts_upper(target) => {}
            _ => {
                let shown = name.unwrap_or_else(|| "this call".into());
                let first = shown.split('.').next().unwrap_or_default();
                if !self.forbidden.contains(&shown)
                    && !self
                        .forbidden
                        .iter()
                        .any(|f| f.starts_with(first) && f.contains('.'))
                {
                    v.block(
                        Gate::UnknownWidget,
                        format!(
                            "`{shown}` is not in the widget table (nor a method of `{}` or a text method)",
                            class.name
                        ),
                        Some(line),
                    );
                }
            }
        }
    }

    /// `Image(item: ...)` and `OfferButton(item: ...)` take a bound item.
    fn item_arg(&mut self, spec: &CtorSpec, value: &Expr, root: &str, v: &mut Validation) {
        let ok = match classify(value, root) {
            Some(Read::Item(_)) => true,
            Some(_) => false,
            None => matches!(
                value.kind,
                ExprKind::Ident(_) | ExprKind::Member { .. } | ExprKind::Cast { .. }
            ),
        };
        if !ok {
            v.block(
                Gate::UnknownBinding,
                format!(
                    "`{}(item: ...)` takes a bound item, for example `{root}.items[0]`",
                    spec.name
                ),
                Some(value.line),
            );
        }
    }

    fn read(&mut self, read: Read, line: u32, v: &mut Validation) {
        let Some(b) = self.bound else {
            return;
        };
        match read {
            Read::Root | Read::Items => {}
            Read::Unsupported(why) => {
                self.dynamic_read = true;
                v.block(Gate::UnknownBinding, why, Some(line));
            }
            Read::Value(name) => {
                if b.values.contains_key(&name) {
                    self.used_values.insert(name);
                } else {
                    let known: Vec<&str> = b.values.keys().map(String::as_str).collect();
                    v.block(
                        Gate::UnknownBinding,
                        format!("no binding `{name}` (bound: {})", list_or_none(&known)),
                        Some(line),
                    );
                }
            }
            Read::Item(i) => {
                if i >= 0 && (i as usize) < b.items.len() {
                    self.used_items.insert(i);
                } else {
                    v.block(
                        Gate::UnknownBinding,
                        format!("items[{i}] is not bound: {} items are", b.items.len()),
                        Some(line),
                    );
                }
            }
            Read::ItemField(i, field) => match ItemField::parse(&field) {
                None => {
                    let known: Vec<&str> = super::bindings::ITEM_FIELDS
                        .iter()
                        .map(|(n, _)| *n)
                        .collect();
                    v.block(
                        Gate::UnknownItemField,
                        format!(
                            "an item has no field `{field}` (fields: {})",
                            known.join(", ")
                        ),
                        Some(line),
                    );
                }
                Some(f) => {
                    let summary = usize::try_from(i)
                        .ok()
                        .and_then(|i| self.items.get(i))
                        .and_then(Option::as_ref);
                    if let Some(s) = summary {
                        let empty = match f {
                            ItemField::Amount => s.amount.is_none(),
                            ItemField::Art => s.art.is_none(),
                            ItemField::Description => s.description.is_none(),
                            ItemField::Id | ItemField::Name | ItemField::Price => false,
                        };
                        if empty {
                            v.warn(
                                Gate::ItemFieldEmpty,
                                format!("items[{i}] (`{}`) has no {field}: the page shows nothing there", s.name),
                                Some(line),
                            );
                        }
                    }
                }
            },
        }
    }
}

/// Checks a table constructor's arguments: positional count, named ones known, required
/// ones present.
fn check_args(spec: &CtorSpec, args: &[Arg], line: u32, v: &mut Validation) {
    let positional = args.iter().filter(|a| a.name.is_none()).count();
    let want = spec.positional.len();
    if positional > want {
        v.block(
            Gate::UnknownArgument,
            format!(
                "`{}` takes {want} positional argument(s), got {positional}",
                spec.name
            ),
            Some(line),
        );
    } else if positional < want {
        v.block(
            Gate::MissingArgument,
            format!(
                "`{}` needs its positional argument(s): {}",
                spec.name,
                spec.positional.join(", ")
            ),
            Some(line),
        );
    }
    for arg in args {
        if let Some(n) = &arg.name
            && !spec.named.contains(&n.as_str())
        {
            v.block(
                Gate::UnknownArgument,
                format!(
                    "`{}` takes no argument `{n}` (it takes: {})",
                    spec.name,
                    list_or_none(spec.named)
                ),
                Some(arg.value.line),
            );
        }
    }
    for r in spec.required {
        if !args.iter().any(|a| a.name.as_deref() == Some(*r)) {
            v.block(
                Gate::MissingArgument,
                format!("`{}` needs the argument `{r}`", spec.name),
                Some(line),
            );
        }
    }
}

/// Warns about a literal `fontSize` of a `TextStyle` over the largest a preview renders.
fn check_font_size(spec: &CtorSpec, args: &[Arg], v: &mut Validation) {
    if spec.ctor != Ctor::TextStyle {
        return;
    }
    for arg in args
        .iter()
        .filter(|a| a.name.as_deref() == Some("fontSize"))
    {
        let size = match arg.value.kind {
            ExprKind::Int(i) => i as f64,
            ExprKind::Double(d) => d,
            _ => continue,
        };
        if size > f64::from(MAX_FONT_SIZE) {
            v.warn(
                Gate::FontSizeOverLimit,
                format!(
                    "fontSize {size} is over the largest a preview renders, {MAX_FONT_SIZE}: \
                     the preview fails"
                ),
                Some(arg.value.line),
            );
        }
    }
}

/// True for an identifier (or member chain) starting with a capital: a type, not a value.
fn starts_upper(e: &Expr) -> bool {
    e.dotted_name()
        .and_then(|n| n.chars().next())
        .is_some_and(char::is_uppercase)
}

fn list_or_none(names: &[&str]) -> String {
    if names.is_empty() {
        "none".into()
    } else {
        names.join(", ")
    }
}
