//! Evaluates a template's tree into a [`Widget`] tree: bindings reads, constants, string
//! interpolation, the text methods, locals, helper methods and the template's own widget
//! classes. Evaluation is total: what cannot be evaluated is `null`, and a widget made of
//! nulls draws as nothing. Only the budget stops it: every expression evaluated and call
//! made is a step of the [`Meter`], every text and list made and every value copied out of
//! a variable is charged with its size before it is made, and a copied value nested deeper
//! than the budget's widget depth is refused.

use std::collections::HashMap;
use std::rc::Rc;

use offer_domain::template::ast::{Arg, Class, Expr, ExprKind, Stmt, StrPart, Template};
use offer_domain::template::bindings::{
    BindingValue, Bindings, ItemField, Read, binding_root, classify,
};
use offer_domain::template::limits::MAX_CALL_DEPTH;
use offer_domain::template::widgets::{
    BoxFit, Constant, CrossAxisAlignment, Ctor, MainAxisAlignment, TextAlign, constant, constructor,
};

use crate::BoundItem;
use crate::budget::Meter;
use crate::error::RenderError;
use crate::widget::{Axis, Insets, Style, Widget};

/// The result of evaluating: a value, or the budget's refusal.
type Eval<T = Value> = Result<T, RenderError>;

/// Default colour of an `OfferButton`.
const BUTTON_COLOR: u32 = 0xFF4C_AF50;

/// A value during evaluation.
#[derive(Debug, Clone, PartialEq, Default)]
enum Value {
    #[default]
    Null,
    Bool(bool),
    Num(f64),
    Text(String),
    Color(u32),
    Const(Constant),
    Insets(Insets),
    Radius(f32),
    Style(Style),
    Decoration {
        color: Option<u32>,
        radius: f32,
    },
    Item(usize),
    List(Vec<Value>),
    Widget(Widget),
}

impl Value {
    /// The value as text, taking a text's own string.
    fn into_display(self) -> String {
        match self {
            Self::Text(t) => t,
            other => other.display(),
        }
    }

    /// The value as text.
    fn display(&self) -> String {
        match self {
            Self::Text(t) => t.clone(),
            Self::Num(n) => BindingValue::Number(*n).display(),
            Self::Bool(b) => b.to_string(),
            _ => String::new(),
        }
    }

    /// Bytes `display` makes.
    fn display_len(&self) -> usize {
        match self {
            Self::Text(t) => t.len(),
            // A number is at most a few hundred digits (1e308 is written out in full).
            Self::Num(_) | Self::Bool(_) => 400,
            _ => 0,
        }
    }

    fn num(&self) -> Option<f32> {
        match self {
            Self::Num(n) => Some(*n as f32),
            _ => None,
        }
    }

    fn color(&self) -> Option<u32> {
        match self {
            Self::Color(c) | Self::Const(Constant::Color(c)) => Some(*c),
            _ => None,
        }
    }

    fn truthy(&self) -> bool {
        matches!(self, Self::Bool(true))
    }

    fn widget(self) -> Widget {
        match self {
            Self::Widget(w) => w,
            Self::Text(t) => Widget::Text {
                text: t,
                style: Style::default(),
                align: TextAlign::Left,
                max_lines: None,
            },
            _ => Widget::Empty,
        }
    }
}

/// Evaluates the entry widget's `build` under `meter`.
pub fn evaluate(
    tree: &Template,
    bindings: &Bindings,
    items: &[BoundItem],
    meter: &Meter,
) -> Result<Widget, RenderError> {
    let entry = tree.entry().ok_or(RenderError::NoEntryWidget)?;
    let ev = Evaluator {
        tree,
        bindings,
        items,
        meter,
    };
    let build = entry.method("build").ok_or(RenderError::NoEntryWidget)?;
    let mut scope = Scope {
        class: entry,
        root: binding_root(entry),
        fields: Rc::default(),
        vars: HashMap::new(),
        depth: 0,
    };
    Ok(ev.body(&build.body, &mut scope)?.widget())
}

struct Evaluator<'a> {
    tree: &'a Template,
    bindings: &'a Bindings,
    items: &'a [BoundItem],
    meter: &'a Meter,
}

/// What a method body sees: its class's fields (shared by every method of one instance)
/// and its own parameters and locals.
struct Scope<'a> {
    class: &'a Class,
    root: &'a str,
    fields: Rc<HashMap<String, Value>>,
    vars: HashMap<String, Value>,
    depth: usize,
}

