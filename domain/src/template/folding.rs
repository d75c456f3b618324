//! The strings a template builds, folded from its constants, so the secret scan reads what
//! the page would hold at run time and not only the source as written.
//!
//! The source scan ([`crate::secret_scan::scan`]) sees a key only when it is written in one
//! piece. Dart puts pieces together in many ways: adjacent literals (`'ab_live_sk_' 'rest'`),
//! `+`, the interpolation of a constant (`'${'ab_live_sk_'}rest'`), a `const` or `final`
//! local or field, a getter (or an argument-less method) returning a constant, an escape
//! (`\u005f`), a text method (`'AB'.toLowerCase()`). Folding puts the pieces back together as
//! Dart would, and [`secret_hits`] scans what it built.
//!
//! What cannot be known (a binding, a parameter, a widget call) folds to nothing; inside a
//! string it is a gap, so the known text on each side of it is still scanned
//! (`title + 'ab_live_sk_' + 'rest'`). Every expression is folded once and each largest
//! string it builds is scanned; a key met again (a constant used twice, or a key the source
//! scan already found) is reported once.
//!
//! The work is bounded whatever the template: each name is resolved once, in dependency
//! order on an explicit stack (a cycle folds to nothing, and a chain of a thousand names
//! does not deepen the call stack); expressions are only as deep as the parser allows; and a
//! string longer than [`MAX_FOLDED_BYTES`] or in more than [`MAX_SEGMENTS`] pieces is scanned
//! at once, then kept as its first and last [`WINDOW`] bytes: all that a key formed by a
//! later join can reach.

use std::collections::{HashMap, HashSet};

use super::ast::{Arg, Expr, ExprKind, Stmt, StrPart, Template};
use crate::secret_scan::{self, SecretHit};

/// Longest folded string kept whole, in bytes. A constant is copied and scanned at each
/// use, so this bounds the work of a template that uses one long constant thousands of
/// times; a longer string loses nothing, as it is scanned whole before it is cut.
pub const MAX_FOLDED_BYTES: usize = 512;
/// Most pieces (known runs and gaps) of a folded string kept whole, for the same reason.
pub const MAX_SEGMENTS: usize = 16;
/// Bytes kept at each end of a string once it is cut down: more than a key's longest prefix
/// that counts, its marker and the body characters that make it a key (16 + 9 + 16).
pub const WINDOW: usize = 64;

/// The widget table's text methods that fold on a constant (`toStringAsFixed` takes an
/// argument and formats a number, which never makes a key).
const TEXT_METHODS: &[&str] = &["toString", "toUpperCase", "toLowerCase", "trim"];

/// A piece of a folded string.
#[derive(Debug, Clone, PartialEq)]
enum Seg {
    /// Text folding knows.
    Known(String),
    /// Text it cannot know (a binding, a parameter, a call).
    Gap,
}

/// What folding knows of an expression's value.
#[derive(Debug, Clone, PartialEq)]
enum Value {
    /// A string: its pieces in order, no two known pieces side by side (`""` has none).
    Str(Vec<Seg>),
    /// An integer.
    Int(i64),
    /// A boolean.
    Bool(bool),
    /// `null`.
    Null,
}

impl Value {
    /// The value as Dart writes it into a string.
    fn into_segs(self) -> Vec<Seg> {
        match self {
            Self::Str(segs) => segs,
            Self::Int(i) => vec![Seg::Known(i.to_string())],
            Self::Bool(b) => vec![Seg::Known(b.to_string())],
            Self::Null => vec![Seg::Known("null".to_owned())],
        }
    }
}

/// Appends a piece, joining it to a known piece before it.
fn push_seg(segs: &mut Vec<Seg>, seg: Seg) {
    match (segs.last_mut(), seg) {
        (_, Seg::Known(text)) if text.is_empty() => {}
        (Some(Seg::Known(before)), Seg::Known(text)) => before.push_str(&text),
        (Some(Seg::Gap), Seg::Gap) => {}
        (_, seg) => segs.push(seg),
    }
}

/// The first `WINDOW` bytes of `text`, cut on a character boundary.
fn head(text: &str) -> String {
    let mut end = WINDOW.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text[..end].to_owned()
}

/// The last `WINDOW` bytes of `text`, cut on a character boundary.
fn tail(text: &str) -> String {
    let mut start = text.len().saturating_sub(WINDOW);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    text[start..].to_owned()
}

