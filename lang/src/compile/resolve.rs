//! Name resolution: what a name in the object refers to, and the diagnostics (with "did you
//! mean") for a name that refers to nothing.

use std::collections::HashMap;

use fgvt_tree::Span;

use super::*;

impl<'a> Compiler<'a> {
    pub(super) fn src(&self, span: Span) -> &'a str {
        &self.text[span.start as usize..span.end as usize]
    }

    pub(super) fn field_id(&mut self, name: &str) -> u32 {
        if let Some(id) = self.fields.get(name) {
            return *id;
        }
        let id = self.field_list.len() as u32;
        self.fields.insert(name.to_string(), id);
        self.field_list.push(name.to_string());
        id
    }

    pub(super) fn resolve_type(&self, ty: &Type) -> Result<Ty, Diag> {
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
                    Err(unknown_name(
                        id.span,
                        format!("unknown type `{name}`"),
                        "not a type",
                        name,
                        cands,
                        Some(format!("use `int`, `bool`, a tuple `(T, U)`, or declare `record {name} {{ ... }}`")),
                    ))
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

    pub(super) fn declare(
        &mut self,
        id: &Ident,
        spans: &mut HashMap<String, Span>,
    ) -> Result<u16, Diag> {
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

    pub(super) fn lookup_local(&self, name: &str) -> Option<u16> {
        self.cx
            .scopes
            .iter()
            .rev()
            .flat_map(|s| s.iter().rev())
            .find(|(n, _)| n == name)
            .map(|(_, s)| *s)
    }

    pub(super) fn unknown_variable(&self, id: &Ident) -> Diag {
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
        unknown_name(
            id.span,
            format!("unknown variable `{}`", id.name),
            "not declared",
            &id.name,
            cands,
            Some(format!("declare it: a local with `int {0} = ...;` or a shared variable with `shared int {0};`", id.name)),
        )
    }

    pub(super) fn unknown_field(&self, f: &Ident) -> Diag {
        unknown_name(
            f.span,
            format!("unknown field `{}`", f.name),
            "no record has this field",
            &f.name,
            self.field_list.iter().map(String::as_str),
            None,
        )
    }

    pub(super) fn find_loop(
        &self,
        label: &Option<Ident>,
        span: Span,
        what: &str,
    ) -> Result<usize, Diag> {
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
                    unknown_name(
                        l.span,
                        format!("unknown loop label `{}`", l.name),
                        "no enclosing loop has this label",
                        &l.name,
                        labels,
                        Some(format!("label the loop: `{}: loop {{ ... }}`", l.name)),
                    )
                }),
        }
    }

    pub(super) fn monitor(&mut self, m: &Expr) -> Result<String, Diag> {
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
    pub(super) fn location(&mut self, lv: &LValue, what: &str) -> Result<(Loc, String), Diag> {
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

    pub(super) fn final_written(&self, span: Span, name: &str) -> Diag {
        Diag::new(
            ErrorKind::Invalid,
            span,
            format!("`{name}` is final"),
            "written after construction",
        )
        .help("final fields are set by `new` (or the constructor); drop `final` if it must change")
    }

    pub(super) fn not_an_array(&self, a: &Ident) -> Diag {
        if self.scalars.contains_key(&a.name) || self.lookup_local(&a.name).is_some() {
            Diag::new(
                ErrorKind::Invalid,
                a.span,
                format!("`{}` is not an array", a.name),
                "cannot be indexed",
            )
            .help(format!("declare an array with `shared int {}[n];`", a.name))
        } else {
            unknown_name(
                a.span,
                format!("unknown array `{}`", a.name),
                "not declared",
                &a.name,
                self.arrays.keys().map(String::as_str),
                Some(format!("declare it with `shared int {}[n];`", a.name)),
            )
        }
    }
}
