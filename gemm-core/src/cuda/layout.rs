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

/// Describes a layout in a comment.
pub fn describe(layout: Layout) -> &'static str {
    match layout {
        Layout::RowMajor => "row-major",
        Layout::ColMajor => "column-major",
    }
}
