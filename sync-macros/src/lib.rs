//! The attributes behind `fgvt_sync::operations` and `fgvt_sync::sequential`: they write an
//! object's [`Object`] (or a sequential spec's [`Sequential`]) implementation from the methods
//! of an impl block (inherent, or of a trait), so that a test's `"write(0, 2)"` runs
//! `self.write(0, 2)` with no hand-written dispatch. Use them through `fgvt-sync` (its default
//! `macros` feature), not from this crate.
//!
//! [`Object`]: https://docs.rs/fgvt-sync/latest/fgvt_sync/trait.Object.html
//! [`Sequential`]: https://docs.rs/fgvt-sync/latest/fgvt_sync/trait.Sequential.html

#![warn(missing_docs)]

use proc_macro::TokenStream;
use proc_macro2::TokenStream as TokenStream2;
use quote::{format_ident, quote, quote_spanned, ToTokens};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{
    parse_macro_input, parse_quote, Attribute, FnArg, GenericArgument, GenericParam, ImplItem,
    ImplItemFn, ItemImpl, LitStr, Pat, Path, PathArguments, ReturnType, Type, Visibility,
};

/// Writes `impl fgvt_sync::Object` from the methods of an impl block: documented,
/// with its examples, where it is used, as `fgvt_sync::operations`.
#[proc_macro_attribute]
pub fn operations(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand(Kind::Object, attr, item)
}

/// Writes `impl fgvt_sync::Sequential` from the methods of an impl block: documented,
/// with its example, where it is used, as `fgvt_sync::sequential`.
#[proc_macro_attribute]
pub fn sequential(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand(Kind::Sequential, attr, item)
}

/// Which trait an attribute writes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Object,
    Sequential,
}

impl Kind {
    /// The attribute's name, for messages.
    fn attribute(self) -> &'static str {
        match self {
            Kind::Object => "operations",
            Kind::Sequential => "sequential",
        }
    }
}

/// Parses the attribute's options and the impl block; the block (its helper attributes
/// removed), then the generated implementation or the errors.
fn expand(kind: Kind, attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut krate: Path = parse_quote!(::fgvt_sync);
    let parser = syn::meta::parser(|meta| {
        if meta.path.is_ident("crate") {
            krate = meta.value()?.parse()?;
            Ok(())
        } else {
            Err(meta.error("unknown option: the one option is `crate = path`"))
        }
    });
    parse_macro_input!(attr with parser);
    let mut block = parse_macro_input!(item as ItemImpl);
    let generated = generate(kind, &krate, &mut block);
    if kind == Kind::Object && generated.is_ok() {
        mark_calls(&krate, &mut block);
    }
    let errors = generated.as_ref().err().map(syn::Error::to_compile_error);
    let generated = generated.unwrap_or_default();
    quote! {
        #block
        #generated
        #errors
    }
    .into()
}

/// One operation: its name in tests, the method, and how to read its arguments.
struct Operation {
    name: String,
    method: syn::Ident,
    /// The `#[cfg]`s of the method, repeated on its arm.
    cfgs: Vec<Attribute>,
    /// The parameters' names as the error for a wrong arity shows them.
    params: Vec<String>,
    /// An expression of type `Result<T, String>` per argument, reading `__fgvt_argN`.
    conversions: Vec<TokenStream2>,
    output: ReturnType,
}

/// What a method's helper attributes say.
#[derive(Default)]
struct Marks {
    skip: Option<Attribute>,
    new: Option<Attribute>,
    op: Option<(Attribute, Option<LitStr>)>,
}

/// Removes `#[op]`, `#[skip]` and `#[new]` from `method` and returns what they said.
fn take_marks(method: &mut ImplItemFn) -> syn::Result<Marks> {
    let mut marks = Marks::default();
    let mut errors = Errors::default();
    method.attrs.retain(|attr| {
        let path = attr.path();
        if path.is_ident("skip") {
            errors.check(attr.meta.require_path_only().map(|_| ()));
            marks.skip = Some(attr.clone());
        } else if path.is_ident("new") {
            errors.check(attr.meta.require_path_only().map(|_| ()));
            marks.new = Some(attr.clone());
        } else if path.is_ident("op") {
            let mut name = None;
            if !matches!(attr.meta, syn::Meta::Path(_)) {
                errors.check(attr.parse_nested_meta(|meta| {
                    if meta.path.is_ident("name") {
                        name = Some(meta.value()?.parse::<LitStr>()?);
                        Ok(())
                    } else {
                        Err(meta
                            .error("unknown option of `#[op]`: the one option is `name = \"…\"`"))
                    }
                }));
            }
            marks.op = Some((attr.clone(), name));
        } else {
            return true;
        }
        false
    });
    errors.finish()?;
    Ok(marks)
}

