//! The recursive-descent parser: tokens to the [`Template`] tree.
//!
//! Top level: `import` directives and `class` declarations. Class members: fields,
//! constructors (with `super.key`/`this.x` parameters and an ignored initialiser list),
//! annotated methods with a `=> expr;` body or a block of local declarations and a `return`.
//! Expressions: literals, identifiers, member access (`a.b`, `a?.b`), index lookups, calls
//! with positional and named arguments (`const`/`new` accepted and dropped), list literals
//! with trailing commas, `as`/`is`, unary and binary operators, `?:` and `??`.
//!
//! Every way down the tree goes through one depth check, which refuses to go deeper than
//! [`MAX_NESTING`], and every node is counted against [`MAX_NODES`]: malformed or hostile
//! input gets an error, never a stack overflow or a panic.

use super::ast::{
    Arg, Class, Constructor, Expr, ExprKind, Field, Import, Method, Param, Stmt, StrPart, Template,
};
use super::error::ParseError;
use super::lexer::{Piece, Tok, Token, check_balance, lex};
use super::{MAX_NESTING, MAX_NODES};

/// Parses a whole template.
///
/// Lexing, the delimiter check and parsing run in that order; the first problem found is
/// the error.
pub fn parse(src: &str) -> Result<Template, ParseError> {
    let tokens = lex(src)?;
    check_balance(&tokens)?;
    parse_tokens(&tokens)
}

/// Parses already lexed and balance-checked tokens (the validator lexes once and scans the
/// tokens for forbidden APIs before parsing them).
pub(super) fn parse_tokens(tokens: &[Token]) -> Result<Template, ParseError> {
    let mut p = Parser {
        toks: tokens,
        pos: 0,
        depth: 0,
        nodes: 0,
    };
    p.template()
}

/// Binary operators by precedence, loosest first (`??` binds loosest, `*` tightest).
const BINARY: &[&[&str]] = &[
    &["??"],
    &["||"],
    &["&&"],
    &["==", "!="],
    &["<", ">", "<=", ">="],
    &["+", "-"],
    &["*", "/", "%"],
];

/// The level of [`BINARY`] that `as` and `is` share.
const RELATIONAL: usize = 4;

struct Parser<'t> {
    toks: &'t [Token],
    pos: usize,
    depth: usize,
    nodes: usize,
}

type Res<T> = Result<T, ParseError>;

