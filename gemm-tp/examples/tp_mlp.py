"""The Megatron MLP block of `tp_mlp.rs` in PyTorch, written the plain way:
the GEMMs, an unfused GELU, then a blocking all-reduce (no overlap), bf16,
random normal inputs; one process per GPU.

    torchrun --nproc_per_node=N gemm-tp/examples/tp_mlp.py

Prints, on rank 0, a row per size: the block's time, the same block without
its all-reduce (the GEMMs, GELU and biases alone) and the all-reduce of its
output alone. The three are timed in turns, a run of each a round, each
round in another order (as `tp_mlp.rs` times its forms: with the GPUs at
their power cap, a form timed first runs at cooler clocks), CUDA events on
each rank, medians; a row gives the slowest rank's (the block spans them).
"""

import os

import torch
import torch.distributed as dist
import torch.nn.functional as F


def medians_in_turns(forms, rounds=20):
    times = [[] for _ in forms]
    for r in range(rounds + 1):
        for i in ((j + r) % len(forms) for j in range(len(forms))):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            dist.barrier()
            torch.cuda.synchronize()
            start.record()
            forms[i]()
            end.record()
            torch.cuda.synchronize()
            if r > 0:
                times[i].append(start.elapsed_time(end))
    return [sorted(t)[len(t) // 2] for t in times]


def main():
    # (the device named up front, so that NCCL's barrier need not guess it)
    local = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local)
    dist.init_process_group("nccl", device_id=torch.device("cuda", local))
    rank, world = dist.get_rank(), dist.get_world_size()
    hidden, ffn = 8192, 28672
    kw = dict(device="cuda", dtype=torch.bfloat16)
    w1 = torch.randn(ffn // world, hidden, **kw) * hidden**-0.5
    b1 = torch.randn(ffn // world, **kw) * 0.1
    w2 = torch.randn(hidden, ffn // world, **kw) * ffn**-0.5
    b2 = torch.randn(hidden, **kw) * 0.1
    if rank == 0:
        print(f"PyTorch {torch.__version__}, NCCL {'.'.join(map(str, torch.cuda.nccl.version()))}, {world} GPU(s)")
        print("| tokens | GPUs | PyTorch: ms | without the all-reduce: ms | all-reduce alone: ms |")
        print("|---:|---:|---:|---:|---:|")
    for tokens in (8192, 1024):
        x = torch.randn(tokens, hidden, **kw)
        z = torch.randn(tokens, hidden, **kw)

        def block(reduce=True):
            y = F.gelu(F.linear(x, w1, b1))
            z = F.linear(y, w2)
            if reduce:
                dist.all_reduce(z)
            return z + b2

        ms = medians_in_turns([block, lambda: block(reduce=False), lambda: dist.all_reduce(z)])
        every = [None] * world
        dist.all_gather_object(every, ms)
        if rank == 0:
            slowest = [max(r[i] for r in every) for i in range(3)]
            print(f"| {tokens} | {world} | " + " | ".join(f"{t:.3f}" for t in slowest) + " |")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