/// A text method applied to a folded value, when it folds.
fn text_method(name: &str, value: Value) -> Option<Value> {
    match (name, value) {
        ("toString", Value::Str(segs)) => Some(Value::Str(segs)),
        ("toString", other) => Some(Value::Str(other.into_segs())),
        ("toUpperCase" | "toLowerCase", Value::Str(segs)) => {
            let upper = name == "toUpperCase";
            let segs = segs
                .into_iter()
                .map(|s| match s {
                    Seg::Known(t) if upper => Seg::Known(t.to_uppercase()),
                    Seg::Known(t) => Seg::Known(t.to_lowercase()),
                    Seg::Gap => Seg::Gap,
                })
                .collect();
            Some(Value::Str(segs))
        }
        ("trim", Value::Str(mut segs)) => {
            if let Some(Seg::Known(first)) = segs.first_mut() {
                *first = first.trim_start().to_owned();
            }
            if let Some(Seg::Known(last)) = segs.last_mut() {
                *last = last.trim_end().to_owned();
            }
            segs.retain(|s| !matches!(s, Seg::Known(t) if t.is_empty()));
            Some(Value::Str(segs))
        }
        _ => None,
    }
}

/// Where a name inside an expression is looked up.
#[derive(Debug, Clone, Copy)]
enum Scope {
    /// A field's initialiser or a parameter's default: the class's members.
    Class(usize),
    /// A statement of a method: its parameters, the locals declared before the statement,
    /// then the class's members.
    Method {
        class: usize,
        method: usize,
        before: usize,
    },
}

impl Scope {
    fn class(self) -> usize {
        match self {
            Self::Class(class) | Self::Method { class, .. } => class,
        }
    }
}

/// Where a method's local is looked up: its class's index, the method's, and its name.
type LocalKey<'t> = (usize, usize, &'t str);

/// A local declared in a method: the index of its statement, and its declaration.
type Declared = (usize, usize);

/// How far the folding of one declaration (what a name can stand for) has come.
#[derive(Debug, Clone, Copy)]
enum Resolution {
    /// Not yet folded.
    Unseen,
    /// Its dependencies are being folded; met again, it is a cycle and folds to nothing.
    Waiting,
    /// Folded.
    Done,
}

