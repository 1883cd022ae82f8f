"""What an all-reduce beside the GEMMs of a tensor-parallel MLP block costs
a GPU at its power cap: the time and the mean SM clock (NVML, sampled
every half millisecond) of the block's GEMMs alone, the all-reduce alone,
both in turn, and the tokens in 2 and 4 chunks with each chunk's
all-reduce on NCCL's stream (high priority) beside the next chunk's GEMMs.
cuBLAS through PyTorch, so that what it finds is the GPU's, not our
kernels'. Forms in rotation, a loop of launches each (about 0.6 s).

    torchrun --nproc_per_node=2 gemm-lab/probes/tp_clocks.py [tokens...]
"""

import ctypes
import os
import sys
import threading
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F


class Nvml:
    def __init__(self, uuid):
        self.lib = ctypes.CDLL("libnvidia-ml.so.1")
        assert self.lib.nvmlInit_v2() == 0
        self.h = ctypes.c_void_p()
        assert self.lib.nvmlDeviceGetHandleByUUID(("GPU-" + str(uuid)).encode(), ctypes.byref(self.h)) == 0

    def sm_clock_mhz(self):
        v = ctypes.c_uint()
        assert self.lib.nvmlDeviceGetClockInfo(self.h, 1, ctypes.byref(v)) == 0  # NVML_CLOCK_SM
        return v.value

    def power_capped(self):
        v = ctypes.c_ulonglong()
        assert self.lib.nvmlDeviceGetCurrentClocksEventReasons(self.h, ctypes.byref(v)) == 0
        return bool(v.value & 0x4)  # SW power cap

    def power_limit_w(self):
        v = ctypes.c_uint()
        assert self.lib.nvmlDeviceGetEnforcedPowerLimit(self.h, ctypes.byref(v)) == 0
        return v.value / 1000


def main():
    local = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local)
    opts = dist.ProcessGroupNCCL.Options(is_high_priority_stream=True)
    dist.init_process_group("nccl", pg_options=opts, device_id=torch.device("cuda", local))
    rank, world = dist.get_rank(), dist.get_world_size()
    nvml = Nvml(torch.cuda.get_device_properties(local).uuid)
    hidden, ffn = 8192, 28672
    kw = dict(device="cuda", dtype=torch.bfloat16)
    w1 = torch.randn(ffn // world, hidden, **kw) * hidden**-0.5
    b1 = torch.randn(ffn // world, **kw) * 0.1
    w2 = torch.randn(hidden, ffn // world, **kw) * ffn**-0.5
    if rank == 0:
        print(f"PyTorch {torch.__version__}, NCCL {torch.cuda.nccl.version()}, {world} GPU(s), power limit {nvml.power_limit_w():.0f} W")
    for tokens in [int(t) for t in sys.argv[1:]] or [8192, 1024]:
        x = torch.randn(tokens, hidden, **kw)
        z = torch.empty(tokens, hidden, **kw)

        def gemms(lo, hi):
            torch.mm(F.gelu(F.linear(x[lo:hi], w1, b1)), w2.t(), out=z[lo:hi])

        def chunked(n, reduce=True):
            def f():
                step = tokens // n
                works = []
                for c in range(n):
                    gemms(c * step, (c + 1) * step)
                    if reduce:
                        works.append(dist.all_reduce(z[c * step:(c + 1) * step], async_op=True))
                for w in works:
                    w.wait()
            return f

        forms = {
            "gemms": chunked(1, reduce=False),
            "all-reduce": lambda: dist.all_reduce(z),
            "in turn": chunked(1),
            "2 chunks": chunked(2),
            "4 chunks": chunked(4),
        }
        iters = max(8, int(600 / (tokens / 1024 * 0.75)))
        res = {k: [] for k in forms}
        names = list(forms)
        for r in range(6):
            for i in range(len(names)):
                name = names[(i + r) % len(names)]
                dist.barrier()
                torch.cuda.synchronize()
                samples, stop = [], threading.Event()

                def sample():
                    while not stop.is_set():
                        samples.append((nvml.sm_clock_mhz(), nvml.power_capped()))
                        time.sleep(0.0005)

                sampler = threading.Thread(target=sample)
                t0 = time.perf_counter()
                sampler.start()
                for _ in range(iters):
                    forms[name]()
                torch.cuda.synchronize()
                t1 = time.perf_counter()
                stop.set()
                sampler.join()
                if r > 0:
                    clock = sum(c for c, _ in samples) / len(samples)
                    capped = sum(p for _, p in samples) / len(samples)
                    res[name].append(((t1 - t0) * 1e3 / iters, clock, capped))
        med = lambda v: sorted(v)[len(v) // 2]
        row = {k: tuple(med([t[j] for t in v]) for j in range(3)) for k, v in res.items()}
        rows = [None] * world
        dist.all_gather_object(rows, row)
        if rank == 0:
            print(f"\n{tokens} tokens, {iters} launches a loop; a launch's ms, the loop's mean SM clock, samples power-capped")
            for rk, rw in enumerate(rows):
                for k, (ms, mhz, capped) in rw.items():
                    print(f"rank {rk} {k:>10}: {ms:.3f} ms {mhz:5.0f} MHz capped {capped:.0%}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
