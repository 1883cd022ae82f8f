//! The SIMT kernel under stream-K (`crate::cuda::stream_k`): its units
//! compute from a cp.async pipeline that flows through the whole share, or
//! from shared-memory staging that starts afresh in each unit.

use super::Kernel;
use crate::cuda::copy::Checks;
use crate::cuda::epilogue::Output;
use crate::cuda::ptx::storage_type;
use crate::cuda::stream_k::Tiling;
use crate::cuda::writer::Writer;
use crate::spec::{Edges, Staging};

impl Kernel<'_> {
    /// The schedule's view of this kernel: tiles and accumulators.
    pub(super) fn stream_k(&self) -> Tiling {
        Tiling {
            raster: self.spec.raster,
            bm: self.bm,
            bn: self.bn,
            bk: self.spec.block.k.expect("checked: staged tiles have a K step"),
            team: crate::cuda::epilogue::Team::block(self.threads),
            acc: "acc",
            loops: vec![("ii", self.mi * self.tm), ("jj", self.ni * self.tn)],
            guarded: self.spec.edges == Edges::Guarded,
            shares: crate::cuda::stream_k::Shares::StreamK,
        }
    }

    /// The stream-K loop over this block's units.
    pub(super) fn stream_k_units(&self, w: &mut Writer) {
        let sk = self.stream_k();
        w.line("");
        sk.share(w, self.spec.smem_bytes() - self.spec.ticket_bytes());
        if let Staging::CpAsync { stages, vector, .. } = self.spec.staging {
            w.line("");
            self.cp_async_prologue(w, stages, vector);
        }
        w.line("");
        let body = |w: &mut Writer, checks: Checks| match self.spec.staging {
            Staging::CpAsync { stages, vector, .. } => {
                self.accumulators(w);
                self.cp_async_main_loop(w, stages, vector, checks);
            }
            Staging::Smem { vector, buffers, .. } => {
                self.accumulators(w);
                w.block("", |w| {
                    w.line("// the unit's C tile and K steps, for its loads");
                    sk.unit_tile(w);
                    sk.tile_origin(w);
                    w.line(format!("const int k_begin = k_step * {};", sk.bk));
                    w.line(format!("const int k_end = k_begin + tiles * {};", sk.bk));
                    // the loads name A and B: in a scope of the unit's own, they are its problem's
                    let (a, b) = (storage_type(self.spec.a.elem), storage_type(self.spec.b.elem));
                    w.line("// the unit's problem of the batch: the loads below read its A and B");
                    w.line(format!("const {a}* const a_unit = A + batch * batch_a;"));
                    w.line(format!("const {b}* const b_unit = B + batch * batch_b;"));
                    w.block("", |w| {
                        w.line(format!("const {a}* const A = a_unit;"));
                        w.line(format!("const {b}* const B = b_unit;"));
                        w.line("__syncthreads();  // the previous unit is done with shared memory");
                        self.smem_body(w, vector, buffers);
                    });
                });
            }
            _ => unreachable!("checked by support::unsupported"),
        };
        sk.units(w, body, |w| {
            let out = Output::for_batch(self.spec, w, "unit");
            self.staged_epilogue(w, &out)
        });
    }
}
