//! `#[gemm_kernel(..)]`: a GEMM kernel described by its tiles, checked when the
//! crate builds, generated as CUDA C++ with a typed launcher.
//!
//! Use it through `gemm_runtime`, which re-exports it; the grammar is in
//! the module `attr` (its source's documentation) and the project README.

mod ast;
mod attr;
mod ctxt;
mod expand;
mod sig;
mod suggest;

use proc_macro::TokenStream;

/// Turns a signature `fn name(a: Mat<..>, b: Mat<..>, c: MatMut<..>);` into a
/// launcher `name(stream, &a, &b, &mut c, dims)` and a module `name` holding the
/// spec, the CUDA source and the launch shape. See the README for the grammar.
#[proc_macro_attribute]
pub fn gemm_kernel(args: TokenStream, item: TokenStream) -> TokenStream {
    expand::gemm_kernel(args.into(), item.into()).into()
}

#[cfg(test)]
mod tests;