impl<'t> Parser<'t> {
    fn peek_at(&self, ahead: usize) -> Option<&'t Tok> {
        self.toks.get(self.pos + ahead).map(|t| &t.tok)
    }

    fn peek(&self) -> Option<&'t Tok> {
        self.peek_at(0)
    }

    /// The line of the current token (the last one at the end of input).
    fn line(&self) -> u32 {
        self.toks
            .get(self.pos)
            .or_else(|| self.toks.last())
            .map_or(1, |t| t.line)
    }

    fn error<T>(&self, message: impl Into<String>) -> Res<T> {
        Err(ParseError::Syntax {
            line: self.line(),
            message: message.into(),
        })
    }

    fn is_punct(&self, p: &str) -> bool {
        matches!(self.peek(), Some(Tok::Punct(q)) if *q == p)
    }

    fn is_word(&self, w: &str) -> bool {
        matches!(self.peek(), Some(Tok::Ident(i)) if i == w)
    }

    fn eat_punct(&mut self, p: &str) -> bool {
        let hit = self.is_punct(p);
        if hit {
            self.pos += 1;
        }
        hit
    }

    fn eat_word(&mut self, w: &str) -> bool {
        let hit = self.is_word(w);
        if hit {
            self.pos += 1;
        }
        hit
    }

    fn expect(&mut self, p: &str) -> Res<()> {
        if self.eat_punct(p) {
            Ok(())
        } else {
            let found = describe(self.peek());
            self.error(format!("expected `{p}`, found {found}"))
        }
    }

    fn ident(&mut self) -> Res<String> {
        match self.peek() {
            Some(Tok::Ident(name)) => {
                self.pos += 1;
                Ok(name.clone())
            }
            other => {
                let found = describe(other);
                self.error(format!("expected a name, found {found}"))
            }
        }
    }

    /// Goes one level down the tree, refusing to pass [`MAX_NESTING`].
    fn enter(&mut self) -> Res<()> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            Err(ParseError::TooDeep { line: self.line() })
        } else {
            Ok(())
        }
    }

    /// Makes a node, counting it against [`MAX_NODES`].
    fn node(&mut self, kind: ExprKind, line: u32) -> Res<Expr> {
        self.nodes += 1;
        if self.nodes > MAX_NODES {
            return Err(ParseError::TooManyNodes { line });
        }
        Ok(Expr { kind, line })
    }

    fn template(&mut self) -> Res<Template> {
        let mut imports = Vec::new();
        let mut classes = Vec::new();
        while let Some(tok) = self.peek() {
            match tok {
                Tok::Ident(w) if w == "import" => imports.push(self.import()?),
                Tok::Ident(w) if w == "class" || w == "abstract" => classes.push(self.class()?),
                Tok::Punct("@") => self.annotation().map(drop)?,
                _ => {
                    let found = describe(Some(tok));
                    return self.error(format!(
                        "only imports and classes may appear at the top level, found {found}"
                    ));
                }
            }
        }
        Ok(Template { imports, classes })
    }

    fn import(&mut self) -> Res<Import> {
        let line = self.line();
        self.pos += 1;
        let uri = match self.peek() {
            Some(Tok::Str(pieces)) => match pieces.as_slice() {
                [Piece::Text(t)] => t.clone(),
                _ => return self.error("an import names a plain string URI"),
            },
            _ => return self.error("expected the imported URI after `import`"),
        };
        self.pos += 1;
        let mut prefix = None;
        loop {
            if self.eat_word("as") {
                prefix = Some(self.ident()?);
            } else if self.eat_word("show") || self.eat_word("hide") {
                self.ident()?;
                while self.eat_punct(",") {
                    self.ident()?;
                }
            } else if self.eat_word("deferred") {
            } else {
                break;
            }
        }
        self.expect(";")?;
        Ok(Import { uri, prefix, line })
    }

    /// `@name` or `@name(args)`; returns the name.
    fn annotation(&mut self) -> Res<String> {
        self.expect("@")?;
        let name = self.ident()?;
        if self.is_punct("(") {
            self.args()?;
        }
        Ok(name)
    }

    fn class(&mut self) -> Res<Class> {
        let line = self.line();
        self.eat_word("abstract");
        if !self.eat_word("class") {
            return self.error("expected `class`");
        }
        let name = self.ident()?;
        let mut extends = None;
        if self.eat_word("extends") {
            extends = Some(self.type_name()?);
        }
        while self.eat_word("with") || self.eat_word("implements") {
            self.type_name()?;
            while self.eat_punct(",") {
                self.type_name()?;
            }
        }
        self.expect("{")?;
        let mut class = Class {
            name,
            extends,
            fields: Vec::new(),
            constructors: Vec::new(),
            methods: Vec::new(),
            line,
        };
        while !self.eat_punct("}") {
            if self.peek().is_none() {
                return self.error("class body never closed");
            }
            self.member(&mut class)?;
        }
        Ok(class)
    }

    fn member(&mut self, class: &mut Class) -> Res<()> {
        let mut annotations = Vec::new();
        while self.is_punct("@") {
            annotations.push(self.annotation()?);
        }
        let line = self.line();
        let mut modifier = false;
        while ["static", "const", "final", "late", "var", "external"]
            .iter()
            .any(|w| self.is_word(w))
        {
            self.pos += 1;
            modifier = true;
        }
        if self.is_word(&class.name) && matches!(self.peek_at(1), Some(Tok::Punct("(" | "."))) {
            return self.constructor(class, line);
        }
        let first_is_name = matches!(self.peek_at(1), Some(Tok::Punct("=" | ";" | ",")));
        let untyped_getter = self.is_word("get") && matches!(self.peek_at(1), Some(Tok::Ident(_)));
        let ty = if (first_is_name && modifier) || untyped_getter {
            None
        } else {
            Some(self.type_name()?)
        };
        let mut name = self.ident()?;
        let getter = name == "get" && matches!(self.peek(), Some(Tok::Ident(_)));
        if getter {
            name = self.ident()?;
        }
        if getter || self.is_punct("(") {
            let params = if getter { Vec::new() } else { self.params()? };
            let body = self.body()?;
            class.methods.push(Method {
                annotations,
                return_type: ty,
                name,
                params,
                body,
                line,
            });
            return Ok(());
        }
        loop {
            let init = if self.eat_punct("=") {
                Some(self.expr()?)
            } else {
                None
            };
            class.fields.push(Field {
                ty: ty.clone(),
                name,
                init,
                line,
            });
            if !self.eat_punct(",") {
                break;
            }
            name = self.ident()?;
        }
        self.expect(";")
    }

    fn constructor(&mut self, class: &mut Class, line: u32) -> Res<()> {
        self.pos += 1;
        let name = if self.eat_punct(".") {
            Some(self.ident()?)
        } else {
            None
        };
        let params = self.params()?;
        if self.eat_punct(":") {
            loop {
                self.expr()?;
                if !self.eat_punct(",") {
                    break;
                }
            }
        }
        if self.eat_punct("=>") {
            self.expr()?;
            self.expect(";")?;
        } else if self.is_punct("{") {
            self.block()?;
        } else {
            self.expect(";")?;
        }
        class.constructors.push(Constructor { name, params, line });
        Ok(())
    }

    /// A type as written: `Name`, `prefix.Name`, `Name<Args>`, each optionally `?`.
    fn type_name(&mut self) -> Res<String> {
        self.enter()?;
        let mut text = self.ident()?;
        while self.is_punct(".") && matches!(self.peek_at(1), Some(Tok::Ident(_))) {
            self.pos += 1;
            text.push('.');
            text.push_str(&self.ident()?);
        }
        if self.eat_punct("<") {
            text.push('<');
            loop {
                let arg = self.type_name()?;
                text.push_str(&arg);
                if self.eat_punct(",") {
                    text.push_str(", ");
                } else {
                    break;
                }
            }
            self.expect(">")?;
            text.push('>');
        }
        if self.eat_punct("?") {
            text.push('?');
        }
        self.depth -= 1;
        Ok(text)
    }

    /// `(a, Type b, [c = 1])` or `({super.key, required this.x, int y = 0})`.
    fn params(&mut self) -> Res<Vec<Param>> {
        self.expect("(")?;
        let mut params = Vec::new();
        let mut named = false;
        let mut closer = None;
        loop {
            if self.eat_punct(")") {
                break;
            }
            if closer.is_none() && (self.is_punct("{") || self.is_punct("[")) {
                named = self.is_punct("{");
                closer = Some(if named { "}" } else { "]" });
                self.pos += 1;
                continue;
            }
            if let Some(c) = closer
                && self.eat_punct(c)
            {
                continue;
            }
            while self.is_punct("@") {
                self.annotation()?;
            }
            let required = self.eat_word("required");
            self.eat_word("final");
            self.eat_word("covariant");
            let (name, ty) = if (self.is_word("this") || self.is_word("super"))
                && matches!(self.peek_at(1), Some(Tok::Punct(".")))
            {
                self.pos += 2;
                (self.ident()?, None)
            } else {
                let first = self.type_name()?;
                if matches!(self.peek(), Some(Tok::Ident(_))) {
                    (self.ident()?, Some(first))
                } else {
                    (first, None)
                }
            };
            let default = if self.eat_punct("=") {
                Some(self.expr()?)
            } else {
                None
            };
            params.push(Param {
                name,
                ty,
                named,
                required,
                default,
            });
            if !self.eat_punct(",")
                && !self.is_punct(")")
                && closer.is_none_or(|c| !self.is_punct(c))
            {
                let found = describe(self.peek());
                return self.error(format!("expected `,` or `)` in parameters, found {found}"));
            }
        }
        Ok(params)
    }

    /// A method body: `=> expr;` or `{ statements }`.
    fn body(&mut self) -> Res<Vec<Stmt>> {
        if self.eat_punct("=>") {
            let e = self.expr()?;
            self.expect(";")?;
            return Ok(vec![Stmt::Return(e)]);
        }
        self.block()
    }

    fn block(&mut self) -> Res<Vec<Stmt>> {
        self.expect("{")?;
        let mut stmts = Vec::new();
        while !self.eat_punct("}") {
            if self.peek().is_none() {
                return self.error("method body never closed");
            }
            let line = self.line();
            if self.eat_word("return") {
                let e = self.expr()?;
                self.expect(";")?;
                stmts.push(Stmt::Return(e));
                continue;
            }
            let modifier = ["final", "var", "const", "late"]
                .iter()
                .any(|w| self.eat_word(w));
            let bare_name = matches!(self.peek_at(1), Some(Tok::Punct("=")));
            if !(modifier || matches!(self.peek(), Some(Tok::Ident(_)))) {
                return self.error("a method body holds local declarations and `return` only");
            }
            if !(modifier && bare_name) {
                self.type_name()?;
            }
            let name = self.ident()?;
            if !self.eat_punct("=") {
                return self.error(
                    "a method body holds local declarations (`final name = value;`) and `return` only",
                );
            }
            let init = self.expr()?;
            self.expect(";")?;
            stmts.push(Stmt::Local { name, init, line });
        }
        Ok(stmts)
    }

    fn expr(&mut self) -> Res<Expr> {
        self.enter()?;
        let e = self.conditional();
        self.depth -= 1;
        e
    }

    fn conditional(&mut self) -> Res<Expr> {
        let cond = self.binary(0)?;
        if !self.is_punct("?") {
            return Ok(cond);
        }
        let line = cond.line;
        self.pos += 1;
        let then = self.expr()?;
        self.expect(":")?;
        let otherwise = self.expr()?;
        self.node(
            ExprKind::Conditional {
                cond: Box::new(cond),
                then: Box::new(then),
                otherwise: Box::new(otherwise),
            },
            line,
        )
    }

    /// Precedence climbing over [`BINARY`]: operators of level `min` or tighter; `as` and
    /// `is` bind like the relational level. One frame per operator, not per level.
    fn binary(&mut self, min: usize) -> Res<Expr> {
        let mut lhs = self.unary()?;
        let mut wraps = 0;
        loop {
            let level = match self.peek() {
                Some(Tok::Punct(p)) => BINARY.iter().position(|ops| ops.contains(p)),
                Some(Tok::Ident(w)) if w == "as" || w == "is" => Some(RELATIONAL),
                _ => None,
            };
            let Some(level) = level.filter(|l| *l >= min) else {
                break;
            };
            let line = lhs.line;
            self.enter()?;
            wraps += 1;
            let kind = match self.peek() {
                Some(Tok::Ident(w)) => {
                    let cast = w == "as";
                    self.pos += 1;
                    let negated = !cast && self.eat_punct("!");
                    let ty = self.type_name()?;
                    if cast {
                        ExprKind::Cast {
                            expr: Box::new(lhs),
                            ty,
                        }
                    } else {
                        ExprKind::Binary {
                            op: if negated { "is!" } else { "is" },
                            lhs: Box::new(lhs),
                            rhs: Box::new(self.node(ExprKind::Ident(ty), line)?),
                        }
                    }
                }
                tok => {
                    let op = match tok {
                        Some(Tok::Punct(p)) => *p,
                        _ => return self.error("expected an operator"),
                    };
                    self.pos += 1;
                    let rhs = self.binary(level + 1)?;
                    ExprKind::Binary {
                        op,
                        lhs: Box::new(lhs),
                        rhs: Box::new(rhs),
                    }
                }
            };
            lhs = self.node(kind, line)?;
        }
        self.depth -= wraps;
        Ok(lhs)
    }

    fn unary(&mut self) -> Res<Expr> {
        let op = match self.peek() {
            Some(Tok::Punct("-")) => "-",
            Some(Tok::Punct("!")) => "!",
            _ => return self.postfix(),
        };
        let line = self.line();
        self.pos += 1;
        self.enter()?;
        let inner = self.unary();
        self.depth -= 1;
        let expr = Box::new(inner?);
        self.node(ExprKind::Unary { op, expr }, line)
    }

    fn postfix(&mut self) -> Res<Expr> {
        let mut e = self.primary()?;
        let mut wraps = 0;
        let result = loop {
            let line = e.line;
            let kind = if self.eat_punct(".") || self.eat_punct("?.") {
                let name = match self.ident() {
                    Ok(n) => n,
                    Err(err) => break Err(err),
                };
                ExprKind::Member {
                    target: Box::new(e),
                    name,
                }
            } else if self.is_punct("[") {
                self.pos += 1;
                let index = match self.expr() {
                    Ok(i) => i,
                    Err(err) => break Err(err),
                };
                if let Err(err) = self.expect("]") {
                    break Err(err);
                }
                ExprKind::Index {
                    target: Box::new(e),
                    index: Box::new(index),
                }
            } else if self.is_punct("(") {
                let args = match self.args() {
                    Ok(a) => a,
                    Err(err) => break Err(err),
                };
                ExprKind::Call {
                    callee: Box::new(e),
                    args,
                }
            } else if self.is_punct("!") && !matches!(self.peek_at(1), Some(Tok::Punct("="))) {
                self.pos += 1;
                continue;
            } else {
                break Ok(e);
            };
            if let Err(err) = self.enter() {
                break Err(err);
            }
            wraps += 1;
            e = match self.node(kind, line) {
                Ok(n) => n,
                Err(err) => break Err(err),
            };
        };
        self.depth -= wraps;
        result
    }

    /// `(a, b, name: c,)`
    fn args(&mut self) -> Res<Vec<Arg>> {
        self.expect("(")?;
        let mut args = Vec::new();
        while !self.eat_punct(")") {
            let name = if matches!(self.peek(), Some(Tok::Ident(_)))
                && matches!(self.peek_at(1), Some(Tok::Punct(":")))
            {
                let n = self.ident()?;
                self.pos += 1;
                Some(n)
            } else {
                None
            };
            let value = self.expr()?;
            args.push(Arg { name, value });
            if !self.eat_punct(",") && !self.is_punct(")") {
                let found = describe(self.peek());
                return self.error(format!("expected `,` or `)` in arguments, found {found}"));
            }
        }
        Ok(args)
    }

    fn primary(&mut self) -> Res<Expr> {
        let line = self.line();
        let Some(tok) = self.peek() else {
            return self.error("unexpected end of template, expected an expression");
        };
        self.pos += 1;
        let kind = match tok {
            Tok::Int(i) => ExprKind::Int(*i),
            Tok::Double(d) => ExprKind::Double(*d),
            Tok::Str(first) => {
                let mut parts = self.str_parts(first)?;
                while let Some(Tok::Str(next)) = self.peek() {
                    self.pos += 1;
                    parts.extend(self.str_parts(next)?);
                }
                ExprKind::Str(parts)
            }
            Tok::Ident(w) => match w.as_str() {
                "null" => ExprKind::Null,
                "true" => ExprKind::Bool(true),
                "false" => ExprKind::Bool(false),
                "const" | "new" => {
                    self.enter()?;
                    let inner = self.postfix();
                    self.depth -= 1;
                    return inner;
                }
                _ => ExprKind::Ident(w.clone()),
            },
            Tok::Punct("(") => {
                let inner = self.expr()?;
                self.expect(")")?;
                return Ok(inner);
            }
            Tok::Punct("<") => {
                self.pos -= 1;
                self.expect("<")?;
                self.type_name()?;
                self.expect(">")?;
                if !self.is_punct("[") {
                    return self.error("expected a list literal after a type argument");
                }
                self.pos += 1;
                ExprKind::List(self.list_items()?)
            }
            Tok::Punct("[") => ExprKind::List(self.list_items()?),
            other => {
                self.pos -= 1;
                let found = describe(Some(other));
                return self.error(format!("expected an expression, found {found}"));
            }
        };
        self.node(kind, line)
    }

    /// The elements of a list literal after its `[`, up to and including `]`.
    fn list_items(&mut self) -> Res<Vec<Expr>> {
        let mut items = Vec::new();
        while !self.eat_punct("]") {
            items.push(self.expr()?);
            if !self.eat_punct(",") && !self.is_punct("]") {
                let found = describe(self.peek());
                return self.error(format!("expected `,` or `]` in a list, found {found}"));
            }
        }
        Ok(items)
    }

    /// Turns lexed string pieces into parts, parsing each `${...}` as an expression.
    fn str_parts(&mut self, pieces: &'t [Piece]) -> Res<Vec<StrPart>> {
        let mut parts = Vec::with_capacity(pieces.len());
        for piece in pieces {
            match piece {
                Piece::Text(t) => parts.push(StrPart::Text(t.clone())),
                Piece::Name(name, line) => {
                    let e = self.node(ExprKind::Ident(name.clone()), *line)?;
                    parts.push(StrPart::Interp(e));
                }
                Piece::Expr(tokens) if tokens.is_empty() => {
                    return self.error("an empty `${}` in a string");
                }
                Piece::Expr(tokens) => {
                    let mut sub = Parser {
                        toks: tokens,
                        pos: 0,
                        depth: self.depth,
                        nodes: self.nodes,
                    };
                    let e = sub.expr()?;
                    if sub.pos != tokens.len() {
                        let found = describe(sub.peek());
                        return sub.error(format!("unexpected {found} in `${{...}}`"));
                    }
                    self.nodes = sub.nodes;
                    parts.push(StrPart::Interp(e));
                }
            }
        }
        Ok(parts)
    }
}

