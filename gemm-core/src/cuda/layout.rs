//! Index expressions for matrices in global memory.

use crate::spec::Layout;

/// Wraps a compound expression in parentheses so it can be multiplied.
pub fn term(e: &str) -> String {
    if e.contains([' ', '+', '-', '*', '/', '%']) {
        format!("({e})")
    } else {
        e.to_string()
    }
}

/// The offset of element (row, col) of a matrix with leading dimension `ld`.
pub fn offset(layout: Layout, ld: &str, row: &str, col: &str) -> String {
    match layout {
        Layout::RowMajor => format!("{} * {ld} + {}", term(row), term(col)),
        Layout::ColMajor => format!("{} + {} * {ld}", term(row), term(col)),
    }
}

/// [`offset`] computed in 64 bits: C's, whose span may pass 2^31 elements
/// (logits of 16384 tokens over a 152064-word vocabulary), though each of
/// its sides and its leading dimension fits an `int`.
pub fn wide_offset(layout: Layout, ld: &str, row: &str, col: &str) -> String {
    match layout {
        Layout::RowMajor => format!("(long long){} * {ld} + {}", term(row), term(col)),
        Layout::ColMajor => format!("{} + (long long){} * {ld}", term(row), term(col)),
    }
}

/// Describes a layout in a comment.
pub fn describe(layout: Layout) -> &'static str {
    match layout {
        Layout::RowMajor => "row-major",
        Layout::ColMajor => "column-major",
    }
}

/// `base + t1 + t2 ...` of the present terms (loops that run once give
/// none, and a term of 0 adds nothing); `0` if nothing is left.
pub fn sum(base: &str, terms: &[Option<String>]) -> String {
    let mut s = base.to_string();
    for t in terms.iter().flatten().filter(|t| *t != "0") {
        if s.is_empty() || s == "0" {
            s = t.clone();
        } else {
            s = format!("{s} + {t}");
        }
    }
    if s.is_empty() {
        "0".into()
    } else {
        s
    }
}

/// `expr * factor`, leaving out a factor of 1.
pub fn scaled(expr: &str, factor: u32) -> String {
    if factor == 1 {
        expr.to_string()
    } else {
        format!("({expr}) * {factor}")
    }
}
