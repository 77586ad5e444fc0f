//! Name resolution and code generation: from the AST of one object to a [`Model`].
//!
//! Every name is resolved here, at load time, so the interpreter never meets an unknown one.

use std::collections::HashMap;
use std::sync::Arc;

use fgvt_tree::Span;

use super::ast::*;
use super::bytecode::{Array, Function, Instr, Loc, RecordInfo, Site};
use super::error::{did_you_mean, Diag, ErrorKind};
use super::model::Model;
use super::value::Val;

/// A resolved type, only used for default values.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Ty {
    Int,
    Bool,
    /// A record reference, a string, or anything else whose default is `null`.
    Other,
    Tuple(Vec<Ty>),
}

impl Ty {
    fn default_value(&self) -> Val {
        match self {
            Ty::Int => Val::Int(0),
            Ty::Bool => Val::Bool(false),
            Ty::Other => Val::Null,
            Ty::Tuple(items) => Val::Tuple(items.iter().map(Ty::default_value).collect()),
        }
    }
}

/// Something to undo when control leaves a construct early (`break`, `continue`, `return`).
#[derive(Clone, Copy, Debug)]
enum Cleanup {
    /// Leave an `atomic` block.
    Atomic,
    /// Release the monitor saved in the slot, as event site `.1` (a `synchronized` block).
    Unlock(u16, u32),
}

/// An enclosing loop.
struct LoopCx {
    label: Option<String>,
    /// Where `continue` jumps.
    continue_to: u32,
    /// Jumps to patch with the loop's exit.
    breaks: Vec<usize>,
    /// How many cleanups were open when the loop started.
    cleanups: usize,
}

/// Per-function compilation state.
#[derive(Default)]
struct FnCx {
    code: Vec<Instr>,
    spans: Vec<Span>,
    scopes: Vec<Vec<(String, u16)>>,
    n_locals: u16,
    loops: Vec<LoopCx>,
    cleanups: Vec<Cleanup>,
}

/// A function's entry in the namespace of callables.
#[derive(Clone, Debug)]
struct FuncEntry {
    id: u32,
    arity: usize,
    span: Span,
}

struct Compiler<'a> {
    text: &'a str,
    scalars: HashMap<String, u32>,
    arrays: HashMap<String, u32>,
    array_list: Vec<Array>,
    locks: HashMap<String, u32>,
    lock_list: Vec<String>,
    records: HashMap<String, u32>,
    record_list: Vec<RecordInfo>,
    fields: HashMap<String, u32>,
    field_list: Vec<String>,
    funcs: HashMap<String, FuncEntry>,
    sites: Vec<Site>,
    /// Shared scalars declared `shared final`.
    final_scalars: std::collections::HashSet<String>,
    /// Field ids that are `final` in every record declaring them (the compiler cannot tell a
    /// reference's record type, so a name final in one record and not in another is not).
    final_fields: std::collections::HashSet<u32>,
    /// Whether the constructor (or a shared initializer) is being compiled: the only code
    /// that may write `final` locations.
    in_constructor: bool,
    n_globals: u32,
    cx: FnCx,
}

