// SPDX-License-Identifier: Apache-2.0
// CUDA init to first kernel, as a job's first GPU work pays it: context
// creation, a 1 GiB allocation, one kernel over it, synchronised. Built with
// nvcc on the GPU machine by bench/gpu-check, which times the whole process
// from outside (inside the jail: entry and the job's making included).
#include <cstdio>
#include <cuda_runtime.h>

__global__ void fill(float *data, size_t n, float value) {
    const size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
    if (i < n) {
        data[i] = value;
    }
}

int main() {
    const size_t n = (1UL << 30) / sizeof(float);
    float *data = nullptr;
    if (cudaMalloc(&data, n * sizeof(float)) != cudaSuccess) {
        std::fprintf(stderr, "first_kernel: cudaMalloc: %s\n",
                     cudaGetErrorString(cudaGetLastError()));
        return 1;
    }
    fill<<<(n + 255) / 256, 256>>>(data, n, 1.0F);
    const cudaError_t done = cudaDeviceSynchronize();
    if (done != cudaSuccess) {
        std::fprintf(stderr, "first_kernel: kernel: %s\n", cudaGetErrorString(done));
        return 1;
    }
    cudaFree(data);
    std::printf("first_kernel ok\n");
    return 0;
}
