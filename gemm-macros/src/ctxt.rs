//! Error collection: every error is kept with its span and all are reported
//! together, so one build shows everything wrong with a description.

use std::collections::HashMap;

use proc_macro2::{Span, TokenStream};

pub struct Ctxt {
    errors: Vec<syn::Error>,
    /// Where each argument was written, by its dotted path (`block.m`, `staging.vector`).
    spans: HashMap<String, Span>,
    /// The attribute as a whole, for errors about what is missing.
    whole: Span,
}

impl Ctxt {
    pub fn new(whole: Span) -> Self {
        Ctxt { errors: Vec::new(), spans: HashMap::new(), whole }
    }

    pub fn error(&mut self, span: Span, msg: impl std::fmt::Display) {
        self.errors.push(syn::Error::new(span, msg));
    }

    pub fn syn_error(&mut self, e: syn::Error) {
        self.errors.push(e);
    }

    /// Remembers where the argument at `path` was written.
    pub fn record(&mut self, path: impl Into<String>, span: Span) {
        self.spans.insert(path.into(), span);
    }

    /// The span of the argument at `path`, or of its nearest written parent
    /// (`block.k` left out points at `block(..)`), or of the whole attribute.
    pub fn span_of(&self, path: &str) -> Span {
        let mut p = path;
        loop {
            if let Some(s) = self.spans.get(p) {
                return *s;
            }
            match p.rfind('.') {
                Some(i) => p = &p[..i],
                None => return self.whole,
            }
        }
    }

    pub fn whole(&self) -> Span {
        self.whole
    }

    pub fn has_errors(&self) -> bool {
        !self.errors.is_empty()
    }

    /// All errors as `compile_error!`s, or `None` if there were none.
    pub fn into_compile_errors(self) -> Option<TokenStream> {
        let mut errors = self.errors.into_iter();
        let mut first = errors.next()?;
        for e in errors {
            first.combine(e);
        }
        Some(first.to_compile_error())
    }
}
