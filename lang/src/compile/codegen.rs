//! Code generation: the stack bytecode of function bodies, statements and expressions.

use std::collections::HashMap;

use fgvt_tree::Span;

use super::*;

impl<'a> Compiler<'a> {
    // ----- emission helpers -----

    pub(super) fn emit(&mut self, instr: Instr, span: Span) -> usize {
        self.cx.code.push(instr);
        self.cx.spans.push(span);
        self.cx.code.len() - 1
    }

    pub(super) fn here(&self) -> u32 {
        self.cx.code.len() as u32
    }

    pub(super) fn patch(&mut self, at: usize, target: u32) {
        match &mut self.cx.code[at] {
            Instr::Jump(t) | Instr::JumpIfFalse(t) => *t = target,
            other => unreachable!("patching a non-jump {other:?}"),
        }
    }

    pub(super) fn site(&mut self, span: Span, text: String) -> u32 {
        self.sites.push(Site {
            span,
            text,
            access: None,
            order: Order::SeqCst,
            failure: Order::SeqCst,
        });
        (self.sites.len() - 1) as u32
    }

    /// The site of an access of `kind` declaring `order` (`failure` for a `cas` that fails).
    /// Inside `atomic`/`await` (which run sequentially consistent) and in the initializer
    /// (which runs alone) it is no access whose ordering counts.
    pub(super) fn access_site(
        &mut self,
        span: Span,
        text: String,
        kind: AccessKind,
        order: Order,
        failure: Order,
    ) -> u32 {
        let site = self.site(span, text);
        if self.cx.regions == 0 && !self.in_constructor {
            let s = &mut self.sites[site as usize];
            (s.access, s.order, s.failure) = (Some(kind), order, failure);
        }
        site
    }

    /// An error for an ordering written inside `atomic { }` or `await`, which run sequentially
    /// consistent as a whole.
    pub(super) fn no_ordering_in_region(&self, at: Span) -> Result<(), Diag> {
        if self.cx.regions == 0 {
            return Ok(());
        }
        Err(Diag::new(
            ErrorKind::Invalid,
            at,
            "an ordering inside `atomic` or `await` has no effect",
            "inside a region",
        )
        .help(
            "an `atomic { }` block or an `await` runs as one sequentially consistent step that \
             reads the latest values; write the access without an ordering, or move it out",
        ))
    }

    pub(super) fn new_slot(&mut self) -> u16 {
        let s = self.cx.n_locals;
        self.cx.n_locals += 1;
        s
    }

    // ----- functions -----

