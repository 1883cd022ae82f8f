//! The kernel's parameters, the same order for every atom: the operands,
//! the sizes, the batch strides, the epilogue's run-time arguments where the
//! spec declares them, a masked batch's rows, and the stream-K scratch. The runtime pushes its
//! arguments in this order.

use super::ptx::storage_type;
use super::stream_k;
use super::writer::Writer;
use crate::spec::{Groups, KernelSpec, Persistent, Scale};

/// Writes the parameter list, `(` to `)`, after the kernel's name.
pub fn signature(w: &mut Writer, spec: &KernelSpec) {
    let (a, b) = (storage_type(spec.a.elem), storage_type(spec.b.elem));
    let c = storage_type(spec.c.elem);
    let mut lines = vec![
        format!("const {a}* __restrict__ A, const {b}* __restrict__ B, {c}* __restrict__ C,"),
        "int M, int N, int K, int lda, int ldb, int ldc,".to_string(),
        "// batches: each problem's A, B and C lie these many elements after the one before".to_string(),
        "long long batch_a, long long batch_b, long long batch_c".to_string(),
    ];
    let f = spec.fused;
    let (mut extra, mut names) = (Vec::new(), Vec::new());
    if f.scale.is_some() {
        extra.push("const float* __restrict__ scale_a, const float* __restrict__ scale_b".to_string());
        names.push("A's and B's scales");
    }
    if f.alpha {
        extra.push("float alpha".to_string());
        names.push("alpha");
    }
    if f.beta {
        extra.push("float beta".to_string());
        names.push("beta");
    }
    if let Some(bias) = f.bias {
        extra.push(format!("const {}* __restrict__ bias, long long batch_bias", storage_type(bias.elem)));
        names.push("the bias and its batch stride");
    }
    if !extra.is_empty() {
        lines.push(format!("// epilogue: {}", names.join(", ")));
        lines.push(extra.join(", "));
    }
    match spec.groups {
        Some(Groups::Masked) => {
            lines.push("// groups = masked: the rows each problem of the batch holds, at most M".to_string());
            lines.push("const int* __restrict__ group_rows".to_string());
        }
        Some(Groups::Contiguous) => {
            lines.push("// groups = contiguous: where each group's rows of A and C end (the next group's start)".to_string());
            lines.push("const int* __restrict__ group_ends".to_string());
        }
        Some(Groups::Indexed) => {
            lines.push("// groups = indexed: each row's group of A and C, -1 for a padding row".to_string());
            lines.push("const int* __restrict__ row_groups".to_string());
        }
        None => {}
    }
    // tiles that place themselves in one A and C on a grid of a block per tile find their group among these
    if spec.persistent.is_none() && spec.groups.is_some_and(Groups::one_a_and_c) {
        lines.push("// and the groups (problems of B) there are".to_string());
        lines.push("int batches".to_string());
    }
    match spec.persistent {
        Some(Persistent::StreamK | Persistent::Hybrid | Persistent::TailSplit) => lines.push(format!("int batches, {}", stream_k::PARAMS)),
        Some(Persistent::Tiles) => {
            lines.push("// persistent: the problems of the batch, whose tiles the blocks walk".to_string());
            lines.push("int batches".to_string());
        }
        Some(Persistent::Queue) => {
            lines.push("// persistent = queue: the problems of the batch, and the queue: the count of tiles taken, then".to_string());
            lines.push("// of blocks done taking (zero at launch, left zero by the last block)".to_string());
            lines.push("int batches, unsigned* __restrict__ queue".to_string());
        }
        None => {}
    }
    let maps = spec.tma_maps();
    if !maps.is_empty() {
        let name = |m: &&str| match *m {
            "a_edge" => "A's in edge boxes".to_string(),
            "b_edge" => "B's in edge boxes".to_string(),
            m => format!("{}'s", m.to_uppercase()),
        };
        let names: Vec<String> = maps.iter().map(name).collect();
        lines.push(format!("// TMA tensor maps: {} (the pointers above are what they map)", names.join(", ")));
        lines.push(maps.iter().map(|m| format!("const __grid_constant__ TensorMap tmap_{m}")).collect::<Vec<_>>().join(", "));
    }
    if spec.by_class() {
        lines.push("// by class of lines: the operands' tensor maps a class of lines at a time, and where they start".to_string());
        lines.push("const __grid_constant__ LineClasses classes".to_string());
    }
    // commas between groups: after every parameter line but the last
    let last = lines.len() - 1;
    w.line(format!("{}(", spec.kernel_name()));
    for (i, l) in lines.iter().enumerate() {
        let comma = if i < last && !l.ends_with(',') && !l.starts_with("//") { "," } else { "" };
        w.line(format!("    {l}{comma}{}", if i == last { ")" } else { "" }));
    }
}