impl Scope<'_> {
    fn lookup(&self, name: &str) -> Option<&Value> {
        self.vars.get(name).or_else(|| self.fields.get(name))
    }
}

impl<'a> Evaluator<'a> {
    /// Runs a method body: its locals, then its `return`.
    fn body(&self, body: &[Stmt], scope: &mut Scope<'a>) -> Eval {
        for stmt in body {
            match stmt {
                Stmt::Local { name, init, .. } => {
                    let v = self.eval(init, scope)?;
                    scope.vars.insert(name.clone(), v);
                }
                Stmt::Return(e) => return self.eval(e, scope),
            }
        }
        Ok(Value::Null)
    }

    /// A text value of `len` bytes about to be made.
    fn text(&self, len: usize) -> Eval<()> {
        self.meter.alloc(u64::try_from(len).ok(), "text")
    }

    /// A copy of `v` about to be made: a step and its bytes per node, refused when it
    /// nests deeper than the budget allows.
    fn copy(&self, v: &Value, depth: usize) -> Eval<()> {
        self.meter.depth(depth)?;
        self.meter.steps(1)?;
        match v {
            Value::Text(t) => self.text(t.len()),
            Value::List(items) => {
                self.meter.alloc_of::<Value>(items.len(), "a list")?;
                items.iter().try_for_each(|i| self.copy(i, depth + 1))
            }
            Value::Widget(w) => self.copy_widget(w, depth),
            _ => Ok(()),
        }
    }

    fn copy_widget(&self, w: &Widget, depth: usize) -> Eval<()> {
        self.meter.depth(depth)?;
        self.meter.steps(1)?;
        self.meter.alloc_of::<Widget>(1, "a widget")?;
        self.text(w.text_len())?;
        w.children()
            .iter()
            .try_for_each(|c| self.copy_widget(c, depth + 1))
    }

    /// Evaluates one expression, a step and a level of nesting of the meter.
    fn eval(&self, e: &Expr, scope: &Scope<'a>) -> Eval {
        self.meter.steps(1)?;
        self.meter.enter()?;
        let value = self.eval_nested(e, scope)?;
        self.meter.leave();
        Ok(value)
    }

    fn eval_nested(&self, e: &Expr, scope: &Scope<'a>) -> Eval {
        if let Some(read) = classify(e, scope.root) {
            return self.read(read);
        }
        Ok(match &e.kind {
            ExprKind::Null => Value::Null,
            ExprKind::Bool(b) => Value::Bool(*b),
            ExprKind::Int(i) => Value::Num(*i as f64),
            ExprKind::Double(d) => Value::Num(*d),
            ExprKind::Str(parts) => {
                let mut s = String::new();
                for part in parts {
                    match part {
                        StrPart::Text(t) => {
                            self.text(t.len())?;
                            s.push_str(t);
                        }
                        StrPart::Interp(inner) => {
                            let v = self.eval(inner, scope)?;
                            self.text(v.display_len())?;
                            s.push_str(&v.into_display());
                        }
                    }
                }
                Value::Text(s)
            }
            ExprKind::Ident(name) => match scope.lookup(name) {
                Some(v) => {
                    self.copy(v, 0)?;
                    v.clone()
                }
                None => Value::Null,
            },
            ExprKind::Member { target, name } => {
                if let Some(c) = e.dotted_name().and_then(|n| constant(&n)) {
                    return Ok(Value::Const(c));
                }
                match self.eval(target, scope)? {
                    Value::Item(i) => match ItemField::parse(name) {
                        Some(f) => self.field(i, f)?,
                        None => Value::Null,
                    },
                    Value::Text(t) if name == "length" => Value::Num(t.chars().count() as f64),
                    _ => Value::Null,
                }
            }
            ExprKind::Index { target, index } => {
                match (self.eval(target, scope)?, self.eval(index, scope)?) {
                    (Value::List(mut items), Value::Num(i))
                        if i >= 0.0 && (i as usize) < items.len() =>
                    {
                        items.swap_remove(i as usize)
                    }
                    _ => Value::Null,
                }
            }
            ExprKind::Call { callee, args } => self.call(callee, args, scope)?,
            ExprKind::List(items) => {
                self.meter.alloc_of::<Value>(items.len(), "a list")?;
                Value::List(
                    items
                        .iter()
                        .map(|i| self.eval(i, scope))
                        .collect::<Eval<_>>()?,
                )
            }
            ExprKind::Cast { expr, .. } => self.eval(expr, scope)?,
            ExprKind::Unary { op, expr } => match (*op, self.eval(expr, scope)?) {
                ("-", Value::Num(n)) => Value::Num(-n),
                ("!", v) => Value::Bool(!v.truthy()),
                _ => Value::Null,
            },
            ExprKind::Binary { op, lhs, rhs } => {
                let l = self.eval(lhs, scope)?;
                if *op == "??" {
                    return if l == Value::Null {
                        self.eval(rhs, scope)
                    } else {
                        Ok(l)
                    };
                }
                let r = self.eval(rhs, scope)?;
                if *op == "+" && (matches!(l, Value::Text(_)) || matches!(r, Value::Text(_))) {
                    self.text(l.display_len().saturating_add(r.display_len()))?;
                }
                binary(op, l, r)
            }
            ExprKind::Conditional {
                cond,
                then,
                otherwise,
            } => {
                if self.eval(cond, scope)?.truthy() {
                    self.eval(then, scope)?
                } else {
                    self.eval(otherwise, scope)?
                }
            }
        })
    }

