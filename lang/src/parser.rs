//! A hand-written recursive-descent parser from tokens to the [`ast`](super::ast).

use fgvt_memory::{AccessKind, Order};
use fgvt_tree::Span;

use super::ast::*;
use super::error::{did_you_mean, Diag, ErrorKind};
use super::lexer::{lex, unquote, Tok, Token};

/// Parses a whole model file. `file` is the file's index in the source map (for spans).
pub(crate) fn parse_file(file: u32, text: &str) -> Result<File, Diag> {
    let mut p = Parser::new(file, text)?;
    let mut out = File::default();
    loop {
        match p.peek() {
            Tok::Object => out.objects.push(p.object()?),
            Tok::Record => out.records.push(p.record()?),
            Tok::Eof => break,
            _ => return Err(p.expected("`object` or `record`")),
        }
    }
    Ok(out)
}

/// How deeply expressions, statements and types may nest.
///
/// The parser, the compiler and `Drop` all recurse over the syntax tree, so an unbounded
/// nesting (200,000 parentheses) would overflow the stack; no model written by hand comes near
/// this bound. Chains like `a + b + c` or `x.f.g` build trees as deep as they are long, so each
/// link counts as one level too: the count over-approximates the tree's depth, never under.
pub const MAX_NESTING: usize = 128;

/// The parser's cursor over the tokens of one file.
pub(crate) struct Parser<'a> {
    file: u32,
    text: &'a str,
    toks: Vec<Token>,
    pos: usize,
    /// Levels of nesting open at the cursor (see [`MAX_NESTING`]).
    depth: usize,
}

impl<'a> Parser<'a> {
    /// Lexes `text`; a lexing error is reported as a syntax error.
    pub fn new(file: u32, text: &'a str) -> Result<Self, Diag> {
        let toks = lex(text).map_err(|(s, e)| {
            let what = &text[s..e.min(text.len())];
            let (message, help) = if what.starts_with("/*") {
                (
                    "unterminated block comment".to_string(),
                    "close it with `*/`",
                )
            } else if what.starts_with('"') {
                ("unterminated string".to_string(), "close it with `\"`")
            } else {
                (
                    format!(
                        "unexpected character `{}`",
                        what.chars().next().unwrap_or(' ')
                    ),
                    "remove it",
                )
            };
            Diag::new(
                ErrorKind::Syntax,
                Span::new(file, s, e),
                message,
                "not a token",
            )
            .help(help)
        })?;
        Ok(Parser {
            file,
            text,
            toks,
            pos: 0,
            depth: 0,
        })
    }

    /// Opens `levels` more levels of nesting, or fails at the cursor past [`MAX_NESTING`].
    /// Every successful call is paired with a [`Parser::leave`] of the same count.
    fn enter(&mut self, levels: usize) -> Result<(), Diag> {
        if self.depth + levels > MAX_NESTING {
            return Err(Diag::new(
                ErrorKind::Syntax,
                self.cur_span(),
                format!("nested more than {MAX_NESTING} levels deep"),
                "too deep here",
            )
            .help("split the expression or statement with local variables or functions"));
        }
        self.depth += levels;
        Ok(())
    }

    fn leave(&mut self, levels: usize) {
        self.depth -= levels;
    }

    /// Runs `parse` one nesting level deeper.
    fn nested<T>(&mut self, parse: impl FnOnce(&mut Self) -> Result<T, Diag>) -> Result<T, Diag> {
        self.enter(1)?;
        let result = parse(self);
        self.leave(1);
        result
    }

    fn peek(&self) -> Tok {
        self.toks[self.pos].tok
    }

    fn peek_at(&self, n: usize) -> Tok {
        self.toks[(self.pos + n).min(self.toks.len() - 1)].tok
    }

    fn cur_span(&self) -> Span {
        let t = self.toks[self.pos];
        Span::new(self.file, t.start, t.end)
    }

    /// The span from the start of token `from` to the end of the last consumed token.
    fn since(&self, from: usize) -> Span {
        let start = self.toks[from].start;
        let end = if self.pos == 0 {
            start
        } else {
            self.toks[self.pos - 1].end.max(start)
        };
        Span::new(self.file, start, end)
    }

    fn bump(&mut self) -> Token {
        let t = self.toks[self.pos];
        if t.tok != Tok::Eof {
            self.pos += 1;
        }
        t
    }

    fn eat(&mut self, tok: Tok) -> bool {
        if self.peek() == tok {
            self.bump();
            true
        } else {
            false
        }
    }

