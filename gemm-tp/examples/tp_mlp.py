"""The Megatron MLP block of `tp_mlp.rs` in PyTorch, written the plain way:
the GEMMs, an unfused GELU, then a blocking all-reduce (no overlap), bf16,
random normal inputs; one process per GPU.

    torchrun --nproc_per_node=N gemm-tp/examples/tp_mlp.py

Prints, on rank 0, a row per size: the block's median time (CUDA events,
after warm-up) and the all-reduce of its output alone.
"""

import torch
import torch.distributed as dist
import torch.nn.functional as F


def median_ms(fn, warmup=3, runs=15):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(runs):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        dist.barrier()
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    times.sort()
    return times[runs // 2]


def main():
    dist.init_process_group("nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.cuda.set_device(rank)
    hidden, ffn = 8192, 28672
    kw = dict(device="cuda", dtype=torch.bfloat16)
    w1 = torch.randn(ffn // world, hidden, **kw) * hidden**-0.5
    b1 = torch.randn(ffn // world, **kw) * 0.1
    w2 = torch.randn(hidden, ffn // world, **kw) * ffn**-0.5
    b2 = torch.randn(hidden, **kw) * 0.1
    if rank == 0:
        print(f"PyTorch {torch.__version__}, NCCL {'.'.join(map(str, torch.cuda.nccl.version()))}, {world} GPU(s)")
        print("| tokens | GPUs | PyTorch: ms | all-reduce alone: ms |")
        print("|---:|---:|---:|---:|")
    for tokens in (8192, 1024):
        x = torch.randn(tokens, hidden, **kw)

        def block():
            y = F.gelu(F.linear(x, w1, b1))
            z = F.linear(y, w2)
            dist.all_reduce(z)
            return z + b2

        z = torch.randn(tokens, hidden, **kw)
        ms = median_ms(block)
        comm = median_ms(lambda: dist.all_reduce(z))
        if rank == 0:
            print(f"| {tokens} | {world} | {ms:.3f} | {comm:.3f} |")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
