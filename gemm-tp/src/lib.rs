//! Tensor-parallel linear layers over NCCL, on `gemm-runtime`'s kernels.
//!
//! Megatron's two layers: [`ColumnParallel`] (each GPU a slice of the
//! output features; an all-gather where every GPU wants all of them) and
//! [`RowParallel`] (each GPU a slice of the input features; an all-reduce
//! or reduce-scatter of the partial outputs). And their split of an MLP
//! block across GPUs ([`TpMlp`]): the first linear layer
//! split by its output columns (each GPU holds a slice of W1's rows and
//! computes its slice of the hidden activations, GELU included, with no
//! communication), the second by its input rows (each GPU multiplies its
//! slice of the activations by its slice of W2 into a partial sum of the
//! whole output), then an all-reduce sums the partial outputs. The second
//! layer's bias is added once: by rank 0's epilogue, before the sum.
//!
//! One process drives every GPU ([`TpGroup`]: a communicator per device,
//! from one NCCL id, each beside a compute stream), or one process each
//! ([`TpGroup::from_rank`]). The collective can run behind the GEMMs with
//! the tokens (M) split into chunks ([`ChunkPlan`], cut where the GEMMs
//! take no more waves of tiles than one chunk would): chunk i's all-reduce
//! runs on the communicator's stream (the GPU's highest priority) while
//! chunk i + 1's GEMMs, their blocks taking tiles from a queue, run on the
//! compute stream, each chunk's partial sums in a buffer of their own. The
//! two are made ready at once, so that the collective's priority places its
//! CTAs before the GEMM's blocks take every SM, and a call's first GEMMs
//! wait for the group's earlier collectives (events between the streams; no
//! host synchronization inside a layer). On two H200s chunking pays little:
//! timed a call at a time, 2 chunks hide 5-13% of the all-reduce; run back
//! to back at the GPUs' power cap, GEMMs beside the collective run at a
//! lower clock and 2 chunks lose 6% (cuBLAS's block too). Use one chunk
//! there, the plain order (docs/src/tensor-parallel.md).
//!
//! NCCL is loaded at run time: without it [`TpGroup::new`] is an `Err`
//! saying so. This crate keeps NCCL out of what single-GPU users build.
//! NVLink multicast (NVLS) is never asked for: the communicators are
//! created with NCCL's defaults, and this crate sets no environment.

mod error;
mod group;
pub mod kernels;
mod layers;
mod mlp;
mod plan;
mod scratch;

pub use error::TpError;
pub use group::{GroupId, TpGroup};
pub use layers::{ColumnParallel, Reduce, RowParallel};
pub use mlp::{MlpShape, TpMlp};
pub use plan::{ChunkGemm, ChunkPlan, FITTED_TILES};
