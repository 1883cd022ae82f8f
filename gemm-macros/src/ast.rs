//! The attribute's syntax tree, before any meaning is given to it.
//!
//! `block(m = 128, n = 128, k = 8, threads = 256), atom = fma, persistent`
//! is a list of [`Node`]s: calls, assignments, flags and integers.

use proc_macro2::Span;
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::{token, Ident, LitInt, Token};

pub enum Node {
    /// `name`
    Flag(Ident),
    /// `name = value`
    Assign(Ident, Box<Node>),
    /// `name(args..)`
    Call(Ident, Vec<Node>, Span),
    /// `8`
    Int(u32, Span),
    /// `[64, 128]` (a list of values in `tune(..)`)
    List(Vec<Node>, Span),
    /// `block.m = value` (a setting by its path in `tune(..)`)
    Path(Vec<Ident>, Box<Node>),
}

impl Node {
    pub fn span(&self) -> Span {
        match self {
            Node::Flag(i) => i.span(),
            Node::Assign(i, v) => i.span().join(v.span()).unwrap_or(i.span()),
            Node::Call(_, _, s) | Node::Int(_, s) | Node::List(_, s) => *s,
            Node::Path(p, v) => p[0].span().join(v.span()).unwrap_or(p[0].span()),
        }
    }

    /// The dotted path of a `Path` node's setting, or a plain name's.
    pub fn path(&self) -> Option<(String, Span)> {
        match self {
            Node::Path(p, _) => {
                let span = p.iter().skip(1).fold(p[0].span(), |s, i| s.join(i.span()).unwrap_or(s));
                Some((p.iter().map(|i| i.to_string()).collect::<Vec<_>>().join("."), span))
            }
            _ => self.name().map(|i| (i.to_string(), i.span())),
        }
    }

    /// The name a node goes by: `block` for `block(..)`, `atom` for `atom = ..`.
    pub fn name(&self) -> Option<&Ident> {
        match self {
            Node::Flag(i) | Node::Assign(i, _) | Node::Call(i, _, _) => Some(i),
            Node::Path(p, _) => Some(&p[0]),
            Node::Int(..) | Node::List(..) => None,
        }
    }
}

impl Parse for Node {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        if input.peek(LitInt) {
            let lit: LitInt = input.parse()?;
            return Ok(Node::Int(lit.base10_parse()?, lit.span()));
        }
        if input.peek(token::Bracket) {
            let content;
            let brackets = syn::bracketed!(content in input);
            let items = Punctuated::<Node, Token![,]>::parse_terminated(&content)?;
            return Ok(Node::List(items.into_iter().collect(), brackets.span.join()));
        }
        let name = input.call(Ident::parse_any_ident)?;
        if input.peek(Token![.]) {
            let mut path = vec![name];
            while input.peek(Token![.]) {
                input.parse::<Token![.]>()?;
                path.push(input.call(Ident::parse_any_ident)?);
            }
            input.parse::<Token![=]>()?;
            return Ok(Node::Path(path, Box::new(input.parse()?)));
        }
        if input.peek(Token![=]) {
            input.parse::<Token![=]>()?;
            return Ok(Node::Assign(name, Box::new(input.parse()?)));
        }
        if input.peek(token::Paren) {
            let content;
            let parens = syn::parenthesized!(content in input);
            let args = Punctuated::<Node, Token![,]>::parse_terminated(&content)?;
            let span = name.span().join(parens.span.close()).unwrap_or(name.span());
            return Ok(Node::Call(name, args.into_iter().collect(), span));
        }
        Ok(Node::Flag(name))
    }
}

/// The whole attribute: comma-separated nodes.
pub struct AttrArgs(pub Vec<Node>);

impl Parse for AttrArgs {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        Ok(AttrArgs(Punctuated::<Node, Token![,]>::parse_terminated(input)?.into_iter().collect()))
    }
}

/// `Ident::parse_any` accepts keywords too (`fn`, `type`), which the grammar
/// never uses; plain identifiers give better errors.
trait ParseAnyIdent {
    fn parse_any_ident(input: ParseStream) -> syn::Result<Ident>;
}

impl ParseAnyIdent for Ident {
    fn parse_any_ident(input: ParseStream) -> syn::Result<Ident> {
        input.parse::<Ident>().map_err(|e| syn::Error::new(e.span(), "expected an argument such as `block(..)`, `atom = ..` or a number"))
    }
}