/// Errors gathered so that one expansion reports them all.
#[derive(Default)]
struct Errors(Option<syn::Error>);

impl Errors {
    fn push(&mut self, error: syn::Error) {
        match &mut self.0 {
            Some(first) => first.combine(error),
            None => self.0 = Some(error),
        }
    }

    fn check<T>(&mut self, result: syn::Result<T>) -> Option<T> {
        result.map_err(|e| self.push(e)).ok()
    }

    fn finish(self) -> syn::Result<()> {
        self.0.map_or(Ok(()), Err)
    }
}

/// The implementation of the attribute's trait for `block`, whose helper attributes it
/// removes.
fn generate(kind: Kind, krate: &Path, block: &mut ItemImpl) -> syn::Result<TokenStream2> {
    // Methods of a trait impl are called through the trait, which need not be in scope
    // where the impl is; they are as public as the trait, so each one taking `self` is an
    // operation.
    let (owner, in_trait) = match &block.trait_ {
        Some((Some(bang), path, _)) => {
            return Err(syn::Error::new_spanned(
                quote!(#bang #path),
                format!(
                    "`#[{}]` goes on an impl block that gives the type methods: a negative \
                     impl has none",
                    kind.attribute()
                ),
            ))
        }
        Some((None, path, _)) => (quote!(<Self as #path>), true),
        None => (quote!(Self), false),
    };
    let mut errors = Errors::default();
    let mut operations: Vec<Operation> = Vec::new();
    let mut marked_new: Option<syn::Ident> = None;
    let mut plain_new: Option<syn::Ident> = None;
    for item in &mut block.items {
        let ImplItem::Fn(method) = item else { continue };
        let Some(marks) = errors.check(take_marks(method)) else {
            continue;
        };
        let has_receiver = method.sig.receiver().is_some();
        if let Some(new) = marks.new {
            if marks.op.is_some() || marks.skip.is_some() {
                errors.push(syn::Error::new_spanned(
                    new,
                    "a `#[new]` constructor is not an operation: drop `#[op]` or `#[skip]`",
                ));
            } else if has_receiver || !method.sig.inputs.is_empty() {
                errors.push(syn::Error::new_spanned(
                    &method.sig.inputs,
                    format!(
                        "`#[new]` marks the constructor of a fresh object: `{}` must take no \
                         arguments",
                        method.sig.ident
                    ),
                ));
            } else if has_type_params(&method.sig.generics) {
                errors.push(syn::Error::new_spanned(
                    &method.sig.generics,
                    format!(
                        "the `#[new]` constructor `{}` cannot be generic",
                        method.sig.ident
                    ),
                ));
            } else if let Some(first) = &marked_new {
                errors.push(syn::Error::new_spanned(
                    new,
                    format!("a second `#[new]` constructor: `{first}` is marked already"),
                ));
            } else {
                marked_new = Some(method.sig.ident.clone());
            }
            continue;
        }
        if let (Some(skip), Some(_)) = (&marks.skip, &marks.op) {
            errors.push(syn::Error::new_spanned(
                skip,
                format!(
                    "`#[skip]` and `#[op]` on one method, `{}`",
                    method.sig.ident
                ),
            ));
            continue;
        }
        if marks.skip.is_some() {
            continue;
        }
        if !has_receiver {
            if let Some((op, _)) = marks.op {
                errors.push(syn::Error::new_spanned(
                    op,
                    format!(
                        "`#[op]` marks a method: `{}` takes no `self`",
                        method.sig.ident
                    ),
                ));
            } else if method.sig.ident == "new"
                && method.sig.inputs.is_empty()
                && !has_type_params(&method.sig.generics)
            {
                plain_new = Some(method.sig.ident.clone());
            }
            continue;
        }
        let public = in_trait || !matches!(method.vis, Visibility::Inherited);
        let name = match &marks.op {
            Some((_, Some(name))) => Some(name.value()),
            Some((_, None)) => Some(method.sig.ident.unraw().to_string()),
            None if public => Some(method.sig.ident.unraw().to_string()),
            None => None,
        };
        let Some(name) = name else { continue };
        if let Some((_, Some(literal))) = &marks.op {
            if !is_call_name(&name) {
                errors.push(syn::Error::new_spanned(
                    literal,
                    "an operation's name is a letter or `_`, then letters, digits and `_`, as \
                     a test's calls write it",
                ));
                continue;
            }
        }
        if let Some(operation) = errors.check(operation(kind, krate, method, name)) {
            if let Some(earlier) = operations
                .iter()
                .find(|o| o.name == operation.name && o.params.len() == operation.params.len())
            {
                errors.push(syn::Error::new_spanned(
                    &method.sig.ident,
                    format!(
                        "two operations `{}` with {} argument{}: `{}` is one already",
                        operation.name,
                        operation.params.len(),
                        if operation.params.len() == 1 { "" } else { "s" },
                        earlier.method
                    ),
                ));
                continue;
            }
            operations.push(operation);
        }
    }
    if operations.is_empty() && errors.0.is_none() {
        errors.push(syn::Error::new_spanned(
            &block.self_ty,
            format!(
                "`#[{}]` found no operations: every {} of the block that takes `{}` is one{}",
                kind.attribute(),
                if in_trait { "method" } else { "`pub fn`" },
                match kind {
                    Kind::Object => "&self",
                    Kind::Sequential => "&self` or `&mut self",
                },
                if in_trait {
                    ""
                } else {
                    ", and `#[op]` marks another"
                }
            ),
        ));
    }
    errors.finish()?;

    let self_ty = &block.self_ty;
    let constructor = match marked_new.or(plain_new) {
        Some(ident) => quote!(#owner::#ident()),
        None => quote_spanned! {self_ty.span()=>
            <Self as ::core::default::Default>::default()
        },
    };
    let (impl_generics, _, where_clause) = block.generics.split_for_impl();
    let arms = operations.iter().map(|o| arm(krate, &owner, o));
    let table = operations.iter().map(|o| {
        let name = &o.name;
        let arity = o.params.len();
        let signature = format!("{}({})", o.name, o.params.join(", "));
        quote!((#name, #arity, #signature))
    });
    let dispatch = quote! {
        match (call.op.as_str(), call.args.as_slice()) {
            #(#arms)*
            _ => {
                /// Levenshtein distance between two short names.
                fn distance(a: &str, b: &str) -> usize {
                    let b: ::std::vec::Vec<char> = b.chars().collect();
                    let mut row: ::std::vec::Vec<usize> = (0..=b.len()).collect();
                    for (i, ca) in a.chars().enumerate() {
                        let mut previous = row[0];
                        row[0] = i + 1;
                        for j in 0..b.len() {
                            let current = row[j + 1];
                            row[j + 1] = (previous + usize::from(ca != b[j]))
                                .min(row[j] + 1)
                                .min(current + 1);
                            previous = current;
                        }
                    }
                    row[b.len()]
                }
                /// Every operation: name, arity, and how a call of it reads.
                const OPERATIONS: &[(&str, usize, &str)] = &[#(#table),*];
                let mut message = #krate::unknown(call);
                let same: ::std::vec::Vec<&str> = OPERATIONS
                    .iter()
                    .filter(|(name, _, _)| *name == call.op)
                    .map(|(_, _, signature)| *signature)
                    .collect();
                if !same.is_empty() {
                    message.push_str("; the object has `");
                    message.push_str(&same.join("` and `"));
                    message.push('`');
                } else {
                    // About one typo per three characters, as fgvt's other suggestions.
                    let limit = call.op.chars().count().div_ceil(3).max(1);
                    let closest = OPERATIONS
                        .iter()
                        .map(|(name, arity, signature)| {
                            (distance(&call.op, name), *arity != call.args.len(), *signature)
                        })
                        .filter(|(d, _, _)| *d <= limit)
                        .min();
                    if let ::core::option::Option::Some((_, _, signature)) = closest {
                        message.push_str("; did you mean `");
                        message.push_str(signature);
                        message.push_str("`?");
                    }
                }
                ::core::result::Result::Err(message)
            }
        }
    };
    Ok(match kind {
        Kind::Object => quote! {
            impl #impl_generics #krate::Object for #self_ty #where_clause {
                fn new() -> Self {
                    #constructor
                }

                fn call(
                    &self,
                    call: &#krate::Call,
                ) -> ::core::result::Result<#krate::Value, ::std::string::String> {
                    #dispatch
                }
            }
        },
        Kind::Sequential => quote! {
            impl #impl_generics #krate::Sequential for #self_ty #where_clause {
                fn new() -> Self {
                    #constructor
                }

                fn call(
                    &mut self,
                    call: &#krate::Call,
                ) -> ::core::result::Result<#krate::Value, ::std::string::String> {
                    #dispatch
                }
            }
        },
    })
}

/// Starts every function of the impl block that has a body (but a `const fn`, which cannot
/// call the runtime) with a guard that tells fgvt-sync's runtime the thread is in a call of
/// it until it returns: a loop without the retry hint is then known to be entered once per
/// call of its function, where the text cannot tell (`fgvt_sync::__private::enter`).
fn mark_calls(krate: &Path, block: &mut ItemImpl) {
    for item in &mut block.items {
        let ImplItem::Fn(method) = item else { continue };
        if method.sig.constness.is_some() {
            continue;
        }
        let name = method.sig.ident.to_string();
        // Spanned at the body's brace, `line!()` and `file!()` give where it is in the user's
        // file, as the runtime's scan of that file finds the function.
        let brace = method.block.brace_token.span.open();
        let line = quote_spanned!(brace=> ::core::line!());
        let file = quote_spanned!(brace=> ::core::file!());
        let guard: syn::Stmt = parse_quote! {
            let __fgvt_sync_entered = #krate::__private::enter({
                static METHOD: #krate::__private::Method = #krate::__private::Method {
                    name: #name,
                    file: #file,
                    line: #line,
                };
                &METHOD
            });
        };
        method.block.stmts.insert(0, guard);
    }
}

