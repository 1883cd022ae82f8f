//! The epilogue of register-held accumulators: f32 values to C in its type
//! and layout, from the atom's map of which (row, column) each one holds.

use super::Tc;
use crate::cuda::layout::offset;
use crate::cuda::ptx::ptx_type;
use crate::cuda::writer::Writer;
use crate::spec::{Elem, Epilogue, Layout};

impl Tc<'_> {
    /// Stores two accumulators that are neighbours along n, `v0` at (row,
    /// col) and `v1` at (row, col + 1): one store of the pair where C's rows
    /// are contiguous and the epilogue is vectorized, else one per element.
    pub(super) fn store_pair(&self, w: &mut Writer, row: &str, col: &str, v0: &str, v1: &str) {
        let c = self.spec.c;
        let t = ptx_type(c.elem);
        if self.spec.epilogue == Epilogue::Vector && c.layout == Layout::RowMajor {
            let at = offset(c.layout, "ldc", row, col);
            match c.elem {
                Elem::F32 => w.line(format!("*reinterpret_cast<float2*>(&C[{at}]) = float2{{{v0}, {v1}}};")),
                _ => w.line(format!("*reinterpret_cast<unsigned*>(&C[{at}]) = to_{t}x2({v0}, {v1});")),
            }
            return;
        }
        let value = |v: &str| if c.elem == Elem::F32 { v.to_string() } else { format!("to_{t}({v})") };
        w.line(format!("C[{}] = {};", offset(c.layout, "ldc", row, col), value(v0)));
        w.line(format!("C[{}] = {};", offset(c.layout, "ldc", row, &format!("{col} + 1")), value(v1)));
    }
}