/// Compiles the object named `object` (or the only one) of a parsed file.
pub(crate) fn compile_object(
    ast: &File,
    file: u32,
    file_name: &str,
    text: &str,
    object: Option<&str>,
) -> Result<Model, Diag> {
    let whole = Span::new(file, 0, 0);
    let obj = match object {
        Some(name) => ast
            .objects
            .iter()
            .find(|o| o.name.name == name)
            .ok_or_else(|| {
                let names: Vec<&str> = ast.objects.iter().map(|o| o.name.name.as_str()).collect();
                Diag::new(
                    ErrorKind::UnknownName,
                    whole,
                    format!("no object `{name}` in this file"),
                    "looked here",
                )
                .help(
                    did_you_mean(name, names.iter().copied())
                        .unwrap_or_else(|| format!("the file declares: {}", names.join(", "))),
                )
            })?,
        None => match ast.objects.as_slice() {
            [only] => only,
            [] => {
                return Err(Diag::new(
                    ErrorKind::Invalid,
                    whole,
                    "the file declares no object",
                    "empty",
                )
                .help("declare one with `object Name { ... }`"))
            }
            many => {
                let names: Vec<&str> = many.iter().map(|o| o.name.name.as_str()).collect();
                return Err(Diag::new(
                    ErrorKind::Invalid,
                    many[1].name.span,
                    "the file declares several objects",
                    "another object",
                )
                .help(format!(
                    "pick one with `file.fgv#Name`; the objects are: {}",
                    names.join(", ")
                )));
            }
        },
    };
    for (i, o) in ast.objects.iter().enumerate() {
        if let Some(prev) = ast.objects[..i].iter().find(|p| p.name.name == o.name.name) {
            return Err(duplicate("object", &o.name, prev.name.span));
        }
    }

    let mut c = Compiler {
        text,
        scalars: HashMap::new(),
        final_scalars: Default::default(),
        final_fields: Default::default(),
        in_constructor: false,
        arrays: HashMap::new(),
        array_list: Vec::new(),
        locks: HashMap::new(),
        lock_list: Vec::new(),
        records: HashMap::new(),
        record_list: Vec::new(),
        fields: HashMap::new(),
        field_list: Vec::new(),
        funcs: HashMap::new(),
        sites: Vec::new(),
        n_globals: 0,
        cx: FnCx::default(),
    };

    // Records first: their names are types everywhere else.
    let records: Vec<&RecordDecl> = ast
        .records
        .iter()
        .chain(obj.members.iter().filter_map(|m| {
            if let Member::Record(r) = m {
                Some(r)
            } else {
                None
            }
        }))
        .collect();
    let mut record_spans: HashMap<&str, Span> = HashMap::new();
    for r in &records {
        if let Some(prev) = record_spans.get(r.name.name.as_str()) {
            return Err(duplicate("record", &r.name, *prev));
        }
        record_spans.insert(&r.name.name, r.name.span);
        c.records
            .insert(r.name.name.clone(), c.record_list.len() as u32);
        c.record_list.push(RecordInfo {
            name: r.name.name.clone(),
            fields: Vec::new(),
            defaults: Vec::new(),
            slot_of: Vec::new(),
        });
    }
    let mut candidates_final: std::collections::HashSet<String> = Default::default();
    let mut mutable_fields: std::collections::HashSet<String> = Default::default();
    for (ri, r) in records.iter().enumerate() {
        let mut seen: HashMap<&str, Span> = HashMap::new();
        for ((ty, f), &is_final) in r.fields.iter().zip(&r.finals) {
            if is_final {
                candidates_final.insert(f.name.clone());
            } else {
                mutable_fields.insert(f.name.clone());
            }
            if let Some(prev) = seen.get(f.name.as_str()) {
                return Err(duplicate("field", f, *prev));
            }
            seen.insert(&f.name, f.span);
            let ty = c.resolve_type(ty)?;
            c.field_id(&f.name);
            let info = &mut c.record_list[ri];
            info.fields.push(f.name.clone());
            info.defaults.push(ty.default_value());
        }
    }
    for name in candidates_final.difference(&mutable_fields) {
        let id = c.fields[name];
        c.final_fields.insert(id);
    }
    let n_fields = c.field_list.len();
    for info in &mut c.record_list {
        info.slot_of = vec![None; n_fields];
    }
    for ri in 0..c.record_list.len() {
        for (slot, fname) in c.record_list[ri].fields.clone().iter().enumerate() {
            let fid = c.fields[fname] as usize;
            c.record_list[ri].slot_of[fid] = Some(slot as u16);
        }
    }

    // Shared variables and locks share one namespace.
    let mut declared: HashMap<String, Span> = HashMap::new();
    let mut shared_inits: Vec<(u32, Option<u32>, &Member, Ty)> = Vec::new();
    for m in &obj.members {
        match m {
            Member::Shared {
                ty,
                name,
                len,
                is_final,
                ..
            } => {
                if *is_final {
                    c.final_scalars.insert(name.name.clone());
                }
                if let Some(prev) = declared.get(&name.name) {
                    return Err(duplicate("shared variable", name, *prev));
                }
                declared.insert(name.name.clone(), name.span);
                let ty = c.resolve_type(ty)?;
                match len {
                    None => {
                        c.scalars.insert(name.name.clone(), c.n_globals);
                        shared_inits.push((c.n_globals, None, m, ty));
                        c.n_globals += 1;
                    }
                    Some((n, span)) => {
                        if *n <= 0 || *n > 1 << 16 {
                            return Err(Diag::new(
                                ErrorKind::Invalid,
                                *span,
                                "array length must be between 1 and 65536",
                                "bad length",
                            ));
                        }
                        let id = c.array_list.len() as u32;
                        c.arrays.insert(name.name.clone(), id);
                        c.array_list.push(Array {
                            name: name.name.clone(),
                            base: c.n_globals,
                            len: *n as u32,
                        });
                        shared_inits.push((c.n_globals, Some(id), m, ty));
                        c.n_globals += *n as u32;
                    }
                }
            }
            Member::Lock(name) => {
                if let Some(prev) = declared.get(&name.name) {
                    return Err(duplicate("lock", name, *prev));
                }
                declared.insert(name.name.clone(), name.span);
                c.locks.insert(name.name.clone(), c.lock_list.len() as u32);
                c.lock_list.push(name.name.clone());
            }
            _ => {}
        }
    }

    // Functions: ops and helpers share one namespace. Ids: declaration order, then `<init>`.
    let mut decls: Vec<&FuncDecl> = Vec::new();
    let mut ctor: Option<&Block> = None;
    for m in &obj.members {
        match m {
            Member::Func(f) => {
                if let Some(prev) = c.funcs.get(&f.name.name) {
                    let what = if f.is_op { "operation" } else { "function" };
                    return Err(duplicate(what, &f.name, prev.span));
                }
                let mut seen: HashMap<&str, Span> = HashMap::new();
                for p in &f.params {
                    if let Some(prev) = seen.get(p.name.name.as_str()) {
                        return Err(duplicate("parameter", &p.name, *prev));
                    }
                    seen.insert(&p.name.name, p.name.span);
                    if let Some(ty) = &p.ty {
                        c.resolve_type(ty)?;
                    }
                }
                c.funcs.insert(
                    f.name.name.clone(),
                    FuncEntry {
                        id: decls.len() as u32,
                        arity: f.params.len(),
                        span: f.name.span,
                    },
                );
                decls.push(f);
            }
            Member::Constructor(b) => {
                if ctor.is_some() {
                    return Err(Diag::new(
                        ErrorKind::Duplicate,
                        b.span,
                        "the object has two constructors",
                        "second constructor",
                    )
                    .help("merge them into one `constructor { ... }`"));
                }
                ctor = Some(b);
            }
            _ => {}
        }
    }

    let mut funcs = Vec::new();
    let mut ops = Vec::new();
    for f in &decls {
        if f.is_op {
            ops.push(funcs.len() as u32);
        }
        funcs.push(c.function(f)?);
    }
    let init_id = funcs.len() as u32;
    funcs.push(c.initializer(&shared_inits, ctor, obj.name.span)?);

    Ok(Model {
        name: obj.name.name.clone(),
        name_span: obj.name.span,
        file,
        file_name: file_name.to_string(),
        text: Arc::from(text),
        n_globals: c.n_globals,
        scalars: {
            let mut v: Vec<(String, u32)> = c.scalars.into_iter().collect();
            v.sort_by_key(|(_, s)| *s);
            v
        },
        arrays: c.array_list,
        locks: c.lock_list,
        records: c.record_list,
        field_names: c.field_list,
        funcs,
        ops,
        init: init_id,
        sites: c.sites,
    })
}

