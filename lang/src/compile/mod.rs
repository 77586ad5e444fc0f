//! Compiling one object: from its AST to a [`Model`].
//!
//! [`compile_object`] collects the object's declarations (records, shared variables, locks,
//! functions) into the [`Compiler`]'s tables, then compiles every function body. Two concerns
//! share the compiler's state, each in its own module:
//!
//! * [`resolve`]: what a name refers to — types, locals, shared variables, fields, loop labels,
//!   monitors, assignable places — and the diagnostics for names that refer to nothing;
//! * [`codegen`]: the stack bytecode of statements and expressions.
//!
//! Every name is resolved here, at load time, so the interpreter never meets an unknown one.

mod codegen;
mod resolve;
mod types;

use types::Shape;

use std::collections::HashMap;
use std::sync::Arc;

use fgvt_memory::{AccessKind, Order};
use fgvt_tree::{SourceMap, Span};

use super::ast::*;
use super::bytecode::{Array, Function, Instr, Loc, RecordInfo, Site};
use super::error::{unknown_name, Diag, ErrorKind, LangError};
use super::model::Model;
use super::parser::parse_file;
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
    /// The declared types of locals declared with one, by slot.
    local_shapes: HashMap<u16, Shape>,
    /// How many `atomic`/`await` regions enclose the code being compiled.
    regions: u32,
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
    /// The declared types of shared scalars.
    scalar_shapes: HashMap<String, Shape>,
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
                unknown_name(
                    whole,
                    format!("no object `{name}` in this file"),
                    "looked here",
                    name,
                    names.iter().copied(),
                    Some(format!("the file declares: {}", names.join(", "))),
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
        scalar_shapes: HashMap::new(),
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
                let ty_ast = ty;
                let ty = c.resolve_type(ty)?;
                match len {
                    None => {
                        c.scalars.insert(name.name.clone(), c.n_globals);
                        if let Some(shape) = Shape::declared(ty_ast) {
                            c.scalar_shapes.insert(name.name.clone(), shape);
                        }
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

impl Model {
    /// Compiles object `object` (or the only object when `None`) of source `text`, registering
    /// the file in `sources` under the display name `name`.
    pub fn compile(
        sources: &mut SourceMap,
        name: &str,
        text: &str,
        object: Option<&str>,
    ) -> Result<Model, LangError> {
        let file = sources.add(name, text);
        let ast = parse_file(file, text).map_err(|d| d.into_error(name, text))?;
        compile_object(&ast, file, name, text, object).map_err(|d| d.into_error(name, text))
    }

    /// The names of the objects a model file declares (empty when it does not parse).
    pub fn objects_in(text: &str) -> Vec<String> {
        parse_file(0, text)
            .map(|f| f.objects.into_iter().map(|o| o.name.name).collect())
            .unwrap_or_default()
    }
}