    fn read(&self, read: Read) -> Eval {
        Ok(match read {
            Read::Value(name) => match self.bindings.values.get(&name) {
                Some(BindingValue::Text(t)) => {
                    self.text(t.len())?;
                    Value::Text(t.clone())
                }
                Some(BindingValue::Number(n)) => Value::Num(*n),
                None => Value::Null,
            },
            Read::Item(i) => usize::try_from(i)
                .ok()
                .filter(|i| *i < self.items.len())
                .map_or(Value::Null, Value::Item),
            Read::ItemField(i, f) => {
                let item = usize::try_from(i).ok().filter(|i| *i < self.items.len());
                match (item, ItemField::parse(&f)) {
                    (Some(i), Some(f)) => self.field(i, f)?,
                    _ => Value::Null,
                }
            }
            Read::Root | Read::Items | Read::Unsupported(_) => Value::Null,
        })
    }

    fn field(&self, i: usize, f: ItemField) -> Eval {
        let Some(item) = self.items.get(i) else {
            return Ok(Value::Null);
        };
        let s = &item.summary;
        let text = match f {
            ItemField::Id => self.bindings.items.get(i),
            ItemField::Name => Some(&s.name),
            ItemField::Price => Some(&s.price),
            ItemField::Amount => return Ok(s.amount.map_or(Value::Null, |a| Value::Num(a as f64))),
            ItemField::Art => s.art.as_ref(),
            ItemField::Description => s.description.as_ref(),
        };
        Ok(match text {
            Some(t) => {
                self.text(t.len())?;
                Value::Text(t.clone())
            }
            None => Value::Null,
        })
    }

    fn call(&self, callee: &Expr, args: &[Arg], scope: &Scope<'a>) -> Eval {
        self.meter.steps(1)?;
        let name = callee.dotted_name();
        if let Some(spec) = name.as_deref().and_then(constructor) {
            let positional: Vec<Value> = args
                .iter()
                .filter(|a| a.name.is_none())
                .map(|a| self.eval(&a.value, scope))
                .collect::<Eval<_>>()?;
            let mut named = HashMap::new();
            for a in args {
                if let Some(n) = a.name.as_deref() {
                    named.insert(n, self.eval(&a.value, scope)?);
                }
            }
            let built = self.build(spec.ctor, positional, &mut named);
            if let Value::Widget(w) = &built {
                self.meter.alloc_of::<Widget>(1, "a widget")?;
                self.text(w.text_len())?;
            }
            return Ok(built);
        }
        if scope.depth >= MAX_CALL_DEPTH {
            return Ok(Value::Null);
        }
        if let Some(class) = name.as_deref().and_then(|n| self.tree.class(n)) {
            return self.instantiate(class, args, scope);
        }
        match &callee.kind {
            ExprKind::Ident(method) => match scope.class.method(method) {
                Some(m) => {
                    let mut inner = Scope {
                        class: scope.class,
                        root: scope.root,
                        fields: scope.fields.clone(),
                        vars: HashMap::new(),
                        depth: scope.depth + 1,
                    };
                    self.bind_params(&m.params, args, scope, &mut inner)?;
                    self.body(&m.body, &mut inner)
                }
                None => Ok(Value::Null),
            },
            ExprKind::Member { target, name } => {
                let v = self.eval(target, scope)?;
                let arg = match args.first() {
                    Some(a) => Some(self.eval(&a.value, scope)?),
                    None => None,
                };
                if let Value::Text(t) = &v {
                    // A text method makes at most three bytes of each one (upper case).
                    self.text(t.len().saturating_mul(3))?;
                }
                Ok(text_method(name, &v, arg))
            }
            _ => Ok(Value::Null),
        }
    }

