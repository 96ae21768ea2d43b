"""`python -m fkeras`: version, build facts, CPU features, devices and threads (for bug reports)."""

import platform
import sys


def main():
    import fkeras
    from fkeras import _native

    C = _native._C
    info = C.build_info
    print(f"fkeras {fkeras.__version__}")
    print(f"python {platform.python_version()} on {platform.system()} {platform.machine()}")
    print(f"build: {info['compiler']}, {info['build_type']}, kernels for "
          f"{', '.join(info['isa_kernels'])}; {info['threading']}")
    feats = C.cpu_features()
    print("cpu features: " + " ".join(k for k, v in feats.items() if v))
    print(f"cpu kernels in use: {C.cpu_isa()} (override with FKERAS_CPU_ISA)")
    print("bf16 products (mixed_bfloat16): " + ("VDPBF16PS" if C.gemm_bf16_native() else
                                                "fp32 (no avx512_bf16 in use)"))
    print(f"threads: {C.num_threads()} (FKERAS_NUM_THREADS, OMP_NUM_THREADS, or CPU affinity)")
    cpu = fkeras.backend.get_device("cpu")
    native = len(cpu.native_kernel_names)
    print(f"cpu device: {native}/{len(cpu.kernels)} kernels native"
          + ("" if native == len(cpu.kernels) else
             f" (reference fallback: {', '.join(sorted(set(cpu.kernels) - cpu.native_kernel_names))})"))
    cuda = _native._C_cuda
    if cuda is None:
        print("cuda: not built (fkeras._C_cuda absent; build with nvcc on the PATH)")
    else:
        cinfo = cuda.build_info
        print(f"cuda: built (nvcc {cinfo['nvcc']}, archs {cinfo['cuda_archs']}, cudart "
              f"{cinfo['cudart']}); {cuda.status()}")
    from fkeras.backend import cuda as cuda_backend

    for line in cuda_backend.describe_gpus():
        print(line)
    print("devices: " + ", ".join(fkeras.backend.available_devices()))
    print(f"image_data_format: {fkeras.config.image_data_format()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