    fn slice(&self, t: Token) -> &'a str {
        &self.text[t.start..t.end]
    }

    /// "expected X, found Y" at the current token.
    fn expected(&self, what: &str) -> Diag {
        let t = self.toks[self.pos];
        let found = match t.tok {
            Tok::Ident | Tok::Int => format!("`{}`", self.slice(t)),
            other => other.describe().to_string(),
        };
        let mut d = Diag::new(
            ErrorKind::Syntax,
            self.cur_span(),
            format!("expected {what}, found {found}"),
            format!("expected {what}"),
        );
        if what.contains("`;`") && self.pos > 0 {
            // A missing semicolon is best shown right after the previous token.
            let prev = self.toks[self.pos - 1];
            d.span = Span::new(self.file, prev.end, prev.end);
            d = d.help("add `;` at the end of the statement");
        }
        d
    }

    fn expect(&mut self, tok: Tok) -> Result<Token, Diag> {
        if self.peek() == tok {
            Ok(self.bump())
        } else {
            Err(self.expected(tok.describe()))
        }
    }

    fn ident(&mut self) -> Result<Ident, Diag> {
        if self.peek() == Tok::Ident {
            let t = self.bump();
            Ok(Ident {
                name: self.slice(t).to_string(),
                span: Span::new(self.file, t.start, t.end),
            })
        } else {
            Err(self.expected("an identifier"))
        }
    }

    fn int(&mut self) -> Result<(i64, Span), Diag> {
        let span = self.cur_span();
        let t = self.expect(Tok::Int)?;
        let v = self.slice(t).parse::<i64>().map_err(|_| {
            Diag::new(
                ErrorKind::Syntax,
                span,
                "integer literal too large",
                "does not fit in 64 bits",
            )
        })?;
        Ok((v, span))
    }

    fn object(&mut self) -> Result<ObjectDecl, Diag> {
        let from = self.pos;
        self.expect(Tok::Object)?;
        let name = self.ident()?;
        self.expect(Tok::LBrace)?;
        let mut members = Vec::new();
        while !self.eat(Tok::RBrace) {
            members.extend(self.member()?);
        }
        Ok(ObjectDecl {
            name,
            members,
            span: self.since(from),
        })
    }

    fn record(&mut self) -> Result<RecordDecl, Diag> {
        let from = self.pos;
        self.expect(Tok::Record)?;
        let name = self.ident()?;
        self.expect(Tok::LBrace)?;
        let mut fields = Vec::new();
        let mut finals = Vec::new();
        while !self.eat(Tok::RBrace) {
            if self.peek() == Tok::Eof {
                return Err(self.expected("a field or `}`"));
            }
            let is_final = self.eat(Tok::Final);
            let ty = self.ty()?;
            loop {
                fields.push((ty.clone(), self.ident()?));
                finals.push(is_final);
                if !self.eat(Tok::Comma) {
                    break;
                }
            }
            self.expect(Tok::Semi)?;
        }
        Ok(RecordDecl {
            name,
            fields,
            finals,
            span: self.since(from),
        })
    }

    /// `int`, `Node`, `(Node, bool)`.
    fn ty(&mut self) -> Result<Type, Diag> {
        self.nested(Self::ty_unnested)
    }

    fn ty_unnested(&mut self) -> Result<Type, Diag> {
        if self.peek() == Tok::LParen {
            let from = self.pos;
            self.bump();
            let mut items = vec![self.ty()?];
            while self.eat(Tok::Comma) {
                items.push(self.ty()?);
            }
            self.expect(Tok::RParen)?;
            Ok(Type::Tuple(items, self.since(from)))
        } else if self.peek() == Tok::Ident {
            Ok(Type::Named(self.ident()?))
        } else {
            Err(self.expected("a type"))
        }
    }

    fn member(&mut self) -> Result<Vec<Member>, Diag> {
        match self.peek() {
            Tok::Shared => {
                let from = self.pos;
                self.bump();
                let is_final = self.eat(Tok::Final);
                let ty = self.ty()?;
                let name = self.ident()?;
                let len = if self.eat(Tok::LBracket) {
                    let n = self.int()?;
                    self.expect(Tok::RBracket)?;
                    Some(n)
                } else {
                    None
                };
                let init = if self.eat(Tok::Assign) {
                    if self.peek() == Tok::LBrace {
                        let lfrom = self.pos;
                        self.bump();
                        let mut items = Vec::new();
                        if !self.eat(Tok::RBrace) {
                            loop {
                                items.push(self.expr()?);
                                if self.eat(Tok::RBrace) {
                                    break;
                                }
                                self.expect(Tok::Comma)?;
                            }
                        }
                        Some(Init::List(items, self.since(lfrom)))
                    } else {
                        Some(Init::Expr(self.expr()?))
                    }
                } else {
                    None
                };
                let span = self.since(from);
                self.expect(Tok::Semi)?;
                Ok(vec![Member::Shared {
                    ty,
                    name,
                    len,
                    is_final,
                    init,
                    span,
                }])
            }
            Tok::Lock => {
                self.bump();
                let mut out = vec![Member::Lock(self.ident()?)];
                while self.eat(Tok::Comma) {
                    out.push(Member::Lock(self.ident()?));
                }
                self.expect(Tok::Semi)?;
                Ok(out)
            }
            Tok::Constructor => {
                self.bump();
                Ok(vec![Member::Constructor(self.block()?)])
            }
            Tok::Op | Tok::Fn => {
                let from = self.pos;
                let is_op = self.bump().tok == Tok::Op;
                let name = self.ident()?;
                self.expect(Tok::LParen)?;
                let mut params = Vec::new();
                if !self.eat(Tok::RParen) {
                    loop {
                        params.push(self.param()?);
                        if self.eat(Tok::RParen) {
                            break;
                        }
                        self.expect(Tok::Comma)?;
                    }
                }
                let header = self.since(from);
                let body = self.block()?;
                Ok(vec![Member::Func(FuncDecl {
                    is_op,
                    name,
                    params,
                    body,
                    header,
                })])
            }
            Tok::Record => Ok(vec![Member::Record(self.record()?)]),
            _ => Err(self.expected("`shared`, `lock`, `constructor`, `op`, `fn`, `record` or `}`")),
        }
    }

    /// `T x`, `(T, U) x` or `x`.
    fn param(&mut self) -> Result<Param, Diag> {
        if self.peek() == Tok::Ident && self.peek_at(1) == Tok::Ident || self.peek() == Tok::LParen
        {
            let ty = self.ty()?;
            Ok(Param {
                ty: Some(ty),
                name: self.ident()?,
            })
        } else {
            Ok(Param {
                ty: None,
                name: self.ident()?,
            })
        }
    }

    fn block(&mut self) -> Result<Block, Diag> {
        let from = self.pos;
        self.expect(Tok::LBrace)?;
        let mut stmts = Vec::new();
        while !self.eat(Tok::RBrace) {
            if self.peek() == Tok::Eof {
                return Err(self.expected("a statement or `}`"));
            }
            stmts.push(self.stmt()?);
        }
        Ok(Block {
            stmts,
            span: self.since(from),
        })
    }

    /// Whether the tokens at the cursor start a typed local declaration:
    /// `T x` or `(T, U) x` (a parenthesized group followed by an identifier).
    fn at_typed_decl(&self) -> bool {
        match self.peek() {
            Tok::Ident => self.peek_at(1) == Tok::Ident,
            Tok::LParen => {
                let mut depth = 0usize;
                let mut i = self.pos;
                while i < self.toks.len() {
                    match self.toks[i].tok {
                        Tok::LParen => depth += 1,
                        Tok::RParen => {
                            depth -= 1;
                            if depth == 0 {
                                return self.toks.get(i + 1).is_some_and(|t| t.tok == Tok::Ident);
                            }
                        }
                        Tok::Semi | Tok::LBrace | Tok::RBrace | Tok::Eof => return false,
                        _ => {}
                    }
                    i += 1;
                }
                false
            }
            _ => false,
        }
    }

    fn paren_expr(&mut self) -> Result<Expr, Diag> {
        self.expect(Tok::LParen)?;
        let e = self.expr()?;
        self.expect(Tok::RParen)?;
        Ok(e)
    }

    /// The operand of `lock`, `unlock`, `synchronized`: `this` or an expression.
    fn monitor(&mut self) -> Result<Expr, Diag> {
        self.expect(Tok::LParen)?;
        let e = if self.peek() == Tok::This {
            let s = self.cur_span();
            self.bump();
            Expr::This(s)
        } else {
            self.expr()?
        };
        self.expect(Tok::RParen)?;
        Ok(e)
    }

    fn label_opt(&mut self) -> Result<Option<Ident>, Diag> {
        if self.peek() == Tok::Ident {
            Ok(Some(self.ident()?))
        } else {
            Ok(None)
        }
    }

    fn stmt(&mut self) -> Result<Stmt, Diag> {
        self.nested(Self::stmt_unnested)
    }

    fn stmt_unnested(&mut self) -> Result<Stmt, Diag> {
        let from = self.pos;
        match self.peek() {
            Tok::LBrace => Ok(Stmt::Block(self.block()?)),
            Tok::Semi => {
                let s = self.cur_span();
                self.bump();
                Ok(Stmt::Empty(s))
            }
            Tok::Ident if self.peek_at(1) == Tok::Colon => {
                let label = self.ident()?;
                self.bump();
                match self.peek() {
                    Tok::Loop | Tok::While => self.loop_stmt(Some(label), from),
                    _ => Err(self.expected("`loop` or `while` after the label")),
                }
            }
            Tok::Loop | Tok::While => self.loop_stmt(None, from),
            Tok::Ident if self.at_fence() => {
                self.bump();
                self.expect(Tok::LParen)?;
                let order = self.ordering(AccessKind::Fence, "a fence")?;
                self.expect(Tok::RParen)?;
                let span = self.since(from);
                self.expect(Tok::Semi)?;
                Ok(Stmt::Fence(order, span))
            }
            Tok::Var => {
                self.bump();
                let pat = if self.peek() == Tok::LParen {
                    let pfrom = self.pos;
                    self.bump();
                    let mut names = vec![self.ident()?];
                    while self.eat(Tok::Comma) {
                        names.push(self.ident()?);
                    }
                    self.expect(Tok::RParen)?;
                    Pattern::Tuple(names, self.since(pfrom))
                } else {
                    Pattern::Name(self.ident()?)
                };
                self.expect(Tok::Assign)?;
                let init = Some(self.expr()?);
                let span = self.since(from);
                self.expect(Tok::Semi)?;
                Ok(Stmt::Local {
                    ty: None,
                    pat,
                    init,
                    span,
                })
            }
            Tok::If => {
                self.bump();
                let cond = self.paren_expr()?;
                let then = Box::new(self.stmt()?);
                let els = if self.eat(Tok::Else) {
                    Some(Box::new(self.stmt()?))
                } else {
                    None
                };
                Ok(Stmt::If {
                    cond,
                    then,
                    els,
                    span: self.since(from),
                })
            }
            Tok::Break | Tok::Continue => {
                let is_break = self.bump().tok == Tok::Break;
                let label = self.label_opt()?;
                let span = self.since(from);
                self.expect(Tok::Semi)?;
                Ok(if is_break {
                    Stmt::Break(label, span)
                } else {
                    Stmt::Continue(label, span)
                })
            }
            Tok::Return => {
                self.bump();
                let value = if self.peek() == Tok::Semi {
                    None
                } else {
                    Some(self.expr()?)
                };
                let span = self.since(from);
                self.expect(Tok::Semi)?;
                Ok(Stmt::Return(value, span))
            }
            Tok::Atomic => {
                self.bump();
                let body = self.block()?;
                Ok(Stmt::Atomic(body, self.since(from)))
            }
            Tok::Lock | Tok::Unlock => {
                let is_lock = self.bump().tok == Tok::Lock;
                let m = self.monitor()?;
                let span = self.since(from);
                self.expect(Tok::Semi)?;
                Ok(if is_lock {
                    Stmt::Lock(m, span)
                } else {
                    Stmt::Unlock(m, span)
                })
            }
            Tok::Synchronized => {
                self.bump();
                let monitor = self.monitor()?;
                let header = self.since(from);
                let body = self.block()?;
                let close = self.since(self.pos - 1);
                Ok(Stmt::Synchronized {
                    monitor,
                    body,
                    header,
                    close,
                })
            }
            Tok::Await => {
                self.bump();
                let c = self.paren_expr()?;
                let span = self.since(from);
                self.expect(Tok::Semi)?;
                Ok(Stmt::Await(c, span))
            }
            Tok::Assert => {
                self.bump();
                self.expect(Tok::LParen)?;
                let c = self.expr()?;
                let msg = if self.eat(Tok::Comma) {
                    let t = self.expect(Tok::Str)?;
                    Some(unquote(self.slice(t)))
                } else {
                    None
                };
                self.expect(Tok::RParen)?;
                let span = self.since(from);
                self.expect(Tok::Semi)?;
                Ok(Stmt::Assert(c, msg, span))
            }
            _ if self.at_typed_decl() => {
                let ty = self.ty()?;
                let name = self.ident()?;
                let init = if self.eat(Tok::Assign) {
                    Some(self.expr()?)
                } else {
                    None
                };
                let span = self.since(from);
                self.expect(Tok::Semi)?;
                Ok(Stmt::Local {
                    ty: Some(ty),
                    pat: Pattern::Name(name),
                    init,
                    span,
                })
            }
            _ => {
                let e = self.expr()?;
                if self.eat(Tok::Assign) {
                    let target = self.to_lvalue(e)?;
                    let value = self.expr()?;
                    let span = self.since(from);
                    self.expect(Tok::Semi)?;
                    Ok(Stmt::Assign {
                        target,
                        value,
                        order: None,
                        span,
                    })
                } else if let Expr::Store(target, value, order, span) = e {
                    self.expect(Tok::Semi)?;
                    Ok(Stmt::Assign {
                        target: *target,
                        value: *value,
                        order: Some(order),
                        span,
                    })
                } else {
                    self.expect(Tok::Semi)?;
                    Ok(Stmt::Expr(e))
                }
            }
        }
    }

    fn loop_stmt(&mut self, label: Option<Ident>, from: usize) -> Result<Stmt, Diag> {
        if self.eat(Tok::Loop) {
            let body = self.block()?;
            Ok(Stmt::Loop {
                label,
                body,
                span: self.since(from),
            })
        } else {
            self.expect(Tok::While)?;
            let cond = self.paren_expr()?;
            let body = Box::new(self.stmt()?);
            Ok(Stmt::While {
                label,
                cond,
                body,
                span: self.since(from),
            })
        }
    }

    /// Reinterprets an expression as an assignable place.
    fn to_lvalue(&self, e: Expr) -> Result<LValue, Diag> {
        match e {
            Expr::Name(id) => Ok(LValue::Name(id)),
            Expr::Index(a, i, s) => Ok(LValue::Index(a, i, s)),
            Expr::Field(b, f, s) => Ok(LValue::Field(b, f, s)),
            Expr::Tuple(items, s) => {
                Ok(LValue::Tuple(items.into_iter().map(|e| self.to_lvalue(e)).collect::<Result<_, _>>()?, s))
            }
            other => Err(Diag::new(ErrorKind::Invalid, other.span(), "cannot assign to this expression", "not a variable, array element or field")
                .help("assign to a variable `x`, an array element `a[i]`, a field `n.f`, or a tuple of them `(a, b)`")),
        }
    }

    /// Parses one expression.
    pub fn expr(&mut self) -> Result<Expr, Diag> {
        self.nested(|p| p.binary(0))
    }

    /// Precedence climbing over C's binary operator levels.
    fn binary(&mut self, level: usize) -> Result<Expr, Diag> {
        const LEVELS: &[&[(Tok, BinOp)]] = &[
            &[(Tok::OrOr, BinOp::Or)],
            &[(Tok::AndAnd, BinOp::And)],
            &[(Tok::EqEq, BinOp::Eq), (Tok::NotEq, BinOp::Ne)],
            &[
                (Tok::Lt, BinOp::Lt),
                (Tok::Le, BinOp::Le),
                (Tok::Gt, BinOp::Gt),
                (Tok::Ge, BinOp::Ge),
            ],
            &[(Tok::Plus, BinOp::Add), (Tok::Minus, BinOp::Sub)],
            &[
                (Tok::Star, BinOp::Mul),
                (Tok::Slash, BinOp::Div),
                (Tok::Percent, BinOp::Rem),
            ],
        ];
        if level == LEVELS.len() {
            return self.unary();
        }
        let mut links = 0;
        let result = self.binary_chain(LEVELS[level], level, &mut links);
        self.leave(links);
        result
    }

    /// `a op b op c` at one precedence level; `links` counts the levels entered, one a link,
    /// since each deepens the left-leaning tree by one.
    fn binary_chain(
        &mut self,
        ops: &[(Tok, BinOp)],
        level: usize,
        links: &mut usize,
    ) -> Result<Expr, Diag> {
        let from = self.pos;
        let mut lhs = self.binary(level + 1)?;
        while let Some(&(_, op)) = ops.iter().find(|(t, _)| *t == self.peek()) {
            self.enter(1)?;
            *links += 1;
            self.bump();
            let rhs = self.binary(level + 1)?;
            lhs = Expr::Binary(op, Box::new(lhs), Box::new(rhs), self.since(from));
        }
        Ok(lhs)
    }

    fn unary(&mut self) -> Result<Expr, Diag> {
        let from = self.pos;
        let op = match self.peek() {
            Tok::Minus => UnOp::Neg,
            Tok::Bang => UnOp::Not,
            _ => return self.postfix(),
        };
        self.bump();
        let e = self.nested(Self::unary)?;
        // Fold `-5` into a literal so that `i64::MIN` style constants and patterns stay simple.
        if let (UnOp::Neg, Expr::Int(v, _)) = (op, &e) {
            return Ok(Expr::Int(-*v, self.since(from)));
        }
        Ok(Expr::Unary(op, Box::new(e), self.since(from)))
    }

    fn postfix(&mut self) -> Result<Expr, Diag> {
        let mut links = 0;
        let result = self.postfix_chain(&mut links);
        self.leave(links);
        result
    }

    /// `e.f`, `e.0`, `a[i]` chains; `links` counts the levels entered (each link is one).
    fn postfix_chain(&mut self, links: &mut usize) -> Result<Expr, Diag> {
        let from = self.pos;
        let mut e = self.primary()?;
        loop {
            if matches!(self.peek(), Tok::Dot | Tok::LBracket) {
                self.enter(1)?;
                *links += 1;
            }
            if self.eat(Tok::Dot) {
                if self.peek() == Tok::Int {
                    let (i, _) = self.int()?;
                    e = Expr::Proj(Box::new(e), i as usize, self.since(from));
                } else if self.peek() == Tok::Ident && self.peek_at(1) == Tok::LParen {
                    e = self.access_method(e, from)?;
                } else if self.peek() == Tok::Ident {
                    let f = self.ident()?;
                    e = Expr::Field(Box::new(e), f, self.since(from));
                } else {
                    return Err(self.expected("a field name or a tuple index"));
                }
            } else if self.peek() == Tok::LBracket {
                let Expr::Name(array) = e else {
                    return Err(Diag::new(
                        ErrorKind::Invalid,
                        self.cur_span(),
                        "only shared arrays can be indexed",
                        "indexing here",
                    )
                    .help("index a shared array by its name, as in `d[i]`"));
                };
                self.bump();
                let index = self.expr()?;
                self.expect(Tok::RBracket)?;
                e = Expr::Index(array, Box::new(index), self.since(from));
            } else {
                return Ok(e);
            }
        }
    }

    fn args(&mut self) -> Result<Vec<Expr>, Diag> {
        self.expect(Tok::LParen)?;
        let mut args = Vec::new();
        if !self.eat(Tok::RParen) {
            loop {
                args.push(self.expr()?);
                if self.eat(Tok::RParen) {
                    break;
                }
                if self.peek() != Tok::Comma {
                    return Err(self.expected("`,` or `)`"));
                }
                self.bump();
            }
        }
        Ok(args)
    }

    fn primary(&mut self) -> Result<Expr, Diag> {
        let from = self.pos;
        let span = self.cur_span();
        match self.peek() {
            Tok::Int => {
                let (v, s) = self.int()?;
                Ok(Expr::Int(v, s))
            }
            Tok::True | Tok::False => Ok(Expr::Bool(self.bump().tok == Tok::True, span)),
            Tok::Null => {
                self.bump();
                Ok(Expr::Null(span))
            }
            Tok::Str => {
                let t = self.bump();
                Ok(Expr::Str(unquote(self.slice(t)), span))
            }
            Tok::This => {
                self.bump();
                Ok(Expr::This(span))
            }
            Tok::Ident => {
                let id = self.ident()?;
                if self.peek() == Tok::LParen {
                    let args = self.args()?;
                    Ok(Expr::Call(id, args, self.since(from)))
                } else {
                    Ok(Expr::Name(id))
                }
            }
            Tok::New => {
                self.bump();
                let rec = self.ident()?;
                let args = self.args()?;
                Ok(Expr::New(rec, args, self.since(from)))
            }
            Tok::Cas | Tok::Dcas => {
                let is_cas = self.bump().tok == Tok::Cas;
                let args = self.args()?;
                let span = self.since(from);
                let (want, name) = if is_cas { (3, "cas") } else { (6, "dcas") };
                let mut args = args;
                let orders = if is_cas && matches!(args.len(), 4 | 5) {
                    let mut written = args.split_off(3).into_iter();
                    let success = self.ordering_arg(written.next(), AccessKind::Rmw, "a `cas`")?;
                    let failure = match written.next() {
                        Some(e) => {
                            self.ordering_arg(Some(e), AccessKind::Load, "a failed `cas`")?
                        }
                        // C++'s one-order form: the failure is the success's load side.
                        None => Ordering {
                            order: match success.order {
                                Order::AcqRel => Order::Acquire,
                                Order::Release => Order::Relaxed,
                                other => other,
                            },
                            span: success.span,
                        },
                    };
                    Some(CasOrders { success, failure })
                } else {
                    None
                };
                if args.len() != want {
                    let help = if is_cas {
                        "write `cas(location, expected, new)`, or with orderings \
                         `cas(location, expected, new, acq_rel, acquire)`"
                    } else {
                        "write `dcas(location1, location2, expected1, expected2, new1, new2)`"
                    };
                    return Err(Diag::new(
                        ErrorKind::Arity,
                        span,
                        if is_cas {
                            format!(
                                "`cas` takes 3 arguments (5 with orderings), found {}",
                                args.len()
                            )
                        } else {
                            format!("`{name}` takes {want} arguments, found {}", args.len())
                        },
                        "wrong number of arguments",
                    )
                    .help(help));
                }
                let mut args = args.into_iter();
                let loc = |e: Expr| -> Result<LValue, Diag> {
                    match e {
                        Expr::Name(_) | Expr::Index(..) | Expr::Field(..) => self.to_lvalue(e),
                        other => Err(Diag::new(
                            ErrorKind::Invalid,
                            other.span(),
                            format!("`{name}` needs a shared location here"),
                            "not a location",
                        )
                        .help(
                            "pass a shared variable `x`, an array element `a[i]` or a field `n.f`",
                        )),
                    }
                };
                if is_cas {
                    let l = loc(args.next().unwrap_or(Expr::Null(span)))?;
                    let e = args.next().unwrap_or(Expr::Null(span));
                    let n = args.next().unwrap_or(Expr::Null(span));
                    Ok(Expr::Cas(
                        Box::new(l),
                        Box::new(e),
                        Box::new(n),
                        orders,
                        span,
                    ))
                } else {
                    let a: Vec<Expr> = args.collect();
                    let mut a = a.into_iter();
                    let l1 = loc(a.next().unwrap_or(Expr::Null(span)))?;
                    let l2 = loc(a.next().unwrap_or(Expr::Null(span)))?;
                    let rest: Vec<Expr> = a.collect();
                    let rest: [Expr; 4] = rest.try_into().map_err(|_| {
                        Diag::new(ErrorKind::Arity, span, "`dcas` takes 6 arguments", "here")
                    })?;
                    Ok(Expr::Dcas(Box::new([l1, l2]), Box::new(rest), span))
                }
            }
            Tok::LParen => {
                self.bump();
                let first = self.expr()?;
                if self.eat(Tok::RParen) {
                    return Ok(first);
                }
                let mut items = vec![first];
                while self.eat(Tok::Comma) {
                    items.push(self.expr()?);
                }
                if self.peek() != Tok::RParen {
                    return Err(self.expected("`,` or `)`"));
                }
                self.bump();
                Ok(Expr::Tuple(items, self.since(from)))
            }
            _ => Err(self.expected("an expression")),
        }
    }
    /// Whether the cursor is at a `fence(order)` statement: `fence` is no keyword (a model may
    /// name a function so), only `fence` applied to an ordering is a fence.
    fn at_fence(&self) -> bool {
        let t = self.toks[self.pos];
        self.slice(t) == "fence"
            && self.peek_at(1) == Tok::LParen
            && self.peek_at(2) == Tok::Ident
            && self.peek_at(3) == Tok::RParen
            && ordering_named(self.slice(self.toks[self.pos + 2])).is_some()
    }

    /// `.load(order)` or `.store(value, order)` on the location `target` (the method's name
    /// is at the cursor, after the dot).
    fn access_method(&mut self, target: Expr, from: usize) -> Result<Expr, Diag> {
        let method = self.ident()?;
        let is_load = match method.name.as_str() {
            "load" => true,
            "store" => false,
            other => {
                return Err(Diag::new(
                    ErrorKind::Syntax,
                    method.span,
                    format!("`{other}` is not an access of a shared location"),
                    "not `load` or `store`",
                )
                .maybe_help(did_you_mean(other, ["load", "store"]))
                .help_if_none(
                    "a shared location is read with `x.load(order)` and written with \
                     `x.store(value, order)`; fields take no calls",
                ))
            }
        };
        let place =
            match target {
                Expr::Name(_) | Expr::Index(..) | Expr::Field(..) => self.to_lvalue(target)?,
                other => return Err(Diag::new(
                    ErrorKind::Invalid,
                    other.span(),
                    format!("`.{}` needs a shared location", method.name),
                    "not a location",
                )
                .help(
                    "call it on a shared variable `x`, an array element `a[i]` or a field `n.f`",
                )),
            };
        self.expect(Tok::LParen)?;
        if is_load {
            let order = self.ordering(AccessKind::Load, "a load")?;
            self.expect(Tok::RParen)?;
            Ok(Expr::Load(Box::new(place), order, self.since(from)))
        } else {
            let value = self.expr()?;
            self.expect(Tok::Comma)?;
            let order = self.ordering(AccessKind::Store, "a store")?;
            self.expect(Tok::RParen)?;
            Ok(Expr::Store(
                Box::new(place),
                Box::new(value),
                order,
                self.since(from),
            ))
        }
    }

    /// A memory ordering at the cursor, which an access of `kind` (`what`, in messages) must
    /// be able to take.
    fn ordering(&mut self, kind: AccessKind, what: &str) -> Result<Ordering, Diag> {
        if self.peek() != Tok::Ident {
            return Err(self.expected(
                "a memory ordering (`relaxed`, `acquire`, `release`, `acq_rel` or `seq_cst`)",
            ));
        }
        let id = self.ident()?;
        ordering_of(&id.name, id.span, kind, what)
    }

    /// An ordering written as an argument (of `cas`), already parsed as an expression.
    fn ordering_arg(
        &self,
        arg: Option<Expr>,
        kind: AccessKind,
        what: &str,
    ) -> Result<Ordering, Diag> {
        match arg {
            Some(Expr::Name(id)) => ordering_of(&id.name, id.span, kind, what),
            Some(other) => Err(Diag::new(
                ErrorKind::Syntax,
                other.span(),
                "expected a memory ordering",
                "not an ordering",
            )
            .help("write `relaxed`, `acquire`, `release`, `acq_rel` or `seq_cst`")),
            None => Err(Diag::new(
                ErrorKind::Syntax,
                self.cur_span(),
                "expected a memory ordering",
                "here",
            )),
        }
    }
}