    /// A widget class of the template: its fields from the arguments, then its `build`.
    fn instantiate(&self, class: &'a Class, args: &[Arg], scope: &Scope<'a>) -> Eval {
        let Some(build) = class.method("build") else {
            return Ok(Value::Null);
        };
        let mut inner = Scope {
            class,
            root: binding_root(class),
            fields: Rc::default(),
            vars: HashMap::new(),
            depth: scope.depth + 1,
        };
        for f in &class.fields {
            if let Some(init) = &f.init {
                let v = self.eval(init, &inner)?;
                inner.vars.insert(f.name.clone(), v);
            }
        }
        if let Some(ctor) = class.constructor() {
            self.bind_params(&ctor.params, args, scope, &mut inner)?;
        }
        // The fields and constructor parameters are what the class's methods share.
        inner.fields = Rc::new(std::mem::take(&mut inner.vars));
        self.body(&build.body, &mut inner)
    }

    /// Binds parameters from arguments (evaluated in the caller's scope), or defaults.
    fn bind_params(
        &self,
        params: &[offer_domain::template::ast::Param],
        args: &[Arg],
        caller: &Scope<'a>,
        inner: &mut Scope<'a>,
    ) -> Eval<()> {
        let mut positional = args.iter().filter(|a| a.name.is_none());
        for p in params {
            let arg = if p.named {
                args.iter()
                    .find(|a| a.name.as_deref() == Some(p.name.as_str()))
            } else {
                positional.next()
            };
            let v = match (arg, &p.default) {
                (Some(a), _) => self.eval(&a.value, caller)?,
                (None, Some(d)) => self.eval(d, inner)?,
                (None, None) => Value::Null,
            };
            inner.vars.insert(p.name.clone(), v);
        }
        Ok(())
    }