    pub(super) fn function(&mut self, f: &FuncDecl) -> Result<Function, Diag> {
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
    pub(super) fn initializer(
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
                        Some(Init::Expr(e)) => {
                            if let Some(shape) = self.scalar_shapes.get(&name.name) {
                                self.check_fits(shape, &name.name, e)?;
                            }
                            self.expr(e)?
                        }
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

    pub(super) fn block(&mut self, b: &Block) -> Result<(), Diag> {
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
    pub(super) fn nested(&mut self, s: &Stmt) -> Result<(), Diag> {
        self.cx.scopes.push(Vec::new());
        let mut spans = HashMap::new();
        let r = self.stmt(s, &mut spans);
        self.cx.scopes.pop();
        r
    }

    /// Emits the cleanups above depth `down_to`, innermost first (without popping them:
    /// the jump leaves only this path).
    pub(super) fn emit_cleanups(&mut self, down_to: usize, span: Span) {
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

    pub(super) fn stmt(&mut self, s: &Stmt, spans: &mut HashMap<String, Span>) -> Result<(), Diag> {
        match s {
            Stmt::Local {
                ty,
                pat,
                init,
                span,
            } => {
                let rty = ty.as_ref().map(|t| self.resolve_type(t)).transpose()?;
                let shape = ty.as_ref().and_then(Shape::declared);
                match init {
                    Some(e) => {
                        if let (Some(shape), Pattern::Name(id)) = (&shape, pat) {
                            self.check_fits(shape, &id.name, e)?;
                        }
                        self.expr(e)?
                    }
                    None => {
                        let v = rty.as_ref().map_or(Val::Null, Ty::default_value);
                        self.emit(Instr::Push(v), *span);
                    }
                }
                match pat {
                    Pattern::Name(id) => {
                        let slot = self.declare(id, spans)?;
                        if let Some(shape) = shape {
                            self.cx.local_shapes.insert(slot, shape);
                        }
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
                order: None,
                span,
            } => self.assign(target, Source::Expr(value), *span)?,
            Stmt::Assign {
                target,
                value,
                order: Some(order),
                span,
            } => self.ordered_store(target, value, *order, *span)?,
            Stmt::Fence(order, span) => {
                self.no_ordering_in_region(order.span)?;
                let site = self.access_site(
                    *span,
                    "fence".into(),
                    AccessKind::Fence,
                    order.order,
                    Order::SeqCst,
                );
                self.emit(Instr::Fence(site), *span);
            }
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
                self.cx.regions += 1;
                let body = self.block(b);
                self.cx.regions -= 1;
                body?;
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
                self.cx.regions += 1;
                let compiled = self.expr(cond);
                self.cx.regions -= 1;
                compiled?;
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

    pub(super) fn loop_body(
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

    pub(super) fn finish_loop(&mut self, end: u32) {
        let lp = self.cx.loops.pop().expect("loop_body pushed it");
        for j in lp.breaks {
            self.patch(j, end);
        }
    }

    /// Compiles `target = value` (a local store, a shared write, or a destructuring).
    pub(super) fn assign(
        &mut self,
        target: &LValue,
        value: Source<'_>,
        span: Span,
    ) -> Result<(), Diag> {
        match target {
            LValue::Name(id) => {
                if let Source::Expr(e) = value {
                    self.check_assignment(id, e)?;
                }
                if let Some(slot) = self.lookup_local(&id.name) {
                    self.source(value)?;
                    self.emit(Instr::Store(slot), span);
                } else if self.scalars.contains_key(&id.name) {
                    let (loc, text) = self.location(target, "assignment")?;
                    self.source(value)?;
                    let site = self.write_site(span, text);
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
                let site = self.write_site(span, text);
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

    /// The site of a plain write (`x = v`): sequentially consistent.
    fn write_site(&mut self, span: Span, text: String) -> u32 {
        self.access_site(span, text, AccessKind::Store, Order::SeqCst, Order::SeqCst)
    }

    /// Compiles `target.store(value, order)`.
    fn ordered_store(
        &mut self,
        target: &LValue,
        value: &Expr,
        order: Ordering,
        span: Span,
    ) -> Result<(), Diag> {
        self.no_ordering_in_region(order.span)?;
        self.not_local(target, "store")?;
        if let LValue::Name(id) = target {
            self.check_assignment(id, value)?;
        }
        let (loc, text) = self.location(target, "assignment")?;
        self.expr(value)?;
        let site = self.access_site(span, text, AccessKind::Store, order.order, Order::SeqCst);
        self.emit(Instr::Write(loc, site), span);
        Ok(())
    }

    /// An error when `target`, the place of a `.load`/`.store` (`method`), is a local.
    fn not_local(&self, target: &LValue, method: &str) -> Result<(), Diag> {
        match target {
            LValue::Name(id) if self.lookup_local(&id.name).is_some() => Err(Diag::new(
                ErrorKind::Invalid,
                id.span,
                format!(
                    "`.{method}` needs a shared location; `{}` is a local variable",
                    id.name
                ),
                "local variable",
            )
            .help("a local is read and written plainly: orderings are for shared locations")),
            _ => Ok(()),
        }
    }

    pub(super) fn source(&mut self, s: Source<'_>) -> Result<(), Diag> {
        match s {
            Source::Expr(e) => self.expr(e),
            Source::Slot(slot, span) => {
                self.emit(Instr::Load(slot), span);
                Ok(())
            }
        }
    }

    // ----- expressions -----

    /// The site of a read declaring `order`.
    fn read_site(&mut self, span: Span, text: String, order: Order) -> u32 {
        self.access_site(span, text, AccessKind::Load, order, Order::SeqCst)
    }

    /// Compiles a read of `place` (an array element or a field; a scalar too, for `.load`)
    /// with `order`: no event for a `final` location, which never changes once constructed.
    fn read(&mut self, place: &LValue, order: Order, span: Span) -> Result<(), Diag> {
        let (loc, text) = self.location(place, "read")?;
        let is_final = match (place, loc) {
            (LValue::Name(id), _) => self.final_scalars.contains(&id.name),
            (_, Loc::Field(fid)) => self.final_fields.contains(&fid),
            _ => false,
        };
        if is_final {
            let site = self.site(span, text);
            self.emit(Instr::ReadFinal(loc, site), span);
        } else {
            let site = self.read_site(span, text, order);
            self.emit(Instr::Read(loc, site), span);
        }
        Ok(())
    }

    pub(super) fn expr(&mut self, e: &Expr) -> Result<(), Diag> {
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
                    if self.final_scalars.contains(&id.name) {
                        let site = self.site(id.span, id.name.clone());
                        self.emit(Instr::ReadFinal(Loc::Global(slot), site), id.span);
                    } else {
                        let site = self.read_site(id.span, id.name.clone(), Order::SeqCst);
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
                let place = LValue::Index(a.clone(), index.clone(), *span);
                self.read(&place, Order::SeqCst, *span)?;
            }
            Expr::Field(base, f, span) => {
                let place = LValue::Field(base.clone(), f.clone(), *span);
                self.read(&place, Order::SeqCst, *span)?;
            }
            Expr::Load(place, order, span) => {
                self.no_ordering_in_region(order.span)?;
                self.not_local(place, "load")?;
                self.read(place, order.order, *span)?;
            }
            Expr::Store(_, _, _, span) => {
                return Err(Diag::new(
                    ErrorKind::Invalid,
                    *span,
                    "a `.store` is a statement of its own",
                    "used as a value",
                )
                .help("write it alone, as `x.store(v, release);`"))
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
                    return Err(unknown_name(
                        f.span,
                        format!("unknown function `{}`", f.name),
                        "not declared",
                        &f.name,
                        self.funcs.keys().map(String::as_str),
                        Some(format!("declare it with `fn {}(...) {{ ... }}`", f.name)),
                    ));
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
                    return Err(unknown_name(
                        r.span,
                        format!("unknown record `{}`", r.name),
                        "not declared",
                        &r.name,
                        self.records.keys().map(String::as_str),
                        Some(format!("declare it with `record {} {{ ... }}`", r.name)),
                    ));
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
            Expr::Cas(lv, exp, new, orders, span) => {
                if let Some(o) = orders {
                    self.no_ordering_in_region(o.success.span)?;
                }
                let (loc, text) = self.location(lv, "cas")?;
                self.expr(exp)?;
                self.expr(new)?;
                let (success, failure) = orders.map_or((Order::SeqCst, Order::SeqCst), |o| {
                    (o.success.order, o.failure.order)
                });
                let site = self.access_site(*span, text, AccessKind::Rmw, success, failure);
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
