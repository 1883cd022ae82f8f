//! `#[gemm_kernel(..)]`: a GEMM kernel described by its tiles, checked when the
//! crate builds, generated as CUDA C++ with a typed launcher.
//!
//! Use it through `gemm_runtime`, which re-exports it; the grammar is on
//! [`gemm_kernel`]'s page.

mod ast;
mod attr;
mod ctxt;
mod expand;
mod sig;
mod suggest;

use proc_macro::TokenStream;

#[doc = include_str!("grammar.md")]
#[proc_macro_attribute]
pub fn gemm_kernel(args: TokenStream, item: TokenStream) -> TokenStream {
    expand::gemm_kernel(args.into(), item.into()).into()
}

#[cfg(test)]
mod tests;