/// A token as an error message shows it.
fn describe(tok: Option<&Tok>) -> String {
    match tok {
        None => "the end of the template".into(),
        Some(Tok::Ident(w)) => format!("`{w}`"),
        Some(Tok::Int(i)) => format!("`{i}`"),
        Some(Tok::Double(d)) => format!("`{d}`"),
        Some(Tok::Str(_)) => "a string".into(),
        Some(Tok::Punct(p)) => format!("`{p}`"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAGE: &str = include_str!("../../tests/fixtures/offer_page.dart");

    #[test]
    fn parses_the_fixture_page() {
        let t = parse(PAGE).expect("test input");
        assert_eq!(t.imports.len(), 2);
        assert_eq!(t.imports[0].uri, "package:flutter/material.dart");
        let entry = t.entry().expect("test input");
        assert_eq!(entry.name, "SpringSalePage");
        assert_eq!(entry.fields[0].ty.as_deref(), Some("OfferData"));
        let ctor = entry.constructor().expect("test input");
        assert_eq!(ctor.params.len(), 2);
        assert!(ctor.params[1].required && ctor.params[1].named);
        let build = entry.method("build").expect("test input");
        assert_eq!(build.annotations, vec!["override"]);
        assert_eq!(build.line, 11);
        assert!(matches!(&build.body[0], Stmt::Local { name, line: 12, .. } if name == "title"));
        let ret = build.returned().expect("test input");
        assert_eq!(ret.line, 13);
        let ExprKind::Call { callee, args } = &ret.kind else {
            panic!("{ret:?}");
        };
        assert_eq!(callee.dotted_name().as_deref(), Some("Scaffold"));
        assert_eq!(args[0].name.as_deref(), Some("backgroundColor"));
        assert_eq!(args[0].value.line, 14);
    }

    #[test]
    fn expression_forms() {
        let e = |src: &str| {
            let t = parse(&format!("class A {{ get x => {src}; }}")).expect("test input");
            t.classes[0].methods[0]
                .returned()
                .expect("test input")
                .kind
                .clone()
        };
        assert!(matches!(
            e("a ?? b + c * d"),
            ExprKind::Binary { op: "??", .. }
        ));
        assert!(matches!(e("x as String"), ExprKind::Cast { ty, .. } if ty == "String"));
        assert!(matches!(e("a ? b : c"), ExprKind::Conditional { .. }));
        assert!(matches!(e("-1"), ExprKind::Unary { op: "-", .. }));
        assert!(matches!(e("<Widget>[a, b,]"), ExprKind::List(items) if items.len() == 2));
        assert!(matches!(e("const Text('a')"), ExprKind::Call { .. }));
        assert!(matches!(e("new A.b()"), ExprKind::Call { .. }));
        assert!(matches!(e("x!.y"), ExprKind::Member { .. }));
        assert!(matches!(e("a is! B"), ExprKind::Binary { op: "is!", .. }));
        let ExprKind::Str(parts) = e("'a$b' \"${c['d']}\" r'e'") else {
            panic!("not a string");
        };
        assert_eq!(parts.len(), 4);
    }

    #[test]
    fn errors_name_the_line() {
        let err = parse("class A {\n  final x = ;\n}").expect_err("an error");
        assert_eq!(err.line(), 2);
        assert!(matches!(err, ParseError::Syntax { .. }));
        assert!(parse("var x = 1;").is_err());
        assert!(parse("class A { Widget build() { if (x) return y; } }").is_err());
        assert!(parse("class A { get x => '${}'; }").is_err());
    }

    #[test]
    fn every_nesting_form_stops_at_the_limit() {
        for (open, close) in [
            ("(", ")"),
            ("[", "]"),
            ("f(", ")"),
            ("-(", ")"),
            ("a[", "]"),
        ] {
            let src = format!(
                "class A {{ get x => {}0{}; }}",
                open.repeat(MAX_NESTING),
                close.repeat(MAX_NESTING)
            );
            assert!(
                matches!(parse(&src), Err(ParseError::TooDeep { .. })),
                "{open}"
            );
        }
        let chain = format!("class A {{ get x => a{}; }}", ".b".repeat(MAX_NESTING));
        assert!(matches!(parse(&chain), Err(ParseError::TooDeep { .. })));
        let sum = format!("class A {{ get x => 1{}; }}", " + 1".repeat(MAX_NESTING));
        assert!(matches!(parse(&sum), Err(ParseError::TooDeep { .. })));
        let ty = format!(
            "class A {{ {}int{} x; }}",
            "List<".repeat(MAX_NESTING),
            ">".repeat(MAX_NESTING)
        );
        assert!(parse(&ty).is_err());
    }
}
