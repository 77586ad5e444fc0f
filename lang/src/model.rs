//! A compiled object, as data: its shared variables, records, functions and operations. The
//! compiler (`compile/`) builds it, the interpreter (`interp.rs`) runs it; it depends on neither.

use std::sync::Arc;

use fgvt_memory::{AccessKind, Order};
use fgvt_tree::{Call, Span};

use super::bytecode::{Array, Function, RecordInfo, Site};
use super::error::did_you_mean;

/// An operation of a model, as a test may call it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpSignature {
    /// The operation's name.
    pub name: String,
    /// Its parameters' names, in order.
    pub params: Vec<String>,
    /// Where its name is written.
    pub span: Span,
}

/// An access of a model whose ordering counts under weak memory (a read, a write or a `cas`
/// outside `atomic`/`await`, or a fence), as the search for a fix names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OrderedAccess {
    /// The access's number, as [`crate::TestProgram::with_changes`] takes it.
    pub site: u32,
    /// What kind of access it is.
    pub kind: AccessKind,
    /// The ordering it declares (`SeqCst` when none is written; a `cas`'s success ordering).
    pub order: Order,
    /// Where it is written.
    pub span: Span,
    /// What it is, for people: ``load of `ready` ``, ``store to `d[i]` ``, `fence`.
    pub access: String,
}

/// A compiled object of a model file, ready to run.
#[derive(Debug)]
pub struct Model {
    pub(crate) name: String,
    pub(crate) name_span: Span,
    pub(crate) file: u32,
    pub(crate) file_name: String,
    pub(crate) text: Arc<str>,
    pub(crate) n_globals: u32,
    /// Shared scalars with their global slot, by slot.
    pub(crate) scalars: Vec<(String, u32)>,
    pub(crate) arrays: Vec<Array>,
    /// Declared lock names; the object's monitor `this` has the next index.
    pub(crate) locks: Vec<String>,
    pub(crate) records: Vec<RecordInfo>,
    pub(crate) field_names: Vec<String>,
    pub(crate) funcs: Vec<Function>,
    /// The function ids of the operations, in declaration order.
    pub(crate) ops: Vec<u32>,
    /// The initializer (shared variables' initial values, then the constructor).
    pub(crate) init: u32,
    pub(crate) sites: Vec<Site>,
}

impl Model {
    /// The object's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Where the object's name is written.
    pub fn span(&self) -> Span {
        self.name_span
    }

    /// The file's index in the [`SourceMap`](fgvt_tree::SourceMap) it was compiled into.
    pub fn file(&self) -> u32 {
        self.file
    }

    /// The operation called `name`, if any.
    pub fn operation(&self, name: &str) -> Option<OpSignature> {
        self.op_id(name).map(|f| self.signature(f))
    }

    /// Whether some access or fence declares an ordering weaker than `SeqCst`: a test of the
    /// model then runs under the C++20 / Rust memory model (see [`crate::TestProgram`]).
    pub fn is_weak(&self) -> bool {
        self.sites.iter().any(|s| s.access.is_some() && s.is_weak())
    }

    /// Every access whose ordering counts under weak memory, in the order they are written.
    pub fn ordered_accesses(&self) -> Vec<OrderedAccess> {
        (self.sites.iter().enumerate())
            .filter_map(|(i, s)| {
                let kind = s.access?;
                let access = match kind {
                    AccessKind::Load => format!("load of `{}`", s.text),
                    AccessKind::Store => format!("store to `{}`", s.text),
                    AccessKind::Rmw => format!("cas on `{}`", s.text),
                    AccessKind::Fence => "fence".to_string(),
                };
                Some(OrderedAccess {
                    site: i as u32,
                    kind,
                    order: s.order,
                    span: s.span,
                    access,
                })
            })
            .collect()
    }

    /// All operations, in declaration order.
    pub fn operations(&self) -> Vec<OpSignature> {
        self.ops.iter().map(|f| self.signature(*f)).collect()
    }

    /// Checks that `call` names an operation and has the right number of arguments; the
    /// error says what is wrong and how to fix it.
    pub fn check_call(&self, call: &Call) -> Result<(), String> {
        let Some(f) = self.op_id(&call.op) else {
            let names: Vec<String> = self.operations().into_iter().map(|o| o.name).collect();
            let hint =
                did_you_mean(&call.op, names.iter().map(String::as_str)).unwrap_or_else(|| {
                    format!(
                        "the operations of `{}` are: {}",
                        self.name,
                        names.join(", ")
                    )
                });
            return Err(format!(
                "`{}` has no operation `{}`; {hint}",
                self.name, call.op
            ));
        };
        let want = self.funcs[f as usize].params.len();
        if want != call.args.len() {
            let plural = if want == 1 { "" } else { "s" };
            return Err(format!(
                "`{}` takes {want} argument{plural} ({}), found {}",
                call.op,
                self.funcs[f as usize].params.join(", "),
                call.args.len()
            ));
        }
        Ok(())
    }

    pub(crate) fn op_id(&self, name: &str) -> Option<u32> {
        self.ops
            .iter()
            .copied()
            .find(|f| self.funcs[*f as usize].name == name)
    }

    fn signature(&self, f: u32) -> OpSignature {
        let func = &self.funcs[f as usize];
        OpSignature {
            name: func.name.clone(),
            params: func.params.clone(),
            span: func.header,
        }
    }

    /// "file:line:col" of a span in this model's file, for messages without a source map.
    pub(crate) fn position(&self, span: Span) -> String {
        let (line, col) = fgvt_tree::source::line_column(&self.text, span.start as usize);
        format!("{}:{line}:{col}", self.file_name)
    }

    /// "the loop at file:line:col (`while (true) {`)": where a run that ran out of its
    /// instruction budget was looping, for the messages that say so.
    pub(crate) fn loop_at(&self, span: Span) -> String {
        let start = (span.start as usize).min(self.text.len());
        let line_start = self.text[..start].rfind('\n').map_or(0, |i| i + 1);
        let line = self.text[line_start..].lines().next().unwrap_or("").trim();
        format!("the loop at {} (`{line}`)", self.position(span))
    }
}

/// The advice for a run that ran out of its instruction budget: the model's own way to wait.
pub(crate) const WAIT_ADVICE: &str =
    "to wait for another thread, write `await(cond);`, which blocks until `cond` holds instead of spinning";
