//! The lexer: Dart source to tokens, each with its 1-based line.
//!
//! Keywords are plain [`Tok::Ident`] tokens (the parser gives them meaning), comments are
//! skipped (`//`, `///` and nested `/* */`), and a string literal is one [`Tok::Str`] token
//! whose interpolations (`$name`, `${expr}`) are already split into their own tokens, so the
//! parser never re-reads source text. The lexer never panics: every byte access is checked,
//! and strings nested in interpolations nest at most [`MAX_STRING_NESTING`] deep.

use super::error::ParseError;

/// Deepest nesting of string literals inside interpolations (`'${'${...}'}'`): real
/// templates use one or two levels; the bound keeps the lexer's recursion finite.
pub const MAX_STRING_NESTING: usize = 8;

/// Punctuation, longest first so that `...` is matched before `..` and `.`.
const PUNCTS: &[&str] = &[
    "...", "??=", "?..", "=>", "==", "!=", "<=", ">=", "&&", "||", "??", "?.", "..", "+=", "-=",
    "(", ")", "[", "]", "{", "}", ",", ";", ".", ":", "?", "=", "+", "-", "*", "/", "%", "<", ">",
    "!", "@", "&", "|", "~", "^", "#",
];

/// One token's kind and value.
#[derive(Debug, Clone, PartialEq)]
pub enum Tok {
    /// An identifier or keyword.
    Ident(String),
    /// An integer literal (decimal or `0x` hex).
    Int(i64),
    /// A floating-point literal.
    Double(f64),
    /// A string literal, adjacent literals not yet joined.
    Str(Vec<Piece>),
    /// Punctuation, one of a fixed set.
    Punct(&'static str),
}

/// A part of a string literal.
#[derive(Debug, Clone, PartialEq)]
pub enum Piece {
    /// Literal text, escapes resolved.
    Text(String),
    /// `$name`: an identifier read on the given line.
    Name(String, u32),
    /// `${...}`: the tokens of the interpolated expression.
    Expr(Vec<Token>),
}

/// A token and the line it starts on.
#[derive(Debug, Clone, PartialEq)]
pub struct Token {
    /// What was read.
    pub tok: Tok,
    /// 1-based line.
    pub line: u32,
}

/// Splits `src` into tokens.
///
/// Fails on an unterminated string or comment, an unexpected character or a malformed number,
/// naming the line.
pub fn lex(src: &str) -> Result<Vec<Token>, ParseError> {
    let mut lx = Lexer {
        src: src.as_bytes(),
        pos: 0,
        line: 1,
    };
    lx.tokens(0, false)
}

struct Lexer<'a> {
    src: &'a [u8],
    pos: usize,
    line: u32,
}

fn is_ident_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_' || b == b'$'
}

fn is_ident_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'$'
}