    /// A table constructor applied to its evaluated arguments.
    /// Each argument is taken once, never copied.
    fn build(&self, ctor: Ctor, mut pos: Vec<Value>, named: &mut HashMap<&str, Value>) -> Value {
        let mut take = |n: &str| named.remove(n).unwrap_or(Value::Null);
        let mut p = |i: usize| pos.get_mut(i).map(std::mem::take).unwrap_or_default();
        let child = |v: Value| Box::new(v.widget());
        match ctor {
            Ctor::Scaffold => {
                let color = take("backgroundColor").color().unwrap_or(0xFFFF_FFFF);
                Value::Widget(Widget::Fill {
                    color,
                    radius: 0.0,
                    child: Box::new(Widget::Sized {
                        width: Some(f32::INFINITY),
                        height: Some(f32::INFINITY),
                        child: child(take("body")),
                    }),
                })
            }
            Ctor::SafeArea => take("child"),
            Ctor::Column | Ctor::Row => {
                let main = match take("mainAxisAlignment") {
                    Value::Const(Constant::MainAxis(m)) => m,
                    _ => MainAxisAlignment::Start,
                };
                let cross = match take("crossAxisAlignment") {
                    Value::Const(Constant::CrossAxis(c)) => c,
                    _ => CrossAxisAlignment::Center,
                };
                let min = matches!(
                    take("mainAxisSize"),
                    Value::Const(Constant::MainAxisMin(true))
                );
                Value::Widget(Widget::Flex {
                    axis: if ctor == Ctor::Row {
                        Axis::Horizontal
                    } else {
                        Axis::Vertical
                    },
                    main,
                    cross,
                    min,
                    children: children(take("children")),
                })
            }
            Ctor::Stack => {
                let align = alignment(&take("alignment")).unwrap_or((-1.0, -1.0));
                Value::Widget(Widget::Stack {
                    align,
                    children: children(take("children")),
                })
            }
            Ctor::Positioned => {
                let edges =
                    ["left", "top", "right", "bottom", "width", "height"].map(|n| take(n).num());
                Value::Widget(Widget::Positioned {
                    edges,
                    child: child(take("child")),
                })
            }
            Ctor::Align | Ctor::Center => {
                let (x, y) = alignment(&take("alignment")).unwrap_or((0.0, 0.0));
                Value::Widget(Widget::Align {
                    x,
                    y,
                    child: child(take("child")),
                })
            }
            Ctor::Container => {
                let mut w = take("child").widget();
                if let Some((x, y)) = alignment(&take("alignment")) {
                    w = Widget::Align {
                        x,
                        y,
                        child: Box::new(w),
                    };
                }
                if let Value::Insets(insets) = take("padding") {
                    w = Widget::Padding {
                        insets,
                        child: Box::new(w),
                    };
                }
                let (color, radius) = match take("decoration") {
                    Value::Decoration { color, radius } => (color, radius),
                    _ => (take("color").color(), 0.0),
                };
                if let Some(color) = color {
                    w = Widget::Fill {
                        color,
                        radius,
                        child: Box::new(w),
                    };
                }
                let (width, height) = (take("width").num(), take("height").num());
                if width.is_some() || height.is_some() {
                    w = Widget::Sized {
                        width,
                        height,
                        child: Box::new(w),
                    };
                }
                if let Value::Insets(insets) = take("margin") {
                    w = Widget::Padding {
                        insets,
                        child: Box::new(w),
                    };
                }
                Value::Widget(w)
            }
            Ctor::Padding => match take("padding") {
                Value::Insets(insets) => Value::Widget(Widget::Padding {
                    insets,
                    child: child(take("child")),
                }),
                _ => take("child"),
            },
            Ctor::SizedBox => Value::Widget(Widget::Sized {
                width: take("width").num(),
                height: take("height").num(),
                child: child(take("child")),
            }),
            Ctor::Expanded | Ctor::Spacer => Value::Widget(Widget::Flexible {
                flex: take("flex").num().map_or(1, |f| f.max(1.0) as u32),
                child: child(take("child")),
            }),
            Ctor::Text => {
                let style = match take("style") {
                    Value::Style(s) => s,
                    _ => Style::default(),
                };
                let align = match take("textAlign") {
                    Value::Const(Constant::TextAlign(a)) => a,
                    _ => TextAlign::Left,
                };
                Value::Widget(Widget::Text {
                    text: p(0).into_display(),
                    style,
                    align,
                    max_lines: take("maxLines").num().map(|n| n.max(1.0) as usize),
                })
            }
            Ctor::Image => {
                let item = match take("item") {
                    Value::Item(i) => Some(i),
                    _ => None,
                };
                let fit = match take("fit") {
                    Value::Const(Constant::BoxFit(f)) => f,
                    _ => BoxFit::Contain,
                };
                Value::Widget(Widget::Image {
                    item,
                    width: take("width").num(),
                    height: take("height").num(),
                    fit,
                })
            }
            Ctor::OfferButton => {
                let price = match take("item") {
                    Value::Item(i) => self.items.get(i).map(|it| it.summary.price.clone()),
                    _ => None,
                };
                let label = match take("label") {
                    Value::Null => price.unwrap_or_default(),
                    v => v.into_display(),
                };
                Value::Widget(Widget::Button {
                    label,
                    color: take("color").color().unwrap_or(BUTTON_COLOR),
                    text_color: take("textColor").color().unwrap_or(0xFFFF_FFFF),
                    width: take("width").num(),
                    height: take("height").num(),
                })
            }
            Ctor::EdgeInsetsAll => {
                let v = p(0).num().unwrap_or(0.0);
                Value::Insets(Insets {
                    left: v,
                    top: v,
                    right: v,
                    bottom: v,
                })
            }
            Ctor::EdgeInsetsSymmetric => {
                let h = take("horizontal").num().unwrap_or(0.0);
                let v = take("vertical").num().unwrap_or(0.0);
                Value::Insets(Insets {
                    left: h,
                    top: v,
                    right: h,
                    bottom: v,
                })
            }
            Ctor::EdgeInsetsOnly => Value::Insets(Insets {
                left: take("left").num().unwrap_or(0.0),
                top: take("top").num().unwrap_or(0.0),
                right: take("right").num().unwrap_or(0.0),
                bottom: take("bottom").num().unwrap_or(0.0),
            }),
            Ctor::EdgeInsetsFromLtrb => {
                let mut n = |i: usize| p(i).num().unwrap_or(0.0);
                Value::Insets(Insets {
                    left: n(0),
                    top: n(1),
                    right: n(2),
                    bottom: n(3),
                })
            }
            Ctor::TextStyle => Value::Style(Style {
                size: take("fontSize").num(),
                weight: match take("fontWeight") {
                    Value::Const(Constant::FontWeight(w)) => Some(w),
                    _ => None,
                },
                color: take("color").color(),
            }),
            // Read as f64: an f32 cannot hold a 32-bit colour exactly.
            Ctor::Color => match p(0) {
                Value::Num(n) => Value::Color(n as u32),
                _ => Value::Null,
            },
            Ctor::ColorFromArgb => {
                let mut c = |i: usize| (p(i).num().unwrap_or(0.0).clamp(0.0, 255.0) as u32) & 0xFF;
                Value::Color(c(0) << 24 | c(1) << 16 | c(2) << 8 | c(3))
            }
            Ctor::ColorFromRgbo => {
                let a = (p(3).num().unwrap_or(1.0).clamp(0.0, 1.0) * 255.0).round() as u32;
                let mut c = |i: usize| (p(i).num().unwrap_or(0.0).clamp(0.0, 255.0) as u32) & 0xFF;
                Value::Color(a << 24 | c(0) << 16 | c(1) << 8 | c(2))
            }
            Ctor::BoxDecoration => Value::Decoration {
                color: take("color").color(),
                radius: match take("borderRadius") {
                    Value::Radius(r) => r,
                    _ => 0.0,
                },
            },
            Ctor::BorderRadiusCircular | Ctor::RadiusCircular => {
                Value::Radius(p(0).num().unwrap_or(0.0))
            }
            Ctor::BorderRadiusAll => match p(0) {
                Value::Radius(r) => Value::Radius(r),
                _ => Value::Radius(0.0),
            },
        }
    }
}