/// For a grid of one block per C tile: `body` (the whole kernel past its
/// signature) written once, as a lambda over the operands' pointers, and
/// called with the parameters themselves where the launch is one problem,
/// or with pointers moved to `blockIdx.z`'s problem where it is a batch
/// (64-bit offsets: a batch may span more than 2^31 elements; each
/// problem's own offsets stay 32-bit). Called with the parameters, the body
/// compiles as it did before batches existed: ptxas addresses A, B and C
/// from the constant bank, where moved pointers take registers. On the H100
/// that took `double_buffering` (255 registers a thread) from 40.3 to 46.4
/// TFLOP/s at 4096^3 and put the fp32 ladder back at its figures from
/// before batches (BENCHMARKS.md).
///
/// Under `groups = indexed | contiguous` the launch is one problem of A and C (a
/// block per tile of them, the grid one deep) whose tile takes the B (and
/// bias, and B's block scales) of its group, `group` (in scope): the body is
/// called once, with those moved there. Under `scale = block` the scales
/// move with their operands.
pub fn per_problem(w: &mut Writer, spec: &KernelSpec, body: impl FnOnce(&mut Writer)) {
    // (type, name, batch stride) of each pointer the batch moves
    let mut pointers = vec![
        (format!("const {}*", storage_type(spec.a.elem)), "A", "batch_a"),
        (format!("const {}*", storage_type(spec.b.elem)), "B", "batch_b"),
        (format!("{}*", storage_type(spec.c.elem)), "C", "batch_c"),
    ];
    if let Some(bias) = spec.fused.bias {
        pointers.push((format!("const {}*", storage_type(bias.elem)), "bias", "batch_bias"));
    }
    if spec.fused.scale == Some(Scale::Block) {
        // (the sizes of the launch's problems: a problem's own M may shadow M in the body)
        w.line("// scale = block: A's scales K block after K block, M rounded up to 4 rows apart; each problem's");
        w.line("// scales after the one before's, where the batch does not share its operand (stride 0)");
        w.line("const int sfa_ld = (M + 3) / 4 * 4;");
        // (kept where used: grouped rows lie in one A, whose scales no group moves)
        w.declare("sfa_batch", "const long long sfa_batch = batch_a != 0 ? (long long)sfa_ld * ((K + 127) / 128) : 0;");
        w.line("const long long sfb_batch = batch_b != 0 ? (long long)((N + 127) / 128) * ((K + 127) / 128) : 0;");
        pointers.push(("const float*".to_string(), "scale_a", "sfa_batch"));
        pointers.push(("const float*".to_string(), "scale_b", "sfb_batch"));
    }
    let list = |f: &dyn Fn(&(String, &str, &str)) -> String| pointers.iter().map(f).collect::<Vec<_>>().join(", ");
    w.line("// the kernel's body, over one problem's operands: called with the parameters themselves");
    w.line("// where the launch is one problem, which the compiler then addresses from the constant bank");
    w.statement_block(format!("const auto body = [&]({})", list(&|(t, name, _)| format!("{t} __restrict__ {name}"))), body);
    if matches!(spec.groups, Some(Groups::Indexed | Groups::Contiguous)) {
        w.line("// the tile's group's B (and bias)");
        let moved = |(_, name, stride): &(String, &str, &str)| match *name {
            "B" | "bias" | "scale_b" => format!("{name} + group * {stride}"),
            _ => name.to_string(),
        };
        return w.line(format!("body({});", list(&moved)));
    }
    w.line("// one problem, or blockIdx.z's of a batch");
    w.line(format!("if (gridDim.z == 1) body({});", list(&|(_, name, _)| name.to_string())));
    w.line(format!("else body({});", list(&|(_, name, stride)| format!("{name} + blockIdx.z * {stride}"))));
}