impl Lexer<'_> {
    fn peek(&self, ahead: usize) -> Option<u8> {
        self.src.get(self.pos + ahead).copied()
    }

    fn syntax(&self, message: impl Into<String>) -> ParseError {
        ParseError::Syntax {
            line: self.line,
            message: message.into(),
        }
    }

    /// Advances one byte, counting lines.
    fn bump(&mut self) -> Option<u8> {
        let b = self.peek(0)?;
        self.pos += 1;
        if b == b'\n' {
            self.line += 1;
        }
        Some(b)
    }

    /// Reads tokens to the end of input or, inside an interpolation (`in_interp`), to the
    /// `}` that closes it (consumed, not returned).
    fn tokens(&mut self, nesting: usize, in_interp: bool) -> Result<Vec<Token>, ParseError> {
        let mut out = Vec::new();
        let mut braces = 0usize;
        loop {
            self.skip_trivia()?;
            let Some(b) = self.peek(0) else {
                if in_interp {
                    return Err(self.syntax("unterminated string interpolation `${`"));
                }
                return Ok(out);
            };
            let line = self.line;
            if in_interp && b == b'}' {
                if braces == 0 {
                    self.pos += 1;
                    return Ok(out);
                }
                braces -= 1;
            } else if in_interp && b == b'{' {
                braces += 1;
            }
            let tok = if is_ident_start(b) {
                if b == b'r' && matches!(self.peek(1), Some(b'\'' | b'"')) {
                    self.pos += 1;
                    self.string(nesting, true)?
                } else {
                    let start = self.pos;
                    while self.peek(0).is_some_and(is_ident_char) {
                        self.pos += 1;
                    }
                    Tok::Ident(String::from_utf8_lossy(&self.src[start..self.pos]).into_owned())
                }
            } else if b.is_ascii_digit()
                || (b == b'.' && self.peek(1).is_some_and(|c| c.is_ascii_digit()))
            {
                self.number()?
            } else if b == b'\'' || b == b'"' {
                self.string(nesting, false)?
            } else {
                let rest = &self.src[self.pos..];
                let Some(p) = PUNCTS.iter().find(|p| rest.starts_with(p.as_bytes())) else {
                    let shown = std::str::from_utf8(rest)
                        .ok()
                        .and_then(|s| s.chars().next())
                        .unwrap_or('\u{fffd}');
                    return Err(self.syntax(format!("unexpected character `{shown}`")));
                };
                self.pos += p.len();
                Tok::Punct(p)
            };
            out.push(Token { tok, line });
        }
    }

    /// Skips whitespace and comments.
    fn skip_trivia(&mut self) -> Result<(), ParseError> {
        loop {
            match (self.peek(0), self.peek(1)) {
                (Some(b' ' | b'\t' | b'\r' | b'\n' | 0x0c), _) => {
                    self.bump();
                }
                (Some(b'/'), Some(b'/')) => {
                    while self.peek(0).is_some_and(|b| b != b'\n') {
                        self.pos += 1;
                    }
                }
                (Some(b'/'), Some(b'*')) => {
                    let line = self.line;
                    self.pos += 2;
                    let mut depth = 1usize;
                    while depth > 0 {
                        match (self.peek(0), self.peek(1)) {
                            (None, _) => {
                                return Err(ParseError::Syntax {
                                    line,
                                    message: "unterminated `/*` comment".into(),
                                });
                            }
                            (Some(b'*'), Some(b'/')) => {
                                self.pos += 2;
                                depth -= 1;
                            }
                            (Some(b'/'), Some(b'*')) => {
                                self.pos += 2;
                                depth += 1;
                            }
                            _ => {
                                self.bump();
                            }
                        }
                    }
                }
                _ => return Ok(()),
            }
        }
    }

    fn number(&mut self) -> Result<Tok, ParseError> {
        let start = self.pos;
        if self.peek(0) == Some(b'0') && matches!(self.peek(1), Some(b'x' | b'X')) {
            self.pos += 2;
            let digits = self.pos;
            while self.peek(0).is_some_and(|b| b.is_ascii_hexdigit()) {
                self.pos += 1;
            }
            let text = String::from_utf8_lossy(&self.src[digits..self.pos]);
            return i64::from_str_radix(&text, 16)
                .map(Tok::Int)
                .map_err(|_| self.syntax("malformed hexadecimal number"));
        }
        let mut double = false;
        while self.peek(0).is_some_and(|b| b.is_ascii_digit()) {
            self.pos += 1;
        }
        if self.peek(0) == Some(b'.') && self.peek(1).is_some_and(|b| b.is_ascii_digit()) {
            double = true;
            self.pos += 1;
            while self.peek(0).is_some_and(|b| b.is_ascii_digit()) {
                self.pos += 1;
            }
        }
        if matches!(self.peek(0), Some(b'e' | b'E')) {
            let sign = usize::from(matches!(self.peek(1), Some(b'+' | b'-')));
            if self.peek(1 + sign).is_some_and(|b| b.is_ascii_digit()) {
                double = true;
                self.pos += 1 + sign;
                while self.peek(0).is_some_and(|b| b.is_ascii_digit()) {
                    self.pos += 1;
                }
            }
        }
        let text = String::from_utf8_lossy(&self.src[start..self.pos]);
        if double {
            text.parse()
                .map(Tok::Double)
                .map_err(|_| self.syntax("malformed number"))
        } else {
            text.parse()
                .map(Tok::Int)
                .map_err(|_| self.syntax("integer literal out of range"))
        }
    }

    /// Reads a string literal starting at its opening quote.
    fn string(&mut self, nesting: usize, raw: bool) -> Result<Tok, ParseError> {
        if nesting >= MAX_STRING_NESTING {
            return Err(ParseError::TooDeep { line: self.line });
        }
        let start_line = self.line;
        let quote = self.peek(0).unwrap_or(b'\'');
        let triple = self.peek(1) == Some(quote) && self.peek(2) == Some(quote);
        self.pos += if triple { 3 } else { 1 };
        let mut pieces = Vec::new();
        let mut text: Vec<u8> = Vec::new();
        let unterminated = || ParseError::Syntax {
            line: start_line,
            message: "unterminated string literal".into(),
        };
        loop {
            let Some(b) = self.peek(0) else {
                return Err(unterminated());
            };
            if b == quote
                && (!triple || (self.peek(1) == Some(quote) && self.peek(2) == Some(quote)))
            {
                self.pos += if triple { 3 } else { 1 };
                break;
            }
            if b == b'\n' && !triple {
                return Err(unterminated());
            }
            if b == b'\\' && !raw {
                self.pos += 1;
                self.escape(&mut text)?;
            } else if b == b'$' && !raw && self.peek(1) == Some(b'{') {
                flush(&mut text, &mut pieces);
                self.pos += 2;
                let inner = self.tokens(nesting + 1, true)?;
                pieces.push(Piece::Expr(inner));
            } else if b == b'$'
                && !raw
                && self
                    .peek(1)
                    .is_some_and(|c| c.is_ascii_alphabetic() || c == b'_')
            {
                flush(&mut text, &mut pieces);
                self.pos += 1;
                let start = self.pos;
                while self
                    .peek(0)
                    .is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_')
                {
                    self.pos += 1;
                }
                let name = String::from_utf8_lossy(&self.src[start..self.pos]).into_owned();
                pieces.push(Piece::Name(name, self.line));
            } else {
                text.push(b);
                self.bump();
            }
        }
        flush(&mut text, &mut pieces);
        Ok(Tok::Str(pieces))
    }

    /// Resolves one escape sequence (the backslash already consumed) into `text`.
    fn escape(&mut self, text: &mut Vec<u8>) -> Result<(), ParseError> {
        let Some(b) = self.bump() else {
            return Err(self.syntax("unterminated string literal"));
        };
        let simple = match b {
            b'n' => Some('\n'),
            b't' => Some('\t'),
            b'r' => Some('\r'),
            b'b' => Some('\u{8}'),
            b'f' => Some('\u{c}'),
            b'v' => Some('\u{b}'),
            b'x' => {
                let code = self.hex_digits(2, 2)?;
                Some(char::from_u32(code).unwrap_or('\u{fffd}'))
            }
            b'u' => {
                let code = if self.peek(0) == Some(b'{') {
                    self.pos += 1;
                    let code = self.hex_digits(1, 6)?;
                    if self.bump() != Some(b'}') {
                        return Err(self.syntax("malformed `\\u{...}` escape"));
                    }
                    code
                } else {
                    self.hex_digits(4, 4)?
                };
                Some(char::from_u32(code).unwrap_or('\u{fffd}'))
            }
            _ => None,
        };
        match simple {
            Some(c) => {
                let mut buf = [0u8; 4];
                text.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            }
            None => text.push(b),
        }
        Ok(())
    }

    fn hex_digits(&mut self, min: usize, max: usize) -> Result<u32, ParseError> {
        let mut code = 0u32;
        let mut n = 0;
        while n < max {
            let Some(d) = self.peek(0).and_then(|b| (b as char).to_digit(16)) else {
                break;
            };
            code = code * 16 + d;
            self.pos += 1;
            n += 1;
        }
        if n < min {
            return Err(self.syntax("malformed escape sequence"));
        }
        Ok(code)
    }
}

