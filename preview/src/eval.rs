//! Evaluates a template's tree into a [`Widget`] tree: bindings reads, constants, string
//! interpolation, the text methods, locals, helper methods and the template's own widget
//! classes. Evaluation is total: what cannot be evaluated is `null`, and a widget made of
//! nulls draws as nothing.

use std::collections::HashMap;

use offer_domain::template::ast::{Arg, Class, Expr, ExprKind, Stmt, StrPart, Template};
use offer_domain::template::bindings::{
    BindingValue, Bindings, ItemField, Read, binding_root, classify,
};
use offer_domain::template::widgets::{
    BoxFit, Constant, CrossAxisAlignment, Ctor, MainAxisAlignment, TextAlign, constant, constructor,
};

use crate::BoundItem;
use crate::error::RenderError;
use crate::widget::{Axis, Insets, Style, Widget};

/// Deepest nesting of helper-method and widget-class calls, so a class that builds itself
/// ends instead of recursing forever.
const MAX_CALL_DEPTH: usize = 8;

/// Default colour of an `OfferButton`.
const BUTTON_COLOR: u32 = 0xFF4C_AF50;

/// A value during evaluation.
#[derive(Debug, Clone, PartialEq)]
enum Value {
    Null,
    Bool(bool),
    Num(f64),
    Text(String),
    Color(u32),
    Const(Constant),
    Insets(Insets),
    Radius(f32),
    Style(Style),
    Decoration { color: Option<u32>, radius: f32 },
    Item(usize),
    List(Vec<Value>),
    Widget(Widget),
}

impl Value {
    fn display(&self) -> String {
        match self {
            Self::Text(t) => t.clone(),
            Self::Num(n) => BindingValue::Number(*n).display(),
            Self::Bool(b) => b.to_string(),
            _ => String::new(),
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

/// Evaluates the entry widget's `build`.
pub fn evaluate(
    tree: &Template,
    bindings: &Bindings,
    items: &[BoundItem],
) -> Result<Widget, RenderError> {
    let entry = tree.entry().ok_or(RenderError::NoEntryWidget)?;
    let ev = Eval {
        tree,
        bindings,
        items,
    };
    let build = entry.method("build").ok_or(RenderError::NoEntryWidget)?;
    let mut scope = Scope {
        class: entry,
        root: binding_root(entry),
        vars: HashMap::new(),
        depth: 0,
    };
    Ok(ev.body(&build.body, &mut scope).widget())
}

struct Eval<'a> {
    tree: &'a Template,
    bindings: &'a Bindings,
    items: &'a [BoundItem],
}

struct Scope<'a> {
    class: &'a Class,
    root: &'a str,
    vars: HashMap<String, Value>,
    depth: usize,
}

impl<'a> Eval<'a> {
    /// Runs a method body: its locals, then its `return`.
    fn body(&self, body: &[Stmt], scope: &mut Scope<'a>) -> Value {
        for stmt in body {
            match stmt {
                Stmt::Local { name, init, .. } => {
                    let v = self.eval(init, scope);
                    scope.vars.insert(name.clone(), v);
                }
                Stmt::Return(e) => return self.eval(e, scope),
            }
        }
        Value::Null
    }

    fn eval(&self, e: &Expr, scope: &Scope<'a>) -> Value {
        if let Some(read) = classify(e, scope.root) {
            return self.read(read);
        }
        match &e.kind {
            ExprKind::Null => Value::Null,
            ExprKind::Bool(b) => Value::Bool(*b),
            ExprKind::Int(i) => Value::Num(*i as f64),
            ExprKind::Double(d) => Value::Num(*d),
            ExprKind::Str(parts) => {
                let mut s = String::new();
                for part in parts {
                    match part {
                        StrPart::Text(t) => s.push_str(t),
                        StrPart::Interp(inner) => s.push_str(&self.eval(inner, scope).display()),
                    }
                }
                Value::Text(s)
            }
            ExprKind::Ident(name) => scope.vars.get(name).cloned().unwrap_or(Value::Null),
            ExprKind::Member { target, name } => {
                if let Some(c) = e.dotted_name().and_then(|n| constant(&n)) {
                    return Value::Const(c);
                }
                match self.eval(target, scope) {
                    Value::Item(i) => {
                        ItemField::parse(name).map_or(Value::Null, |f| self.field(i, f))
                    }
                    Value::Text(t) if name == "length" => Value::Num(t.chars().count() as f64),
                    _ => Value::Null,
                }
            }
            ExprKind::Index { target, index } => {
                match (self.eval(target, scope), self.eval(index, scope)) {
                    (Value::List(items), Value::Num(i)) if i >= 0.0 => {
                        items.get(i as usize).cloned().unwrap_or(Value::Null)
                    }
                    _ => Value::Null,
                }
            }
            ExprKind::Call { callee, args } => self.call(callee, args, scope),
            ExprKind::List(items) => {
                Value::List(items.iter().map(|i| self.eval(i, scope)).collect())
            }
            ExprKind::Cast { expr, .. } => self.eval(expr, scope),
            ExprKind::Unary { op, expr } => match (*op, self.eval(expr, scope)) {
                ("-", Value::Num(n)) => Value::Num(-n),
                ("!", v) => Value::Bool(!v.truthy()),
                _ => Value::Null,
            },
            ExprKind::Binary { op, lhs, rhs } => {
                let l = self.eval(lhs, scope);
                if *op == "??" {
                    return if l == Value::Null {
                        self.eval(rhs, scope)
                    } else {
                        l
                    };
                }
                binary(op, l, self.eval(rhs, scope))
            }
            ExprKind::Conditional {
                cond,
                then,
                otherwise,
            } => {
                if self.eval(cond, scope).truthy() {
                    self.eval(then, scope)
                } else {
                    self.eval(otherwise, scope)
                }
            }
        }
    }