/// Whether `generics` has type or const parameters (lifetimes are fine to call).
fn has_type_params(generics: &syn::Generics) -> bool {
    generics
        .params
        .iter()
        .any(|p| !matches!(p, GenericParam::Lifetime(_)))
}

/// Whether a test's call text can name `name` (as `fgvt_tree::parse_call` reads names).
fn is_call_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    bytes
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// The operation `method` is, or why it cannot be one.
fn operation(
    kind: Kind,
    krate: &Path,
    method: &ImplItemFn,
    name: String,
) -> syn::Result<Operation> {
    let sig = &method.sig;
    let ident = &sig.ident;
    let mut errors = Errors::default();
    let skip_hint = "; `#[skip]` it and write the dispatch by hand (`impl Object`) if it must \
                     be called";
    if let Some(receiver) = sig.receiver() {
        let by_ref = receiver.reference.is_some() && receiver.colon_token.is_none();
        match (kind, by_ref, receiver.mutability.is_some()) {
            (_, true, false) | (Kind::Sequential, true, true) => {}
            (Kind::Object, true, true) => errors.push(syn::Error::new_spanned(
                receiver,
                format!(
                    "the operation `{ident}` takes `&mut self`, but the test's threads share the \
                     object: an operation takes `&self` and changes the object through \
                     fgvt_sync's atomics, locks or `Shared`{skip_hint}"
                ),
            )),
            _ => errors.push(syn::Error::new_spanned(
                receiver,
                format!(
                    "the operation `{ident}` must take `{}`{skip_hint}",
                    match kind {
                        Kind::Object => "&self",
                        Kind::Sequential => "&self` or `&mut self",
                    }
                ),
            )),
        }
    }
    let generic = has_type_params(&sig.generics);
    if generic {
        errors.push(syn::Error::new_spanned(
            &sig.generics,
            format!(
                "the operation `{ident}` is generic: a test's call cannot choose its type \
                 parameters{skip_hint}"
            ),
        ));
    }
    if let Some(asyncness) = &sig.asyncness {
        errors.push(syn::Error::new_spanned(
            asyncness,
            format!(
                "the operation `{ident}` is `async`: fgvt runs operations to completion{skip_hint}"
            ),
        ));
    }
    if let Some(unsafety) = &sig.unsafety {
        errors.push(syn::Error::new_spanned(
            unsafety,
            format!("the operation `{ident}` is `unsafe`: a test's call cannot uphold its contract{skip_hint}"),
        ));
    }
    if let Some(variadic) = &sig.variadic {
        errors.push(syn::Error::new_spanned(
            variadic,
            format!("the operation `{ident}` is variadic{skip_hint}"),
        ));
    }
    let mut params = Vec::new();
    let mut conversions = Vec::new();
    for (i, input) in sig.inputs.iter().enumerate() {
        let FnArg::Typed(typed) = input else { continue };
        params.push(match &*typed.pat {
            Pat::Ident(p) => p.ident.unraw().to_string(),
            _ => format!("arg{i}"),
        });
        let value = format_ident!("__fgvt_arg{}", conversions.len());
        match conversion(krate, &typed.ty, quote!(#value)) {
            Some(conversion) => conversions.push(conversion),
            // A type parameter: the error is that the method is generic.
            None if generic => {}
            None => errors.push(syn::Error::new_spanned(
                &typed.ty,
                format!(
                    "the operation `{ident}` takes an argument of type `{}`, which a test's \
                     call cannot give: arguments are integers (any width), `bool`, tuples and \
                     `Option`s of these, or `fgvt_sync::Value`{skip_hint}",
                    type_text(&typed.ty)
                ),
            )),
        }
    }
    errors.finish()?;
    Ok(Operation {
        name,
        method: ident.clone(),
        cfgs: method
            .attrs
            .iter()
            .filter(|a| a.path().is_ident("cfg"))
            .cloned()
            .collect(),
        params,
        conversions,
        output: sig.output.clone(),
    })
}

/// The match arm of `operation`: its name and arity, its arguments read, the method called
/// (through `owner`: `Self`, or `<Self as Trait>` in a trait impl) and its result made a value.
fn arm(krate: &Path, owner: &TokenStream2, operation: &Operation) -> TokenStream2 {
    let Operation {
        name,
        method,
        cfgs,
        conversions,
        output,
        ..
    } = operation;
    let args: Vec<_> = (0..conversions.len())
        .map(|i| format_ident!("__fgvt_arg{i}"))
        .collect();
    let call = quote!(#owner::#method(self, #(#args),*));
    let result = match output {
        ReturnType::Type(_, ty) if is_result(ty) => {
            let into = quote_spanned!(ty.span()=> #krate::IntoValue::into_value(value));
            let debug = quote_spanned!(ty.span()=> ::std::format!("Err({:?})", error));
            quote! {
                match #call {
                    ::core::result::Result::Ok(value) => #into,
                    ::core::result::Result::Err(error) => {
                        #krate::Value::Str(::std::sync::Arc::from(#debug))
                    }
                }
            }
        }
        ReturnType::Type(_, ty) => {
            quote_spanned!(ty.span()=> #krate::IntoValue::into_value(#call))
        }
        ReturnType::Default => quote!({
            #call;
            #krate::Value::Unit
        }),
    };
    quote! {
        #(#cfgs)*
        (#name, [#(#args),*]) => {
            #(
                let #args: ::core::result::Result<_, ::std::string::String> = #conversions;
                let #args = #args?;
            )*
            ::core::result::Result::Ok(#result)
        }
    }
}

/// `ty` as written, give or take spaces.
fn type_text(ty: &Type) -> String {
    let mut text = ty.to_token_stream().to_string();
    for (spaced, tight) in [
        (" :: ", "::"),
        (" < ", "<"),
        ("< ", "<"),
        (" >", ">"),
        (" ,", ","),
    ] {
        text = text.replace(spaced, tight);
    }
    text.replace("& ", "&")
}

/// Whether `ty` is a `Result` (the last segment of its path is `Result`).
fn is_result(ty: &Type) -> bool {
    match ty {
        Type::Path(path) if path.qself.is_none() => path
            .path
            .segments
            .last()
            .is_some_and(|s| s.ident == "Result"),
        Type::Group(group) => is_result(&group.elem),
        Type::Paren(paren) => is_result(&paren.elem),
        _ => false,
    }
}

/// An expression of type `Result<ty, String>` that reads `value` (a `&Value`) as `ty`, or
/// `None` when a call's argument cannot be a `ty`.
fn conversion(krate: &Path, ty: &Type, value: TokenStream2) -> Option<TokenStream2> {
    let arg = quote!(#krate::Arg);
    let value_ty = quote!(#krate::Value);
    match ty {
        Type::Group(group) => conversion(krate, &group.elem, value),
        Type::Paren(paren) => conversion(krate, &paren.elem, value),
        Type::Tuple(tuple) => {
            let n = tuple.elems.len();
            let items = format_ident!("__fgvt_items");
            let names: Vec<_> = (0..n).map(|i| format_ident!("__fgvt_item{i}")).collect();
            let mut body = quote!(::core::result::Result::Ok((#(#names,)*)));
            for (i, elem) in tuple.elems.iter().enumerate().rev() {
                let read = conversion(krate, elem, quote!(&#items[#i]))?;
                let name = &names[i];
                body = quote!((#read).and_then(|#name| #body));
            }
            let expected = format!("expected a tuple of {n} values, got ");
            Some(quote! {
                match #value {
                    #value_ty::Tuple(#items) if #items.len() == #n => #body,
                    other => ::core::result::Result::Err(::std::format!("{}{}", #expected, other)),
                }
            })
        }
        Type::Path(path) if path.qself.is_none() => {
            let last = path.path.segments.last()?;
            let plain = matches!(last.arguments, PathArguments::None);
            let ident = last.ident.to_string();
            if plain && path.path.segments.len() == 1 {
                let t = &last.ident;
                let ranged = |read: TokenStream2| {
                    quote! {
                        #read.and_then(|n| {
                            <#t as ::core::convert::TryFrom<_>>::try_from(n).map_err(|_| {
                                ::std::format!(
                                    "expected an integer from {} to {}, got {}",
                                    #t::MIN,
                                    #t::MAX,
                                    n
                                )
                            })
                        })
                    }
                };
                let read = match ident.as_str() {
                    "bool" => quote!(#arg::boolean(#value)),
                    "i64" => quote!(#arg::int(#value)),
                    "u64" => quote!(#arg::uint(#value)),
                    "usize" => quote!(#arg::index(#value)),
                    "i8" | "i16" | "i32" | "isize" => ranged(quote!(#arg::int(#value))),
                    "u8" | "u16" | "u32" => ranged(quote!(#arg::uint(#value))),
                    "u128" => quote!(#arg::uint(#value).map(u128::from)),
                    "i128" => quote! {
                        match #value {
                            #value_ty::Nat(n) => ::core::result::Result::Ok(i128::from(*n)),
                            other => #arg::int(other).map(i128::from),
                        }
                    },
                    _ => return value_type(path, value),
                };
                return Some(read);
            }
            if ident == "Option" {
                let PathArguments::AngleBracketed(args) = &last.arguments else {
                    return None;
                };
                let [GenericArgument::Type(inner)] = args.args.iter().collect::<Vec<_>>()[..]
                else {
                    return None;
                };
                let some = format_ident!("__fgvt_some");
                let read = conversion(krate, inner, quote!(#some))?;
                return Some(quote! {
                    match #value {
                        #value_ty::Null => ::core::result::Result::Ok(::core::option::Option::None),
                        #some => (#read).map(::core::option::Option::Some),
                    }
                });
            }
            value_type(path, value)
        }
        _ => None,
    }
}

/// `fgvt_sync::Value` (or `Value`) as an argument: the value itself.
fn value_type(path: &syn::TypePath, value: TokenStream2) -> Option<TokenStream2> {
    let last = path.path.segments.last()?;
    (last.ident == "Value" && matches!(last.arguments, PathArguments::None))
        .then(|| quote!(::core::result::Result::Ok(::core::clone::Clone::clone(#value))))
}
