//! The lexer: turns model source text into tokens with byte spans.

use logos::Logos;

/// A token kind. Literal payloads (identifier names, numbers, strings) are read back from
/// the source text through the token's span, which keeps this type `Copy`.
#[derive(Logos, Clone, Copy, Debug, PartialEq, Eq)]
// Whitespace, `//` line comments and `/* */` block comments separate tokens.
#[logos(skip r"[ \t\r\n\f]+")]
#[logos(skip(r"//[^\n]*", allow_greedy = true))]
#[logos(skip r"/\*([^*]|\*+[^*/])*\*+/")]
pub enum Tok {
    /// `object`
    #[token("object")]
    Object,
    /// `record`
    #[token("record")]
    Record,
    /// `shared`
    #[token("shared")]
    Shared,
    /// `final` (a field or shared variable that never changes after construction)
    #[token("final")]
    Final,
    /// `lock` (a declaration or the `lock(m);` statement)
    #[token("lock")]
    Lock,
    /// `unlock`
    #[token("unlock")]
    Unlock,
    /// `synchronized`
    #[token("synchronized")]
    Synchronized,
    /// `constructor`
    #[token("constructor")]
    Constructor,
    /// `op`
    #[token("op")]
    Op,
    /// `fn`
    #[token("fn")]
    Fn,
    /// `var`
    #[token("var")]
    Var,
    /// `if`
    #[token("if")]
    If,
    /// `else`
    #[token("else")]
    Else,
    /// `while`
    #[token("while")]
    While,
    /// `loop`
    #[token("loop")]
    Loop,
    /// `break`
    #[token("break")]
    Break,
    /// `continue`
    #[token("continue")]
    Continue,
    /// `return`
    #[token("return")]
    Return,
    /// `atomic`
    #[token("atomic")]
    Atomic,
    /// `await`
    #[token("await")]
    Await,
    /// `assert`
    #[token("assert")]
    Assert,
    /// `cas`
    #[token("cas")]
    Cas,
    /// `dcas`
    #[token("dcas")]
    Dcas,
    /// `new`
    #[token("new")]
    New,
    /// `null`
    #[token("null")]
    Null,
    /// `true`
    #[token("true")]
    True,
    /// `false`
    #[token("false")]
    False,
    /// `this`
    #[token("this")]
    This,
    /// An identifier (type names such as `int` and `bool` included).
    #[regex(r"[A-Za-z_][A-Za-z0-9_]*")]
    Ident,
    /// A non-negative decimal integer.
    #[regex(r"[0-9]+")]
    Int,
    /// A double-quoted string with `\"` and `\\` escapes.
    #[regex(r#""([^"\\\n]|\\.)*""#)]
    Str,
    /// `(`
    #[token("(")]
    LParen,
    /// `)`
    #[token(")")]
    RParen,
    /// `{`
    #[token("{")]
    LBrace,
    /// `}`
    #[token("}")]
    RBrace,
    /// `[`
    #[token("[")]
    LBracket,
    /// `]`
    #[token("]")]
    RBracket,
    /// `,`
    #[token(",")]
    Comma,
    /// `;`
    #[token(";")]
    Semi,
    /// `:`
    #[token(":")]
    Colon,
    /// `.`
    #[token(".")]
    Dot,
    /// `=`
    #[token("=")]
    Assign,
    /// `==`
    #[token("==")]
    EqEq,
    /// `!=`
    #[token("!=")]
    NotEq,
    /// `<`
    #[token("<")]
    Lt,
    /// `<=`
    #[token("<=")]
    Le,
    /// `>`
    #[token(">")]
    Gt,
    /// `>=`
    #[token(">=")]
    Ge,
    /// `+`
    #[token("+")]
    Plus,
    /// `-`
    #[token("-")]
    Minus,
    /// `*`
    #[token("*")]
    Star,
    /// `/`
    #[token("/")]
    Slash,
    /// `%`
    #[token("%")]
    Percent,
    /// `!`
    #[token("!")]
    Bang,
    /// `&&`
    #[token("&&")]
    AndAnd,
    /// `||`
    #[token("||")]
    OrOr,
    /// The end of the input (added by [`lex`], never produced by logos).
    Eof,
}

impl Tok {
    /// How the token is named in "expected ..., found ..." messages.
    pub fn describe(self) -> &'static str {
        match self {
            Tok::Object => "`object`",
            Tok::Record => "`record`",
            Tok::Shared => "`shared`",
            Tok::Final => "`final`",
            Tok::Lock => "`lock`",
            Tok::Unlock => "`unlock`",
            Tok::Synchronized => "`synchronized`",
            Tok::Constructor => "`constructor`",
            Tok::Op => "`op`",
            Tok::Fn => "`fn`",
            Tok::Var => "`var`",
            Tok::If => "`if`",
            Tok::Else => "`else`",
            Tok::While => "`while`",
            Tok::Loop => "`loop`",
            Tok::Break => "`break`",
            Tok::Continue => "`continue`",
            Tok::Return => "`return`",
            Tok::Atomic => "`atomic`",
            Tok::Await => "`await`",
            Tok::Assert => "`assert`",
            Tok::Cas => "`cas`",
            Tok::Dcas => "`dcas`",
            Tok::New => "`new`",
            Tok::Null => "`null`",
            Tok::True => "`true`",
            Tok::False => "`false`",
            Tok::This => "`this`",
            Tok::Ident => "an identifier",
            Tok::Int => "an integer",
            Tok::Str => "a string",
            Tok::LParen => "`(`",
            Tok::RParen => "`)`",
            Tok::LBrace => "`{`",
            Tok::RBrace => "`}`",
            Tok::LBracket => "`[`",
            Tok::RBracket => "`]`",
            Tok::Comma => "`,`",
            Tok::Semi => "`;`",
            Tok::Colon => "`:`",
            Tok::Dot => "`.`",
            Tok::Assign => "`=`",
            Tok::EqEq => "`==`",
            Tok::NotEq => "`!=`",
            Tok::Lt => "`<`",
            Tok::Le => "`<=`",
            Tok::Gt => "`>`",
            Tok::Ge => "`>=`",
            Tok::Plus => "`+`",
            Tok::Minus => "`-`",
            Tok::Star => "`*`",
            Tok::Slash => "`/`",
            Tok::Percent => "`%`",
            Tok::Bang => "`!`",
            Tok::AndAnd => "`&&`",
            Tok::OrOr => "`||`",
            Tok::Eof => "the end of the file",
        }
    }
}

/// A token with its byte range in the source.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Token {
    /// What kind of token.
    pub tok: Tok,
    /// First byte.
    pub start: usize,
    /// One past the last byte.
    pub end: usize,
}

/// Lexes `text`; the result always ends with one [`Tok::Eof`] token.
/// `Err` gives the byte range of the first character sequence that is not a token.
pub fn lex(text: &str) -> Result<Vec<Token>, (usize, usize)> {
    let mut out = Vec::new();
    let mut lexer = Tok::lexer(text);
    while let Some(tok) = lexer.next() {
        let span = lexer.span();
        match tok {
            Ok(tok) => out.push(Token {
                tok,
                start: span.start,
                end: span.end,
            }),
            Err(()) => return Err((span.start, span.end.max(span.start + 1).min(text.len()))),
        }
    }
    out.push(Token {
        tok: Tok::Eof,
        start: text.len(),
        end: text.len(),
    });
    Ok(out)
}

/// The value of a [`Tok::Str`] token's text (quotes removed, escapes resolved as in test calls).
pub fn unquote(text: &str) -> String {
    fgvt_tree::unescape(&text[1..text.len() - 1])
}
