//! The typed tree of a template: what the parser produces and what the validator and the
//! preview renderer walk. Every node that can be reported carries its 1-based line.

/// A parsed template: its imports and classes, in source order.
#[derive(Debug, Clone, PartialEq)]
pub struct Template {
    /// `import '...';` directives.
    pub imports: Vec<Import>,
    /// Class declarations.
    pub classes: Vec<Class>,
}

/// `import 'uri' [as prefix] [show a, b] [hide c];`
#[derive(Debug, Clone, PartialEq)]
pub struct Import {
    /// The imported URI, for example `package:flutter/material.dart`.
    pub uri: String,
    /// The `as` prefix, if any.
    pub prefix: Option<String>,
    /// 1-based line.
    pub line: u32,
}

/// `class Name extends Base { ... }`
#[derive(Debug, Clone, PartialEq)]
pub struct Class {
    /// The class name.
    pub name: String,
    /// The superclass named by `extends`, if any.
    pub extends: Option<String>,
    /// `final` (or other) fields.
    pub fields: Vec<Field>,
    /// Constructors, `const` or not.
    pub constructors: Vec<Constructor>,
    /// Methods, `build` among them.
    pub methods: Vec<Method>,
    /// 1-based line of the `class` keyword.
    pub line: u32,
}

/// A field: `final Type name;` or `final name = expr;`.
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    /// Declared type as written (`String`, `List<int>?`), if any.
    pub ty: Option<String>,
    /// Field name.
    pub name: String,
    /// Initialiser, if any.
    pub init: Option<Expr>,
    /// 1-based line.
    pub line: u32,
}

/// A constructor: `const Name({super.key, required this.offer});`.
#[derive(Debug, Clone, PartialEq)]
pub struct Constructor {
    /// The named-constructor suffix (`Name.fromX` gives `fromX`), if any.
    pub name: Option<String>,
    /// Parameters, positional and named.
    pub params: Vec<Param>,
    /// 1-based line.
    pub line: u32,
}

/// A constructor or method parameter.
#[derive(Debug, Clone, PartialEq)]
pub struct Param {
    /// The name (`key` for `super.key`, `offer` for `this.offer`).
    pub name: String,
    /// Declared type as written, if any.
    pub ty: Option<String>,
    /// Declared inside `{...}`: passed by name.
    pub named: bool,
    /// Marked `required`.
    pub required: bool,
    /// `= value` default, if any.
    pub default: Option<Expr>,
}

/// A method: `@override Widget build(BuildContext context) { return ...; }` or `=> expr;`.
#[derive(Debug, Clone, PartialEq)]
pub struct Method {
    /// Annotation names without `@` (`override`).
    pub annotations: Vec<String>,
    /// Declared return type as written, if any.
    pub return_type: Option<String>,
    /// Method name.
    pub name: String,
    /// Parameters.
    pub params: Vec<Param>,
    /// Local declarations then the returned expression.
    pub body: Vec<Stmt>,
    /// 1-based line.
    pub line: u32,
}

/// A statement of a method body: the subset is local declarations and `return`.
#[derive(Debug, Clone, PartialEq)]
pub enum Stmt {
    /// `final [Type] name = expr;` (also `var`, `const`, or a plain type).
    Local {
        /// Variable name.
        name: String,
        /// Its value.
        init: Expr,
        /// 1-based line.
        line: u32,
    },
    /// `return expr;` (an `=> expr` body is one of these).
    Return(Expr),
}

/// An expression and its line.
#[derive(Debug, Clone, PartialEq)]
pub struct Expr {
    /// What the expression is.
    pub kind: ExprKind,
    /// 1-based line where it starts.
    pub line: u32,
}