fn duplicate(what: &str, name: &Ident, prev: Span) -> Diag {
    Diag::new(
        ErrorKind::Duplicate,
        name.span,
        format!("the {what} `{}` is defined twice", name.name),
        "defined again here",
    )
    .help(format!(
        "rename or remove one of the two definitions of `{}`",
        name.name
    ))
    .first_defined(prev)
}

impl<'a> Compiler<'a> {
    fn src(&self, span: Span) -> &'a str {
        &self.text[span.start as usize..span.end as usize]
    }

    fn field_id(&mut self, name: &str) -> u32 {
        if let Some(id) = self.fields.get(name) {
            return *id;
        }
        let id = self.field_list.len() as u32;
        self.fields.insert(name.to_string(), id);
        self.field_list.push(name.to_string());
        id
    }

    fn resolve_type(&self, ty: &Type) -> Result<Ty, Diag> {
        match ty {
            Type::Named(id) => match id.name.as_str() {
                "int" => Ok(Ty::Int),
                "bool" | "boolean" => Ok(Ty::Bool),
                "string" | "String" => Ok(Ty::Other),
                name if self.records.contains_key(name) => Ok(Ty::Other),
                name => {
                    let cands: Vec<&str> = ["int", "bool"]
                        .into_iter()
                        .chain(self.records.keys().map(String::as_str))
                        .collect();
                    Err(Diag::new(ErrorKind::UnknownName, id.span, format!("unknown type `{name}`"), "not a type")
                        .help(did_you_mean(name, cands).unwrap_or_else(|| format!("use `int`, `bool`, a tuple `(T, U)`, or declare `record {name} {{ ... }}`"))))
                }
            },
            Type::Tuple(items, _) => Ok(Ty::Tuple(
                items
                    .iter()
                    .map(|t| self.resolve_type(t))
                    .collect::<Result<_, _>>()?,
            )),
        }
    }

    // ----- emission helpers -----

    fn emit(&mut self, instr: Instr, span: Span) -> usize {
        self.cx.code.push(instr);
        self.cx.spans.push(span);
        self.cx.code.len() - 1
    }

    fn here(&self) -> u32 {
        self.cx.code.len() as u32
    }

    fn patch(&mut self, at: usize, target: u32) {
        match &mut self.cx.code[at] {
            Instr::Jump(t) | Instr::JumpIfFalse(t) => *t = target,
            other => unreachable!("patching a non-jump {other:?}"),
        }
    }

    fn site(&mut self, span: Span, text: String) -> u32 {
        self.sites.push(Site { span, text });
        (self.sites.len() - 1) as u32
    }

    fn new_slot(&mut self) -> u16 {
        let s = self.cx.n_locals;
        self.cx.n_locals += 1;
        s
    }

    fn declare(&mut self, id: &Ident, spans: &mut HashMap<String, Span>) -> Result<u16, Diag> {
        let scope = self.cx.scopes.last().expect("a scope is open");
        if scope.iter().any(|(n, _)| *n == id.name) {
            let prev = spans.get(&id.name).copied().unwrap_or(id.span);
            return Err(duplicate("local variable", id, prev));
        }
        let slot = self.new_slot();
        spans.insert(id.name.clone(), id.span);
        self.cx
            .scopes
            .last_mut()
            .expect("a scope is open")
            .push((id.name.clone(), slot));
        Ok(slot)
    }

    fn lookup_local(&self, name: &str) -> Option<u16> {
        self.cx
            .scopes
            .iter()
            .rev()
            .flat_map(|s| s.iter().rev())
            .find(|(n, _)| n == name)
            .map(|(_, s)| *s)
    }

    fn unknown_variable(&self, id: &Ident) -> Diag {
        let locals: Vec<&str> = self
            .cx
            .scopes
            .iter()
            .flat_map(|s| s.iter().map(|(n, _)| n.as_str()))
            .collect();
        let cands = locals
            .into_iter()
            .chain(self.scalars.keys().map(String::as_str))
            .chain(self.arrays.keys().map(String::as_str))
            .chain(self.locks.keys().map(String::as_str));
        let help = did_you_mean(&id.name, cands).unwrap_or_else(|| {
            format!("declare it: a local with `int {0} = ...;` or a shared variable with `shared int {0};`", id.name)
        });
        Diag::new(
            ErrorKind::UnknownName,
            id.span,
            format!("unknown variable `{}`", id.name),
            "not declared",
        )
        .help(help)
    }

    fn unknown_field(&self, f: &Ident) -> Diag {
        Diag::new(
            ErrorKind::UnknownName,
            f.span,
            format!("unknown field `{}`", f.name),
            "no record has this field",
        )
        .maybe_help(did_you_mean(
            &f.name,
            self.field_list.iter().map(String::as_str),
        ))
    }

    // ----- functions -----

    fn function(&mut self, f: &FuncDecl) -> Result<Function, Diag> {
        self.cx = FnCx::default();
        self.cx.scopes.push(Vec::new());
        let mut spans = HashMap::new();
        for p in &f.params {
            self.declare(&p.name, &mut spans)?;
        }
        // The body shares the parameters' scope: a local may not redeclare a parameter.
        let mut body_spans = spans;
        for s in &f.body.stmts {
            self.stmt(s, &mut body_spans)?;
        }
        self.emit(Instr::Push(Val::Unit), f.body.span);
        self.emit(Instr::Return, f.body.span);
        let cx = std::mem::take(&mut self.cx);
        Ok(Function {
            name: f.name.name.clone(),
            params: f.params.iter().map(|p| p.name.name.clone()).collect(),
            n_locals: cx.n_locals,
            code: cx.code,
            spans: cx.spans,
            header: f.header,
        })
    }

    /// The initializer: shared variables' initial values, then the constructor's body.
    fn initializer(
        &mut self,
        shared: &[(u32, Option<u32>, &Member, Ty)],
        ctor: Option<&Block>,
        at: Span,
    ) -> Result<Function, Diag> {
        self.in_constructor = true;
        self.cx = FnCx::default();
        self.cx.scopes.push(Vec::new());
        for (slot, array, member, ty) in shared {
            let Member::Shared {
                name, init, span, ..
            } = member
            else {
                continue;
            };
            let site = self.site(*span, name.name.clone());
            match array {
                None => {
                    match init {
                        None => {
                            self.emit(Instr::Push(ty.default_value()), *span);
                        }
                        Some(Init::Expr(e)) => self.expr(e)?,
                        Some(Init::List(_, lspan)) => {
                            return Err(Diag::new(
                                ErrorKind::Invalid,
                                *lspan,
                                format!("`{}` is not an array", name.name),
                                "a list initializer",
                            )
                            .help(format!(
                                "declare an array with `shared int {}[n] = {{...}};`",
                                name.name
                            )))
                        }
                    }
                    self.emit(Instr::Write(Loc::Global(*slot), site), *span);
                }
                Some(id) => {
                    let len = self.array_list[*id as usize].len as usize;
                    if let Some(Init::List(items, lspan)) = init {
                        if items.len() > len {
                            return Err(Diag::new(
                                ErrorKind::Invalid,
                                *lspan,
                                format!(
                                    "{} initial values for an array of length {len}",
                                    items.len()
                                ),
                                "too many values",
                            )
                            .help(format!("give at most {len} values")));
                        }
                    }
                    for i in 0..len {
                        self.emit(Instr::Push(Val::Int(i as i64)), *span);
                        match init {
                            None => {
                                self.emit(Instr::Push(ty.default_value()), *span);
                            }
                            Some(Init::Expr(e)) => self.expr(e)?,
                            Some(Init::List(items, _)) => match items.get(i) {
                                Some(e) => self.expr(e)?,
                                None => {
                                    self.emit(Instr::Push(ty.default_value()), *span);
                                }
                            },
                        }
                        self.emit(Instr::Write(Loc::Elem(*id), site), *span);
                    }
                }
            }
        }
        if let Some(b) = ctor {
            let mut spans = HashMap::new();
            for s in &b.stmts {
                self.stmt(s, &mut spans)?;
            }
        }
        self.emit(Instr::Push(Val::Unit), at);
        self.emit(Instr::Return, at);
        let cx = std::mem::take(&mut self.cx);
        self.in_constructor = false;
        Ok(Function {
            name: "<init>".into(),
            params: Vec::new(),
            n_locals: cx.n_locals,
            code: cx.code,
            spans: cx.spans,
            header: at,
        })
    }

    // ----- statements -----

    fn block(&mut self, b: &Block) -> Result<(), Diag> {
        self.cx.scopes.push(Vec::new());
        let mut spans = HashMap::new();
        for s in &b.stmts {
            self.stmt(s, &mut spans)?;
        }
        self.cx.scopes.pop();
        Ok(())
    }

    /// Compiles a statement that is not a block on its own (an `if` branch, a `while` body)
    /// in a scope of its own.
    fn nested(&mut self, s: &Stmt) -> Result<(), Diag> {
        self.cx.scopes.push(Vec::new());
        let mut spans = HashMap::new();
        let r = self.stmt(s, &mut spans);
        self.cx.scopes.pop();
        r
    }

    /// Emits the cleanups above depth `down_to`, innermost first (without popping them:
    /// the jump leaves only this path).
    fn emit_cleanups(&mut self, down_to: usize, span: Span) {
        for i in (down_to..self.cx.cleanups.len()).rev() {
            match self.cx.cleanups[i] {
                Cleanup::Atomic => {
                    self.emit(Instr::AtomicEnd, span);
                }
                Cleanup::Unlock(slot, site) => {
                    let at = self.sites[site as usize].span;
                    self.emit(Instr::Load(slot), at);
                    self.emit(Instr::Unlock(site), at);
                }
            }
        }
    }

    fn find_loop(&self, label: &Option<Ident>, span: Span, what: &str) -> Result<usize, Diag> {
        match label {
            None => self.cx.loops.len().checked_sub(1).ok_or_else(|| {
                Diag::new(
                    ErrorKind::Invalid,
                    span,
                    format!("`{what}` outside of a loop"),
                    "not inside `while` or `loop`",
                )
                .help(format!(
                    "`{what}` can only be used inside `while` or `loop`"
                ))
            }),
            Some(l) => self
                .cx
                .loops
                .iter()
                .rposition(|lp| lp.label.as_deref() == Some(l.name.as_str()))
                .ok_or_else(|| {
                    let labels = self.cx.loops.iter().filter_map(|lp| lp.label.as_deref());
                    Diag::new(
                        ErrorKind::UnknownName,
                        l.span,
                        format!("unknown loop label `{}`", l.name),
                        "no enclosing loop has this label",
                    )
                    .help(
                        did_you_mean(&l.name, labels).unwrap_or_else(|| {
                            format!("label the loop: `{}: loop {{ ... }}`", l.name)
                        }),
                    )
                }),
        }
    }

    fn stmt(&mut self, s: &Stmt, spans: &mut HashMap<String, Span>) -> Result<(), Diag> {
        match s {
            Stmt::Local {
                ty,
                pat,
                init,
                span,
            } => {
                let rty = ty.as_ref().map(|t| self.resolve_type(t)).transpose()?;
                match init {
                    Some(e) => self.expr(e)?,
                    None => {
                        let v = rty.as_ref().map_or(Val::Null, Ty::default_value);
                        self.emit(Instr::Push(v), *span);
                    }
                }
                match pat {
                    Pattern::Name(id) => {
                        let slot = self.declare(id, spans)?;
                        self.emit(Instr::Store(slot), *span);
                    }
                    Pattern::Tuple(ids, _) => {
                        self.emit(Instr::Untuple(ids.len() as u16), *span);
                        let mut slots = Vec::new();
                        for id in ids {
                            slots.push(self.declare(id, spans)?);
                        }
                        for slot in slots.into_iter().rev() {
                            self.emit(Instr::Store(slot), *span);
                        }
                    }
                }
            }
            Stmt::Assign {
                target,
                value,
                span,
            } => self.assign(target, Source::Expr(value), *span)?,
            Stmt::Expr(e) => {
                self.expr(e)?;
                self.emit(Instr::Pop, e.span());
            }
            Stmt::If {
                cond, then, els, ..
            } => {
                self.expr(cond)?;
                let jf = self.emit(Instr::JumpIfFalse(0), cond.span());
                self.nested(then)?;
                match els {
                    None => {
                        let end = self.here();
                        self.patch(jf, end);
                    }
                    Some(e) => {
                        let j = self.emit(Instr::Jump(0), cond.span());
                        let at = self.here();
                        self.patch(jf, at);
                        self.nested(e)?;
                        let end = self.here();
                        self.patch(j, end);
                    }
                }
            }
            Stmt::While {
                label,
                cond,
                body,
                span,
            } => {
                let top = self.here();
                self.expr(cond)?;
                let jf = self.emit(Instr::JumpIfFalse(0), cond.span());
                self.loop_body(label, top, *span, |c| c.nested(body))?;
                self.emit(Instr::Jump(top), cond.span());
                let end = self.here();
                self.patch(jf, end);
                self.finish_loop(end);
            }
            Stmt::Loop { label, body, span } => {
                let top = self.here();
                self.loop_body(label, top, *span, |c| c.block(body))?;
                self.emit(Instr::Jump(top), *span);
                let end = self.here();
                self.finish_loop(end);
            }
            Stmt::Break(label, span) | Stmt::Continue(label, span) => {
                let is_break = matches!(s, Stmt::Break(..));
                let i =
                    self.find_loop(label, *span, if is_break { "break" } else { "continue" })?;
                let depth = self.cx.loops[i].cleanups;
                self.emit_cleanups(depth, *span);
                if is_break {
                    let j = self.emit(Instr::Jump(0), *span);
                    self.cx.loops[i].breaks.push(j);
                } else {
                    let to = self.cx.loops[i].continue_to;
                    self.emit(Instr::Jump(to), *span);
                }
            }
            Stmt::Return(value, span) => {
                match value {
                    Some(e) => self.expr(e)?,
                    None => {
                        self.emit(Instr::Push(Val::Unit), *span);
                    }
                }
                self.emit_cleanups(0, *span);
                self.emit(Instr::Return, *span);
            }
            Stmt::Block(b) => self.block(b)?,
            Stmt::Atomic(b, span) => {
                let site = self.site(*span, String::new());
                self.emit(Instr::AtomicBegin(site), *span);
                self.cx.cleanups.push(Cleanup::Atomic);
                self.block(b)?;
                self.cx.cleanups.pop();
                self.emit(Instr::AtomicEnd, b.span);
            }
            Stmt::Lock(m, span) | Stmt::Unlock(m, span) => {
                let text = self.monitor(m)?;
                let site = self.site(*span, text);
                let instr = if matches!(s, Stmt::Lock(..)) {
                    Instr::Lock(site)
                } else {
                    Instr::Unlock(site)
                };
                self.emit(instr, *span);
            }
            Stmt::Synchronized {
                monitor,
                body,
                header,
                close,
            } => {
                let text = self.monitor(monitor)?;
                let slot = self.new_slot();
                self.emit(Instr::Store(slot), *header);
                self.emit(Instr::Load(slot), *header);
                let lock_site = self.site(*header, text.clone());
                self.emit(Instr::Lock(lock_site), *header);
                let unlock_site = self.site(*close, text);
                self.cx.cleanups.push(Cleanup::Unlock(slot, unlock_site));
                self.block(body)?;
                self.cx.cleanups.pop();
                self.emit(Instr::Load(slot), *close);
                self.emit(Instr::Unlock(unlock_site), *close);
            }
            Stmt::Await(cond, span) => {
                let site = self.site(*span, String::new());
                self.emit(Instr::AwaitBegin(site), *span);
                self.expr(cond)?;
                self.emit(Instr::AwaitEnd, *span);
            }
            Stmt::Assert(cond, msg, span) => {
                self.expr(cond)?;
                let msg = msg
                    .clone()
                    .unwrap_or_else(|| format!("assertion failed: {}", self.src(cond.span())));
                self.emit(Instr::Assert(Some(msg)), *span);
            }
            Stmt::Empty(_) => {}
        }
        Ok(())
    }

    fn loop_body(
        &mut self,
        label: &Option<Ident>,
        top: u32,
        span: Span,
        body: impl FnOnce(&mut Self) -> Result<(), Diag>,
    ) -> Result<(), Diag> {
        if let Some(l) = label {
            if self
                .cx
                .loops
                .iter()
                .any(|lp| lp.label.as_deref() == Some(l.name.as_str()))
            {
                return Err(duplicate("loop label", l, span));
            }
        }
        self.cx.loops.push(LoopCx {
            label: label.as_ref().map(|l| l.name.clone()),
            continue_to: top,
            breaks: Vec::new(),
            cleanups: self.cx.cleanups.len(),
        });
        body(self)
    }

    fn finish_loop(&mut self, end: u32) {
        let lp = self.cx.loops.pop().expect("loop_body pushed it");
        for j in lp.breaks {
            self.patch(j, end);
        }
    }

    /// Pushes the monitor of `lock(m)` / `synchronized (m)` and returns its text for events.
    fn monitor(&mut self, m: &Expr) -> Result<String, Diag> {
        match m {
            Expr::This(span) => {
                self.emit(Instr::Push(Val::Lock(self.lock_list.len() as u32)), *span);
                Ok("this".into())
            }
            Expr::Name(id)
                if self.lookup_local(&id.name).is_none() && self.locks.contains_key(&id.name) =>
            {
                self.emit(Instr::Push(Val::Lock(self.locks[&id.name])), id.span);
                Ok(id.name.clone())
            }
            other => {
                self.expr(other)?;
                Ok(self.src(other.span()).to_string())
            }
        }
    }

    /// Pushes the address operands of a shared location and returns it with its site text.
    fn location(&mut self, lv: &LValue, what: &str) -> Result<(Loc, String), Diag> {
        match lv {
            LValue::Name(id) => {
                if self.lookup_local(&id.name).is_some() {
                    return Err(Diag::new(ErrorKind::Invalid, id.span, format!("`{what}` needs a shared location; `{}` is a local variable", id.name), "local variable")
                        .help("compare-and-swap works on shared variables, array elements and record fields"));
                }
                if let Some(slot) = self.scalars.get(&id.name) {
                    if what != "read"
                        && !self.in_constructor
                        && self.final_scalars.contains(&id.name)
                    {
                        return Err(self.final_written(id.span, &id.name));
                    }
                    return Ok((Loc::Global(*slot), id.name.clone()));
                }
                if self.arrays.contains_key(&id.name) {
                    return Err(Diag::new(
                        ErrorKind::Invalid,
                        id.span,
                        format!("`{}` is an array", id.name),
                        "a whole array",
                    )
                    .help(format!("index it: `{}[i]`", id.name)));
                }
                Err(self.unknown_variable(id))
            }
            LValue::Index(a, index, _) => {
                let Some(id) = self.arrays.get(&a.name).copied() else {
                    return Err(self.not_an_array(a));
                };
                self.expr(index)?;
                Ok((Loc::Elem(id), a.name.clone()))
            }
            LValue::Field(base, f, _) => {
                let Some(fid) = self.fields.get(&f.name).copied() else {
                    return Err(self.unknown_field(f));
                };
                if what != "read" && !self.in_constructor && self.final_fields.contains(&fid) {
                    return Err(self.final_written(f.span, &f.name));
                }
                self.expr(base)?;
                Ok((
                    Loc::Field(fid),
                    format!("{}.{}", self.src(base.span()), f.name),
                ))
            }
            LValue::Tuple(_, span) => Err(Diag::new(
                ErrorKind::Invalid,
                *span,
                format!("`{what}` needs a single shared location"),
                "a tuple of places",
            )),
        }
    }

    fn final_written(&self, span: Span, name: &str) -> Diag {
        Diag::new(
            ErrorKind::Invalid,
            span,
            format!("`{name}` is final"),
            "written after construction",
        )
        .help("final fields are set by `new` (or the constructor); drop `final` if it must change")
    }

    fn not_an_array(&self, a: &Ident) -> Diag {
        if self.scalars.contains_key(&a.name) || self.lookup_local(&a.name).is_some() {
            Diag::new(
                ErrorKind::Invalid,
                a.span,
                format!("`{}` is not an array", a.name),
                "cannot be indexed",
            )
            .help(format!("declare an array with `shared int {}[n];`", a.name))
        } else {
            let help = did_you_mean(&a.name, self.arrays.keys().map(String::as_str))
                .unwrap_or_else(|| format!("declare it with `shared int {}[n];`", a.name));
            Diag::new(
                ErrorKind::UnknownName,
                a.span,
                format!("unknown array `{}`", a.name),
                "not declared",
            )
            .help(help)
        }
    }

    fn assign(&mut self, target: &LValue, value: Source<'_>, span: Span) -> Result<(), Diag> {
        match target {
            LValue::Name(id) => {
                if let Some(slot) = self.lookup_local(&id.name) {
                    self.source(value)?;
                    self.emit(Instr::Store(slot), span);
                } else if self.scalars.contains_key(&id.name) {
                    let (loc, text) = self.location(target, "assignment")?;
                    self.source(value)?;
                    let site = self.site(span, text);
                    self.emit(Instr::Write(loc, site), span);
                } else if self.locks.contains_key(&id.name) {
                    return Err(Diag::new(
                        ErrorKind::Invalid,
                        id.span,
                        format!("cannot assign to the lock `{}`", id.name),
                        "a lock",
                    ));
                } else {
                    // Arrays and unknown names get their message from `location`.
                    self.location(target, "assignment")?;
                }
            }
            LValue::Index(..) | LValue::Field(..) => {
                let (loc, text) = self.location(target, "assignment")?;
                self.source(value)?;
                let site = self.site(span, text);
                self.emit(Instr::Write(loc, site), span);
            }
            LValue::Tuple(items, tspan) => {
                self.source(value)?;
                self.emit(Instr::Untuple(items.len() as u16), *tspan);
                let slots: Vec<u16> = items.iter().map(|_| self.new_slot()).collect();
                for slot in slots.iter().rev() {
                    self.emit(Instr::Store(*slot), *tspan);
                }
                for (item, slot) in items.iter().zip(slots) {
                    self.assign(item, Source::Slot(slot, item.span()), span)?;
                }
            }
        }
        Ok(())
    }

    fn source(&mut self, s: Source<'_>) -> Result<(), Diag> {
        match s {
            Source::Expr(e) => self.expr(e),
            Source::Slot(slot, span) => {
                self.emit(Instr::Load(slot), span);
                Ok(())
            }
        }
    }

    // ----- expressions -----

    fn expr(&mut self, e: &Expr) -> Result<(), Diag> {
        match e {
            Expr::Int(v, s) => {
                self.emit(Instr::Push(Val::Int(*v)), *s);
            }
            Expr::Bool(b, s) => {
                self.emit(Instr::Push(Val::Bool(*b)), *s);
            }
            Expr::Str(v, s) => {
                self.emit(Instr::Push(Val::Str(v.as_str().into())), *s);
            }
            Expr::Null(s) => {
                self.emit(Instr::Push(Val::Null), *s);
            }
            Expr::This(s) => {
                return Err(Diag::new(
                    ErrorKind::Invalid,
                    *s,
                    "`this` can only name the object's monitor",
                    "not a value",
                )
                .help("use it as `synchronized (this) { ... }`, `lock(this);` or `unlock(this);`"))
            }
            Expr::Name(id) => {
                if let Some(slot) = self.lookup_local(&id.name) {
                    self.emit(Instr::Load(slot), id.span);
                } else if let Some(slot) = self.scalars.get(&id.name).copied() {
                    let site = self.site(id.span, id.name.clone());
                    if self.final_scalars.contains(&id.name) {
                        self.emit(Instr::ReadFinal(Loc::Global(slot), site), id.span);
                    } else {
                        self.emit(Instr::Read(Loc::Global(slot), site), id.span);
                    }
                } else if self.locks.contains_key(&id.name) {
                    return Err(Diag::new(
                        ErrorKind::Invalid,
                        id.span,
                        format!("`{}` is a lock, not a value", id.name),
                        "a lock",
                    )
                    .help(format!(
                        "use it as `lock({0});`, `unlock({0});` or `synchronized ({0}) {{ ... }}`",
                        id.name
                    )));
                } else {
                    self.location(&LValue::Name(id.clone()), "read")?;
                }
            }
            Expr::Index(a, index, span) => {
                let (loc, text) =
                    self.location(&LValue::Index(a.clone(), index.clone(), *span), "read")?;
                let site = self.site(*span, text);
                self.emit(Instr::Read(loc, site), *span);
            }
            Expr::Field(base, f, span) => {
                let (loc, text) =
                    self.location(&LValue::Field(base.clone(), f.clone(), *span), "read")?;
                let site = self.site(*span, text);
                if matches!(loc, Loc::Field(fid) if self.final_fields.contains(&fid)) {
                    self.emit(Instr::ReadFinal(loc, site), *span);
                } else {
                    self.emit(Instr::Read(loc, site), *span);
                }
            }
            Expr::Proj(t, i, span) => {
                self.expr(t)?;
                self.emit(Instr::Proj(*i as u16), *span);
            }
            Expr::Tuple(items, span) => {
                for it in items {
                    self.expr(it)?;
                }
                self.emit(Instr::Tuple(items.len() as u16), *span);
            }
            Expr::Call(f, args, span) => {
                let Some(entry) = self.funcs.get(&f.name).cloned() else {
                    let help = did_you_mean(&f.name, self.funcs.keys().map(String::as_str))
                        .unwrap_or_else(|| {
                            format!("declare it with `fn {}(...) {{ ... }}`", f.name)
                        });
                    return Err(Diag::new(
                        ErrorKind::UnknownName,
                        f.span,
                        format!("unknown function `{}`", f.name),
                        "not declared",
                    )
                    .help(help));
                };
                if entry.arity != args.len() {
                    return Err(arity(&f.name, entry.arity, args.len(), *span));
                }
                for a in args {
                    self.expr(a)?;
                }
                self.emit(Instr::Call(entry.id, args.len() as u16), *span);
            }
            Expr::New(r, args, span) => {
                let Some(rid) = self.records.get(&r.name).copied() else {
                    let help = did_you_mean(&r.name, self.records.keys().map(String::as_str))
                        .unwrap_or_else(|| {
                            format!("declare it with `record {} {{ ... }}`", r.name)
                        });
                    return Err(Diag::new(
                        ErrorKind::UnknownName,
                        r.span,
                        format!("unknown record `{}`", r.name),
                        "not declared",
                    )
                    .help(help));
                };
                let n = self.record_list[rid as usize].fields.len();
                if args.len() > n {
                    let fields = self.record_list[rid as usize].fields.join(", ");
                    return Err(Diag::new(
                        ErrorKind::Arity,
                        *span,
                        format!(
                            "`new {}` takes at most {n} arguments, found {}",
                            r.name,
                            args.len()
                        ),
                        "too many arguments",
                    )
                    .help(format!(
                        "the fields of `{}` are, in order: {fields}",
                        r.name
                    )));
                }
                for a in args {
                    self.expr(a)?;
                }
                self.emit(Instr::New(rid, args.len() as u16), *span);
            }
            Expr::Cas(lv, exp, new, span) => {
                let (loc, text) = self.location(lv, "cas")?;
                self.expr(exp)?;
                self.expr(new)?;
                let site = self.site(*span, text);
                self.emit(Instr::Cas(loc, site), *span);
            }
            Expr::Dcas(locs, vals, span) => {
                let (l1, t1) = self.location(&locs[0], "dcas")?;
                let (l2, t2) = self.location(&locs[1], "dcas")?;
                for v in vals.iter() {
                    self.expr(v)?;
                }
                let site = self.site(*span, format!("{{{t1}, {t2}}}"));
                self.emit(Instr::Dcas(l1, l2, site), *span);
            }
            Expr::Unary(op, inner, span) => {
                self.expr(inner)?;
                self.emit(Instr::Unary(*op), *span);
            }
            Expr::Binary(op @ (BinOp::And | BinOp::Or), a, b, span) => {
                // Short-circuit: `b`'s shared accesses happen only when needed.
                self.expr(a)?;
                if *op == BinOp::And {
                    let j1 = self.emit(Instr::JumpIfFalse(0), *span);
                    self.expr(b)?;
                    let j2 = self.emit(Instr::JumpIfFalse(0), *span);
                    self.emit(Instr::Push(Val::Bool(true)), *span);
                    let j3 = self.emit(Instr::Jump(0), *span);
                    let f = self.here();
                    self.patch(j1, f);
                    self.patch(j2, f);
                    self.emit(Instr::Push(Val::Bool(false)), *span);
                    let end = self.here();
                    self.patch(j3, end);
                } else {
                    // a || b  ==  if a { true } else { b is true }
                    let j1 = self.emit(Instr::JumpIfFalse(0), *span);
                    self.emit(Instr::Push(Val::Bool(true)), *span);
                    let j2 = self.emit(Instr::Jump(0), *span);
                    let rhs = self.here();
                    self.patch(j1, rhs);
                    self.expr(b)?;
                    let j3 = self.emit(Instr::JumpIfFalse(0), *span);
                    self.emit(Instr::Push(Val::Bool(true)), *span);
                    let j4 = self.emit(Instr::Jump(0), *span);
                    let f = self.here();
                    self.patch(j3, f);
                    self.emit(Instr::Push(Val::Bool(false)), *span);
                    let end = self.here();
                    self.patch(j2, end);
                    self.patch(j4, end);
                }
            }
            Expr::Binary(op, a, b, span) => {
                self.expr(a)?;
                self.expr(b)?;
                self.emit(Instr::Binary(*op), *span);
            }
        }
        Ok(())
    }
}

/// Where an assigned value comes from.
#[derive(Clone, Copy)]
enum Source<'e> {
    /// An expression to evaluate.
    Expr(&'e Expr),
    /// A local slot (a destructured item), with the span to blame.
    Slot(u16, Span),
}

fn arity(name: &str, want: usize, found: usize, span: Span) -> Diag {
    let plural = if want == 1 { "" } else { "s" };
    Diag::new(
        ErrorKind::Arity,
        span,
        format!("`{name}` takes {want} argument{plural}, found {found}"),
        format!("{found} argument{}", if found == 1 { "" } else { "s" }),
    )
    .help(format!("`{name}` takes {want} argument{plural}"))
}