    fn read(&self, read: Read) -> Value {
        match read {
            Read::Value(name) => match self.bindings.values.get(&name) {
                Some(BindingValue::Text(t)) => Value::Text(t.clone()),
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
                    (Some(i), Some(f)) => self.field(i, f),
                    _ => Value::Null,
                }
            }
            Read::Root | Read::Items | Read::Unsupported(_) => Value::Null,
        }
    }

    fn field(&self, i: usize, f: ItemField) -> Value {
        let Some(item) = self.items.get(i) else {
            return Value::Null;
        };
        let s = &item.summary;
        match f {
            ItemField::Id => self
                .bindings
                .items
                .get(i)
                .map_or(Value::Null, |id| Value::Text(id.clone())),
            ItemField::Name => Value::Text(s.name.clone()),
            ItemField::Price => Value::Text(s.price.clone()),
            ItemField::Amount => s.amount.map_or(Value::Null, |a| Value::Num(a as f64)),
            ItemField::Art => s.art.clone().map_or(Value::Null, Value::Text),
            ItemField::Description => s.description.clone().map_or(Value::Null, Value::Text),
        }
    }

    fn call(&self, callee: &Expr, args: &[Arg], scope: &Scope<'a>) -> Value {
        let name = callee.dotted_name();
        if let Some(spec) = name.as_deref().and_then(constructor) {
            let positional: Vec<Value> = args
                .iter()
                .filter(|a| a.name.is_none())
                .map(|a| self.eval(&a.value, scope))
                .collect();
            let mut named: HashMap<&str, Value> = args
                .iter()
                .filter_map(|a| a.name.as_deref().map(|n| (n, self.eval(&a.value, scope))))
                .collect();
            return self.build(spec.ctor, &positional, &mut named);
        }
        if scope.depth >= MAX_CALL_DEPTH {
            return Value::Null;
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
                        vars: scope.vars.clone(),
                        depth: scope.depth + 1,
                    };
                    self.bind_params(&m.params, args, scope, &mut inner);
                    self.body(&m.body, &mut inner)
                }
                None => Value::Null,
            },
            ExprKind::Member { target, name } => {
                let v = self.eval(target, scope);
                text_method(name, &v, args.first().map(|a| self.eval(&a.value, scope)))
            }
            _ => Value::Null,
        }
    }

    /// A widget class of the template: its fields from the arguments, then its `build`.
    fn instantiate(&self, class: &'a Class, args: &[Arg], scope: &Scope<'a>) -> Value {
        let Some(build) = class.method("build") else {
            return Value::Null;
        };
        let mut inner = Scope {
            class,
            root: binding_root(class),
            vars: HashMap::new(),
            depth: scope.depth + 1,
        };
        for f in &class.fields {
            if let Some(init) = &f.init {
                let v = self.eval(init, &inner);
                inner.vars.insert(f.name.clone(), v);
            }
        }
        if let Some(ctor) = class.constructor() {
            self.bind_params(&ctor.params, args, scope, &mut inner);
        }
        self.body(&build.body, &mut inner)
    }

    /// Binds parameters from arguments (evaluated in the caller's scope), or defaults.
    fn bind_params(
        &self,
        params: &[offer_domain::template::ast::Param],
        args: &[Arg],
        caller: &Scope<'a>,
        inner: &mut Scope<'a>,
    ) {
        let mut positional = args.iter().filter(|a| a.name.is_none());
        for p in params {
            let arg = if p.named {
                args.iter()
                    .find(|a| a.name.as_deref() == Some(p.name.as_str()))
            } else {
                positional.next()
            };
            let v = match (arg, &p.default) {
                (Some(a), _) => self.eval(&a.value, caller),
                (None, Some(d)) => self.eval(d, inner),
                (None, None) => Value::Null,
            };
            inner.vars.insert(p.name.clone(), v);
        }
    }

    /// A table constructor applied to its evaluated arguments.
    fn build(&self, ctor: Ctor, pos: &[Value], named: &mut HashMap<&str, Value>) -> Value {
        let mut take = |n: &str| named.remove(n).unwrap_or(Value::Null);
        let p = |i: usize| pos.get(i).cloned().unwrap_or(Value::Null);
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
                    text: p(0).display(),
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
                    v => v.display(),
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
                let n = |i: usize| p(i).num().unwrap_or(0.0);
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
                let c = |i: usize| (p(i).num().unwrap_or(0.0).clamp(0.0, 255.0) as u32) & 0xFF;
                Value::Color(c(0) << 24 | c(1) << 16 | c(2) << 8 | c(3))
            }
            Ctor::ColorFromRgbo => {
                let c = |i: usize| (p(i).num().unwrap_or(0.0).clamp(0.0, 255.0) as u32) & 0xFF;
                let a = (p(3).num().unwrap_or(1.0).clamp(0.0, 1.0) * 255.0).round() as u32;
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