/// The expression forms of the subset.
#[derive(Debug, Clone, PartialEq)]
pub enum ExprKind {
    /// `null`
    Null,
    /// `true` or `false`
    Bool(bool),
    /// An integer literal.
    Int(i64),
    /// A floating-point literal.
    Double(f64),
    /// A string literal (adjacent literals joined), interpolations parsed.
    Str(Vec<StrPart>),
    /// A bare identifier: a local, a field, a class or constant group name.
    Ident(String),
    /// `target.name` or `target?.name`.
    Member {
        /// What is accessed.
        target: Box<Expr>,
        /// The member's name.
        name: String,
    },
    /// `target[index]`.
    Index {
        /// What is indexed.
        target: Box<Expr>,
        /// The key or position.
        index: Box<Expr>,
    },
    /// A constructor or method call: `Text('x', style: ...)`, `EdgeInsets.all(8)`.
    Call {
        /// What is called: an identifier or a member access.
        callee: Box<Expr>,
        /// Arguments in order.
        args: Vec<Arg>,
    },
    /// `[a, b, c]` (with an optional `<Type>` before it).
    List(Vec<Expr>),
    /// `expr as Type`.
    Cast {
        /// The value cast.
        expr: Box<Expr>,
        /// The type as written.
        ty: String,
    },
    /// A prefix operator: `-x`, `!x`.
    Unary {
        /// `-` or `!`.
        op: &'static str,
        /// The operand.
        expr: Box<Expr>,
    },
    /// A binary operator: `a + b`, `a ?? b`, `a == b`, ...
    Binary {
        /// The operator's text.
        op: &'static str,
        /// Left operand.
        lhs: Box<Expr>,
        /// Right operand.
        rhs: Box<Expr>,
    },
    /// `cond ? then : otherwise`.
    Conditional {
        /// The condition.
        cond: Box<Expr>,
        /// Value when true.
        then: Box<Expr>,
        /// Value when false.
        otherwise: Box<Expr>,
    },
}

/// A part of a string literal.
#[derive(Debug, Clone, PartialEq)]
pub enum StrPart {
    /// Literal text.
    Text(String),
    /// An interpolated expression (`$name` gives an identifier).
    Interp(Expr),
}

/// A call argument: positional (`name` is `None`) or named.
#[derive(Debug, Clone, PartialEq)]
pub struct Arg {
    /// The argument's name, for a named argument.
    pub name: Option<String>,
    /// Its value.
    pub value: Expr,
}

impl Template {
    /// The entry widget: the first class that extends `StatelessWidget` and has a `build`
    /// method.
    pub fn entry(&self) -> Option<&Class> {
        self.classes.iter().find(|c| {
            c.extends.as_deref() == Some("StatelessWidget") && c.method("build").is_some()
        })
    }

    /// A class declared in the template, by name.
    pub fn class(&self, name: &str) -> Option<&Class> {
        self.classes.iter().find(|c| c.name == name)
    }
}

impl Class {
    /// A method by name.
    pub fn method(&self, name: &str) -> Option<&Method> {
        self.methods.iter().find(|m| m.name == name)
    }

    /// The unnamed constructor, if declared.
    pub fn constructor(&self) -> Option<&Constructor> {
        self.constructors.iter().find(|c| c.name.is_none())
    }
}

impl Method {
    /// The expression the body returns (the last `return`).
    pub fn returned(&self) -> Option<&Expr> {
        self.body.iter().rev().find_map(|s| match s {
            Stmt::Return(e) => Some(e),
            Stmt::Local { .. } => None,
        })
    }
}

impl Expr {
    /// The dotted name of an identifier or a chain of member accesses on one
    /// (`EdgeInsets.all`, `Colors.white`), else `None`.
    pub fn dotted_name(&self) -> Option<String> {
        match &self.kind {
            ExprKind::Ident(name) => Some(name.clone()),
            ExprKind::Member { target, name } => {
                target.dotted_name().map(|t| format!("{t}.{name}"))
            }
            _ => None,
        }
    }

    /// Calls `f` on this expression and each one inside it, parents first.
    ///
    /// Iterative (an explicit stack), so a walk never deepens the call stack whatever the
    /// tree's depth.
    pub fn walk<'a>(&'a self, f: &mut impl FnMut(&'a Expr)) {
        let mut stack = vec![self];
        while let Some(e) = stack.pop() {
            f(e);
            let before = stack.len();
            match &e.kind {
                ExprKind::Null
                | ExprKind::Bool(_)
                | ExprKind::Int(_)
                | ExprKind::Double(_)
                | ExprKind::Ident(_) => {}
                ExprKind::Str(parts) => {
                    for part in parts {
                        if let StrPart::Interp(inner) = part {
                            stack.push(inner);
                        }
                    }
                }
                ExprKind::Member { target, .. } => stack.push(target),
                ExprKind::Index { target, index } => {
                    stack.push(target);
                    stack.push(index);
                }
                ExprKind::Call { callee, args } => {
                    stack.push(callee);
                    stack.extend(args.iter().map(|a| &a.value));
                }
                ExprKind::List(items) => stack.extend(items.iter()),
                ExprKind::Cast { expr, .. } | ExprKind::Unary { expr, .. } => stack.push(expr),
                ExprKind::Binary { lhs, rhs, .. } => {
                    stack.push(lhs);
                    stack.push(rhs);
                }
                ExprKind::Conditional {
                    cond,
                    then,
                    otherwise,
                } => {
                    stack.push(cond);
                    stack.push(then);
                    stack.push(otherwise);
                }
            }
            stack[before..].reverse();
        }
    }
}
