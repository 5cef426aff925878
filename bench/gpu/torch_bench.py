# SPDX-License-Identifier: Apache-2.0
"""GPU throughput as a job sees it: a bf16 matmul (TFLOP/s) and a device
copy (GB/s, bytes read plus written), each the median of timed repeats after
a warm-up. Prints one JSON object. Run by bench/gpu-check inside and outside
the jail, alternating."""
import json
import statistics
import sys

import torch


def timed(fn, repeats):
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(repeats):
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end) / 1000.0)
    return statistics.median(times)


def main():
    if not torch.cuda.is_available():
        print("torch_bench: no CUDA device", file=sys.stderr)
        return 1
    n = 8192
    a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    for _ in range(5):
        a @ b
    seconds = timed(lambda: a @ b, 20)
    tflops = 2 * n**3 / seconds / 1e12
    src = torch.empty(1 << 30, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    for _ in range(3):
        dst.copy_(src)
    seconds = timed(lambda: dst.copy_(src), 20)
    gbps = 2 * src.numel() / seconds / 1e9
    print(json.dumps({"matmul_tflops": tflops, "copy_gbps": gbps,
                      "gpu": torch.cuda.get_device_name(0)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