/// The memory orderings as the language spells them (C++'s `memory_order_…` and Rust's
/// `Ordering::…` in lower case).
const ORDERINGS: [(&str, Order); 5] = [
    ("relaxed", Order::Relaxed),
    ("acquire", Order::Acquire),
    ("release", Order::Release),
    ("acq_rel", Order::AcqRel),
    ("seq_cst", Order::SeqCst),
];

/// The ordering spelled `name`, if it is one.
pub(crate) fn ordering_named(name: &str) -> Option<Order> {
    ORDERINGS.iter().find(|(n, _)| *n == name).map(|(_, o)| *o)
}

/// How the language spells `order`: `relaxed`, `acquire`, `release`, `acq_rel`, `seq_cst`.
pub fn ordering_name(order: Order) -> &'static str {
    ORDERINGS
        .iter()
        .find(|(_, o)| *o == order)
        .map(|(n, _)| *n)
        .expect("every order has a name")
}

/// The ordering `name` written at `span`, checked to be one an access of `kind` (`what`, in
/// messages) can take: the rules of Rust's `std` (a load is never `release` or `acq_rel`, a
/// store never `acquire` or `acq_rel`), and no `relaxed` fence (it orders nothing).
fn ordering_of(name: &str, span: Span, kind: AccessKind, what: &str) -> Result<Ordering, Diag> {
    let Some(order) = ordering_named(name) else {
        let lower = name
            .to_ascii_lowercase()
            .replace("seqcst", "seq_cst")
            .replace("acqrel", "acq_rel");
        let hint = ordering_named(&lower)
            .map(|o| format!("did you mean `{}`?", ordering_name(o)))
            .or_else(|| did_you_mean(name, ORDERINGS.iter().map(|(n, _)| *n)));
        return Err(Diag::new(
            ErrorKind::Syntax,
            span,
            format!("`{name}` is not a memory ordering"),
            "not an ordering",
        )
        .maybe_help(hint)
        .help_if_none(
            "the orderings are `relaxed`, `acquire`, `release`, `acq_rel` and `seq_cst`",
        ));
    };
    let valid = if kind == AccessKind::Fence {
        order != Order::Relaxed
    } else {
        order.is_valid_for(kind)
    };
    if !valid {
        let allowed = match kind {
            AccessKind::Load => "`relaxed`, `acquire` or `seq_cst`",
            AccessKind::Store => "`relaxed`, `release` or `seq_cst`",
            AccessKind::Rmw => "any ordering",
            AccessKind::Fence => "`acquire`, `release`, `acq_rel` or `seq_cst`",
        };
        let why = match kind {
            AccessKind::Load => "a load only reads: it has no release side",
            AccessKind::Store => "a store only writes: it has no acquire side",
            AccessKind::Fence => "a relaxed fence orders nothing",
            AccessKind::Rmw => "",
        };
        return Err(Diag::new(
            ErrorKind::Invalid,
            span,
            format!("{what} cannot be `{name}`"),
            why,
        )
        .help(format!("{what} takes {allowed}, as in Rust and C++")));
    }
    Ok(Ordering { order, span })
}