/// Moves pending literal bytes into a text piece.
fn flush(text: &mut Vec<u8>, pieces: &mut Vec<Piece>) {
    if !text.is_empty() {
        let bytes = std::mem::take(text);
        pieces.push(Piece::Text(String::from_utf8_lossy(&bytes).into_owned()));
    }
}

/// Checks that `(`, `[` and `{` are closed in order, inside interpolations too.
///
/// The error names the line of the unmatched delimiter: the opener's line when it is never
/// closed or closed by the wrong kind, the closer's line when nothing is open.
pub fn check_balance(tokens: &[Token]) -> Result<(), ParseError> {
    let mut open: Vec<(&'static str, u32)> = Vec::new();
    for t in tokens {
        match &t.tok {
            Tok::Punct(p @ ("(" | "[" | "{")) => open.push((p, t.line)),
            Tok::Punct(p @ (")" | "]" | "}")) => {
                let want = match *p {
                    ")" => "(",
                    "]" => "[",
                    _ => "{",
                };
                match open.pop() {
                    Some((o, _)) if o == want => {}
                    Some((o, line)) => {
                        return Err(ParseError::Unbalanced {
                            line,
                            message: format!(
                                "`{o}` opened on line {line} is closed by `{p}` on line {}",
                                t.line
                            ),
                        });
                    }
                    None => {
                        return Err(ParseError::Unbalanced {
                            line: t.line,
                            message: format!("`{p}` on line {} closes nothing", t.line),
                        });
                    }
                }
            }
            Tok::Str(pieces) => {
                for piece in pieces {
                    if let Piece::Expr(inner) = piece {
                        check_balance(inner)?;
                    }
                }
            }
            _ => {}
        }
    }
    match open.pop() {
        Some((o, line)) => Err(ParseError::Unbalanced {
            line,
            message: format!("`{o}` opened on line {line} is never closed"),
        }),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(src: &str) -> Vec<Tok> {
        lex(src)
            .expect("test input")
            .into_iter()
            .map(|t| t.tok)
            .collect()
    }

    #[test]
    fn lexes_idents_numbers_and_punctuation() {
        assert_eq!(
            kinds("Color(0xFF112233) => 1.5e2 ?? x;"),
            vec![
                Tok::Ident("Color".into()),
                Tok::Punct("("),
                Tok::Int(0xFF11_2233),
                Tok::Punct(")"),
                Tok::Punct("=>"),
                Tok::Double(150.0),
                Tok::Punct("??"),
                Tok::Ident("x".into()),
                Tok::Punct(";"),
            ]
        );
    }

    #[test]
    fn strings_split_interpolations_and_resolve_escapes() {
        let toks = lex(r#"'a\n$name ${x['k']}' r'$raw\n'"#).expect("test input");
        let Tok::Str(pieces) = &toks[0].tok else {
            panic!("not a string: {toks:?}");
        };
        assert_eq!(pieces[0], Piece::Text("a\n".into()));
        assert_eq!(pieces[1], Piece::Name("name".into(), 1));
        assert!(matches!(&pieces[3], Piece::Expr(inner) if inner.len() == 4));
        assert_eq!(toks[1].tok, Tok::Str(vec![Piece::Text("$raw\\n".into())]));
    }

    #[test]
    fn lines_are_counted_through_comments_and_triple_strings() {
        let toks = lex("a // c\n/* x\n /* nested */ */ '''one\ntwo''' b").expect("test input");
        assert_eq!(toks[0].line, 1);
        assert_eq!(toks[1].line, 3);
        assert_eq!(toks[2].line, 4);
    }

    #[test]
    fn unterminated_string_names_its_line() {
        assert_eq!(
            lex("x\n'abc").expect_err("an error"),
            ParseError::Syntax {
                line: 2,
                message: "unterminated string literal".into()
            }
        );
        assert!(lex("'${a").is_err());
        assert!(lex("/* open").is_err());
        assert!(lex("x = 9999999999999999999999;").is_err());
    }

    #[test]
    fn string_nesting_is_bounded() {
        let deep = "'${".repeat(MAX_STRING_NESTING + 1);
        assert_eq!(
            lex(&deep).expect_err("an error"),
            ParseError::TooDeep { line: 1 }
        );
    }

    #[test]
    fn balance_names_the_unmatched_line() {
        let err = check_balance(&lex("f(\n[\n)").expect("test input")).expect_err("an error");
        assert_eq!(err.line(), 2);
        let err = check_balance(&lex("a\n)").expect("test input")).expect_err("an error");
        assert_eq!(err.line(), 2);
        let err = check_balance(&lex("{\n(\n)").expect("test input")).expect_err("an error");
        assert_eq!(err.line(), 1);
        assert!(check_balance(&lex("f([{}], '${g(1)}')").expect("test input")).is_ok());
    }
}