fn children(v: Value) -> Vec<Widget> {
    match v {
        Value::List(items) => items.into_iter().map(Value::widget).collect(),
        _ => Vec::new(),
    }
}

fn alignment(v: &Value) -> Option<(f32, f32)> {
    match v {
        Value::Const(Constant::Alignment(x, y)) => Some((*x, *y)),
        _ => None,
    }
}

fn binary(op: &str, l: Value, r: Value) -> Value {
    match (op, &l, &r) {
        ("+", Value::Num(a), Value::Num(b)) => Value::Num(a + b),
        ("+", Value::Text(_), _) | ("+", _, Value::Text(_)) => {
            Value::Text(format!("{}{}", l.display(), r.display()))
        }
        ("-", Value::Num(a), Value::Num(b)) => Value::Num(a - b),
        ("*", Value::Num(a), Value::Num(b)) => Value::Num(a * b),
        ("/", Value::Num(a), Value::Num(b)) if *b != 0.0 => Value::Num(a / b),
        ("%", Value::Num(a), Value::Num(b)) if *b != 0.0 => Value::Num(a % b),
        ("<", Value::Num(a), Value::Num(b)) => Value::Bool(a < b),
        (">", Value::Num(a), Value::Num(b)) => Value::Bool(a > b),
        ("<=", Value::Num(a), Value::Num(b)) => Value::Bool(a <= b),
        (">=", Value::Num(a), Value::Num(b)) => Value::Bool(a >= b),
        ("==", _, _) => Value::Bool(l == r),
        ("!=", _, _) => Value::Bool(l != r),
        ("&&", _, _) => Value::Bool(l.truthy() && r.truthy()),
        ("||", _, _) => Value::Bool(l.truthy() || r.truthy()),
        _ => Value::Null,
    }
}

/// `toUpperCase()` and the other text methods of the widget table.
fn text_method(name: &str, v: &Value, arg: Option<Value>) -> Value {
    match (name, v) {
        ("toString", _) => Value::Text(v.display()),
        ("toUpperCase", Value::Text(t)) => Value::Text(t.to_uppercase()),
        ("toLowerCase", Value::Text(t)) => Value::Text(t.to_lowercase()),
        ("trim", Value::Text(t)) => Value::Text(t.trim().to_string()),
        ("toStringAsFixed", Value::Num(n)) => {
            let digits = arg.and_then(|a| a.num()).unwrap_or(0.0).clamp(0.0, 20.0) as usize;
            Value::Text(format!("{n:.digits$}"))
        }
        _ => Value::Null,
    }
}