/// The folding of one template.
struct Folder<'t> {
    tree: &'t Template,
    /// Class index by name.
    classes: HashMap<&'t str, usize>,
    /// Declaration of a class member (a field with a value, a getter or an argument-less
    /// method) by class and name.
    members: HashMap<(usize, &'t str), usize>,
    /// Declarations of a method's locals by class, method and name: the statement index of
    /// each and its declaration.
    locals: HashMap<LocalKey<'t>, Vec<Declared>>,
    /// Each declaration's expression and the scope its names are looked up in.
    decls: Vec<(&'t Expr, Scope)>,
    /// Each declaration's value, once resolved (`None` when it does not fold).
    values: Vec<Option<Value>>,
    /// The declarations' expressions, folded (and scanned) once, when names are resolved.
    declared: HashSet<*const Expr>,
    /// Keys already reported.
    seen: HashSet<String>,
    hits: Vec<SecretHit>,
}

/// Every key in the strings `tree` builds that the scan of `source` (the template as
/// written, which `tree` was parsed from) did not find, each once, with the line of the
/// expression that builds it.
pub fn secret_hits(tree: &Template, source: &str) -> Vec<SecretHit> {
    let mut folder = Folder::new(tree);
    folder.seen = secret_scan::scan_keys(source)
        .into_iter()
        .map(|(_, key)| key.to_owned())
        .collect();
    folder.resolve_names();
    folder.scan_roots();
    folder.hits
}

impl<'t> Folder<'t> {
    fn new(tree: &'t Template) -> Self {
        let mut folder = Self {
            tree,
            classes: HashMap::new(),
            members: HashMap::new(),
            locals: HashMap::new(),
            decls: Vec::new(),
            values: Vec::new(),
            declared: HashSet::new(),
            seen: HashSet::new(),
            hits: Vec::new(),
        };
        for (c, class) in tree.classes.iter().enumerate() {
            folder.classes.entry(class.name.as_str()).or_insert(c);
            for field in &class.fields {
                if let Some(init) = &field.init {
                    let id = folder.declare(init, Scope::Class(c));
                    folder.members.entry((c, field.name.as_str())).or_insert(id);
                }
            }
            for (m, method) in class.methods.iter().enumerate() {
                for (i, stmt) in method.body.iter().enumerate() {
                    let scope = Scope::Method {
                        class: c,
                        method: m,
                        before: i,
                    };
                    if let Stmt::Local { name, init, .. } = stmt {
                        let id = folder.declare(init, scope);
                        folder
                            .locals
                            .entry((c, m, name.as_str()))
                            .or_default()
                            .push((i, id));
                    }
                }
                let returned = method
                    .body
                    .iter()
                    .enumerate()
                    .rev()
                    .find_map(|(i, s)| match s {
                        Stmt::Return(e) => Some((i, e)),
                        Stmt::Local { .. } => None,
                    });
                if let (true, Some((i, e))) = (method.params.is_empty(), returned) {
                    let scope = Scope::Method {
                        class: c,
                        method: m,
                        before: i,
                    };
                    let id = folder.declare(e, scope);
                    folder
                        .members
                        .entry((c, method.name.as_str()))
                        .or_insert(id);
                }
            }
        }
        folder
    }

    fn declare(&mut self, e: &'t Expr, scope: Scope) -> usize {
        self.declared.insert(e as *const Expr);
        self.decls.push((e, scope));
        self.values.push(None);
        self.decls.len() - 1
    }

    /// The declaration a bare name stands for in `scope`, if it is one of the template's.
    fn resolve(&self, name: &str, scope: Scope) -> Option<usize> {
        if let Scope::Method {
            class,
            method,
            before,
        } = scope
        {
            let params = self
                .tree
                .classes
                .get(class)
                .and_then(|c| c.methods.get(method))
                .map(|m| m.params.as_slice())
                .unwrap_or_default();
            if params.iter().any(|p| p.name == name) {
                return None;
            }
            let local = self
                .locals
                .get(&(class, method, name))
                .and_then(|list| list.iter().rev().find(|(i, _)| *i < before));
            if let Some((_, id)) = local {
                return Some(*id);
            }
        }
        self.members.get(&(scope.class(), name)).copied()
    }

    /// The declaration an expression names: `k`, `this.k`, `Keys.k`, or any of them called
    /// with no arguments.
    fn named(&self, e: &Expr, scope: Scope) -> Option<usize> {
        match &e.kind {
            ExprKind::Ident(name) => self.resolve(name, scope),
            ExprKind::Member { target, name } => match &target.kind {
                ExprKind::Ident(t) if t == "this" => {
                    self.members.get(&(scope.class(), name.as_str())).copied()
                }
                ExprKind::Ident(t) => self
                    .classes
                    .get(t.as_str())
                    .and_then(|c| self.members.get(&(*c, name.as_str())))
                    .copied(),
                _ => None,
            },
            ExprKind::Call { callee, args } if args.is_empty() => self.named(callee, scope),
            _ => None,
        }
    }

    fn value_of(&self, id: usize) -> Option<Value> {
        self.values.get(id).cloned().flatten()
    }

    /// Folds every declaration once, each after the ones it names (depth first, on an
    /// explicit stack). A declaration met again while its own dependencies are folded is in
    /// a cycle: it is left out, and whatever names it folds to nothing.
    fn resolve_names(&mut self) {
        let mut state = vec![Resolution::Unseen; self.decls.len()];
        let mut stack: Vec<(usize, bool)> = Vec::new();
        for start in 0..self.decls.len() {
            stack.push((start, false));
            while let Some((id, ready)) = stack.pop() {
                let Some(&(e, scope)) = self.decls.get(id) else {
                    continue;
                };
                match (state.get(id), ready) {
                    (Some(Resolution::Done) | None, _) | (Some(Resolution::Waiting), false) => {}
                    (Some(Resolution::Waiting), true) => {
                        let value = self.fold(e, scope);
                        self.settle(value.as_ref(), e.line);
                        if let Some(slot) = self.values.get_mut(id) {
                            *slot = value;
                        }
                        state[id] = Resolution::Done;
                    }
                    (Some(Resolution::Unseen), _) => {
                        state[id] = Resolution::Waiting;
                        stack.push((id, true));
                        e.walk(&mut |x| {
                            if let Some(dep) = self.named(x, scope)
                                && matches!(state.get(dep), Some(Resolution::Unseen))
                            {
                                stack.push((dep, false));
                            }
                        });
                    }
                }
            }
        }
    }

    /// Folds, and scans, every expression of the template that is not a declaration (those
    /// were when names were resolved).
    fn scan_roots(&mut self) {
        let tree = self.tree;
        for (c, class) in tree.classes.iter().enumerate() {
            let defaults = class
                .constructors
                .iter()
                .flat_map(|k| &k.params)
                .chain(class.methods.iter().flat_map(|m| &m.params))
                .filter_map(|p| p.default.as_ref());
            let inits = class.fields.iter().filter_map(|f| f.init.as_ref());
            for e in inits.chain(defaults) {
                self.root(e, Scope::Class(c));
            }
            for (m, method) in class.methods.iter().enumerate() {
                for (i, stmt) in method.body.iter().enumerate() {
                    let e = match stmt {
                        Stmt::Local { init, .. } => init,
                        Stmt::Return(e) => e,
                    };
                    let scope = Scope::Method {
                        class: c,
                        method: m,
                        before: i,
                    };
                    self.root(e, scope);
                }
            }
        }
    }

    fn root(&mut self, e: &Expr, scope: Scope) {
        if self.declared.contains(&(e as *const Expr)) {
            return;
        }
        let value = self.fold(e, scope);
        self.settle(value.as_ref(), e.line);
    }

    /// Scans a value that goes no further (what its expression builds is complete).
    fn settle(&mut self, value: Option<&Value>, line: u32) {
        let Some(Value::Str(segs)) = value else {
            return;
        };
        for seg in segs {
            let Seg::Known(text) = seg else { continue };
            for (mut hit, key) in secret_scan::scan_keys(text) {
                if self.seen.insert(key.to_owned()) {
                    hit.line = line;
                    self.hits.push(hit);
                }
            }
        }
    }

    /// Keeps a folded string within bounds: one too long or in too many pieces is scanned
    /// now, then cut down to its two ends with a gap between them.
    fn bounded(&mut self, value: Value, line: u32) -> Value {
        let Value::Str(segs) = &value else {
            return value;
        };
        let bytes: usize = segs
            .iter()
            .map(|s| match s {
                Seg::Known(t) => t.len(),
                Seg::Gap => 0,
            })
            .sum();
        if bytes <= MAX_FOLDED_BYTES && segs.len() <= MAX_SEGMENTS {
            return value;
        }
        self.settle(Some(&value), line);
        let mut cut = Vec::with_capacity(3);
        if let Some(Seg::Known(first)) = segs.first() {
            push_seg(&mut cut, Seg::Known(head(first)));
        }
        push_seg(&mut cut, Seg::Gap);
        if let Some(Seg::Known(last)) = segs.last() {
            push_seg(&mut cut, Seg::Known(tail(last)));
        }
        Value::Str(cut)
    }

    /// What `e` folds to in `scope`. Every string built inside it that does not flow into
    /// its value is scanned here; the value itself is the caller's to scan.
    fn fold(&mut self, e: &Expr, scope: Scope) -> Option<Value> {
        let value = match &e.kind {
            ExprKind::Null => Some(Value::Null),
            ExprKind::Bool(b) => Some(Value::Bool(*b)),
            ExprKind::Int(i) => Some(Value::Int(*i)),
            ExprKind::Double(_) => None,
            ExprKind::Str(parts) => {
                let mut segs = Vec::new();
                for part in parts {
                    match part {
                        StrPart::Text(text) => push_seg(&mut segs, Seg::Known(text.clone())),
                        StrPart::Interp(inner) => match self.fold(inner, scope) {
                            Some(v) => v
                                .into_segs()
                                .into_iter()
                                .for_each(|s| push_seg(&mut segs, s)),
                            None => push_seg(&mut segs, Seg::Gap),
                        },
                    }
                }
                Some(Value::Str(segs))
            }
            ExprKind::Ident(_) => self.named(e, scope).and_then(|id| self.value_of(id)),
            ExprKind::Member { target, .. } => match self.named(e, scope) {
                Some(id) => self.value_of(id),
                None => {
                    let inner = self.fold(target, scope);
                    self.settle(inner.as_ref(), target.line);
                    None
                }
            },
            ExprKind::Cast { expr, .. } => self.fold(expr, scope),
            ExprKind::Unary { op, expr } => match (*op, self.fold(expr, scope)) {
                ("-", Some(Value::Int(i))) => i.checked_neg().map(Value::Int),
                ("!", Some(Value::Bool(b))) => Some(Value::Bool(!b)),
                (_, other) => {
                    self.settle(other.as_ref(), expr.line);
                    None
                }
            },
            ExprKind::Binary { op, lhs, rhs } => {
                let l = self.fold(lhs, scope);
                let r = self.fold(rhs, scope);
                self.binary(op, l, r, e.line)
            }
            ExprKind::Conditional {
                cond,
                then,
                otherwise,
            } => {
                let c = self.fold(cond, scope);
                let t = self.fold(then, scope);
                let o = self.fold(otherwise, scope);
                match c {
                    Some(Value::Bool(true)) => {
                        self.settle(o.as_ref(), otherwise.line);
                        t
                    }
                    Some(Value::Bool(false)) => {
                        self.settle(t.as_ref(), then.line);
                        o
                    }
                    other => {
                        self.settle(other.as_ref(), cond.line);
                        self.settle(t.as_ref(), then.line);
                        self.settle(o.as_ref(), otherwise.line);
                        None
                    }
                }
            }
            ExprKind::Call { callee, args } => self.call(e, callee, args, scope),
            ExprKind::Index { target, index } => {
                for inner in [target, index] {
                    let v = self.fold(inner, scope);
                    self.settle(v.as_ref(), inner.line);
                }
                None
            }
            ExprKind::List(items) => {
                for item in items {
                    let v = self.fold(item, scope);
                    self.settle(v.as_ref(), item.line);
                }
                None
            }
        };
        value.map(|v| self.bounded(v, e.line))
    }

    /// A binary operator on folded operands: `+` joins strings (a gap for an operand that
    /// does not fold) and adds integers; `??` picks its side when the left one is known.
    fn binary(&mut self, op: &str, l: Option<Value>, r: Option<Value>, line: u32) -> Option<Value> {
        let is_str = |v: &Option<Value>| matches!(v, Some(Value::Str(_)));
        // A string, or something not known (which, added to a string, is one).
        let joins = |v: &Option<Value>| matches!(v, None | Some(Value::Str(_)));
        match (op, l, r) {
            ("+", Some(Value::Int(a)), Some(Value::Int(b))) => a.checked_add(b).map(Value::Int),
            ("+", l, r) if (is_str(&l) || is_str(&r)) && joins(&l) && joins(&r) => {
                let mut segs = match l {
                    Some(Value::Str(segs)) => segs,
                    _ => vec![Seg::Gap],
                };
                let right = match r {
                    Some(Value::Str(segs)) => segs,
                    _ => vec![Seg::Gap],
                };
                right.into_iter().for_each(|s| push_seg(&mut segs, s));
                Some(Value::Str(segs))
            }
            ("??", Some(Value::Null), r) => r,
            ("??", Some(l), r) => {
                self.settle(r.as_ref(), line);
                Some(l)
            }
            (_, l, r) => {
                self.settle(l.as_ref(), line);
                self.settle(r.as_ref(), line);
                None
            }
        }
    }

    /// A call: a getter or method of the template called with no arguments, a text method
    /// on a folded value, or anything else (a widget), whose arguments are scanned.
    fn call(&mut self, e: &Expr, callee: &Expr, args: &[Arg], scope: Scope) -> Option<Value> {
        if args.is_empty() {
            if let Some(id) = self.named(e, scope) {
                return self.value_of(id);
            }
            if let ExprKind::Member { target, name } = &callee.kind
                && TEXT_METHODS.contains(&name.as_str())
            {
                let inner = self.fold(target, scope)?;
                let folded = text_method(name, inner.clone());
                if folded.is_none() {
                    self.settle(Some(&inner), target.line);
                }
                return folded;
            }
        }
        for arg in args {
            let v = self.fold(&arg.value, scope);
            self.settle(v.as_ref(), arg.value.line);
        }
        if let ExprKind::Member { target, .. } = &callee.kind {
            let v = self.fold(target, scope);
            self.settle(v.as_ref(), target.line);
        }
        None
    }
}
