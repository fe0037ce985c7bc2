# The dlc regression suite: pass-level tests (dlc-opt), driver tests (dlc),
# the bad-input corpus, end-to-end numeric tests against PyTorch references
# and the runtime's unit tests.
import os
import shutil

import lit.formats
from lit.llvm import llvm_config

config.name = "DLC"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".dlc", ".test", ".c"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.dlc_obj_root, "test")
config.excludes = ["CMakeLists.txt", "README.md", "lit.cfg.py",
                   "lit.site.cfg.py", "Inputs", "data", "models"]

llvm_config.use_default_substitutions()  # FileCheck, not, count
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.dlc_tools_dir, append_path=True)
# `dlc` is found on PATH, not substituted: a substitution would also rewrite
# the word in arguments such as `--emit=dlc`.
llvm_config.add_tool_substitutions(["dlc-opt"], [config.dlc_tools_dir])

# Tests never depend on the environment of the person running them.
for var in ["DLC_DEVICE", "DLC_NUM_THREADS"]:
    config.environment.pop(var, None)

config.substitutions.append(("%python", config.test_python))
config.substitutions.append(("%cc", config.host_cc))
config.substitutions.append(("%cxx", config.host_cxx))
config.substitutions.append(("%cmake", config.cmake_command))
config.substitutions.append(("%dlcrt_include", config.dlcrt_include_dir))
config.substitutions.append(("%dlcrt_lib", config.dlcrt_lib_dir))
config.substitutions.append(("%dlc_src", config.dlc_src_root))
config.substitutions.append(("%dlc_obj", config.dlc_obj_root))
config.substitutions.append(("%dlcrt_bin", config.dlcrt_bin_dir))
config.substitutions.append(("%nm", config.cmake_nm))
# Compile and link a C program against a model object and libdlcrt; in a
# sanitizer build (scripts/sanitize.sh) with the same sanitizers, whose
# runtime the program then provides to the instrumented libdlcrt.
sanitize = getattr(config, "dlc_sanitize", "")
config.substitutions.append(
    ("%link_model",
     "%s -std=c11 -Wall -Werror -I%s -L%s -Wl,-rpath,%s%s" %
     (config.host_cc, config.dlcrt_include_dir, config.dlcrt_lib_dir,
      config.dlcrt_lib_dir,
      " -fsanitize=" + sanitize if sanitize else "")))
# The same flags for a program built by hand against libdlcrt.
config.substitutions.append(
    ("%sanitize_flags", "-fsanitize=" + sanitize if sanitize else ""))
# Tests that load libdlcrt into a program that is not instrumented (Python's
# ctypes) cannot run in a sanitizer build: `UNSUPPORTED: sanitized`.
if sanitize:
    config.available_features.add("sanitized")

# NVIDIA's PTX assembler checks every PTX the compiler emits, where the CUDA
# toolkit is installed (on PATH, under $CUDA_HOME, or in its default place).
cuda_home = os.environ.get("CUDA_HOME", "/usr/local/cuda")
ptxas = shutil.which("ptxas", path=os.environ.get("PATH", "") + os.pathsep +
                     os.path.join(cuda_home, "bin"))
if ptxas:
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", ptxas))

# The x86 features of this CPU that native-code tests need: `dlc run`
# compiles for the host, so a path taken only with a feature (bf16 dot
# products on AVX512_BF16) is checked where the CPU has it.
try:
    with open("/proc/cpuinfo") as f:
        cpu_flags = next((line.split(":", 1)[1].split()
                          for line in f if line.startswith("flags")), [])
except OSError:
    cpu_flags = []
if "avx512_bf16" in cpu_flags:
    config.available_features.add("avx512bf16")
# x86-64-v4: AVX-512 F, DQ, BW and VL (the variants of --cpu=portable).
if all(f in cpu_flags for f in ("avx512f", "avx512dq", "avx512bw", "avx512vl")):
    config.available_features.add("x86-64-v4")

# The runtime's CUDA tests, where they were built (Linux; the header check
# only where CMake found the CUDA toolkit's headers).
if os.path.exists(os.path.join(config.dlcrt_bin_dir, "dlcrt-fake-cuda-tests")):
    config.available_features.add("fake-cuda")
if os.path.exists(os.path.join(config.dlcrt_bin_dir, "dlcrt-cuda-header-check")):
    config.available_features.add("cuda-headers")

# PyTorch beside the test Python: the reference data are committed, so no
# test needs it, but the GPU bench's smoke test then checks its PyTorch side.
import subprocess
if subprocess.run([config.test_python, "-c", "import torch"],
                  stdout=subprocess.DEVNULL,
                  stderr=subprocess.DEVNULL).returncode == 0:
    config.available_features.add("torch")

# pytest beside the test Python: test/python/ runs the Python package's tests.
if subprocess.run([config.test_python, "-c", "import pytest"],
                  stdout=subprocess.DEVNULL,
                  stderr=subprocess.DEVNULL).returncode == 0:
    config.available_features.add("pytest")

# Open MPI (mpirun and libmpi.so.40): the data-parallel tests run jobs of
# 2 and 4 ranks on this machine (test/e2e/distributed/).
if shutil.which("mpirun"):
    try:
        import ctypes
        ctypes.CDLL("libmpi.so.40")
        config.available_features.add("mpi")
    except OSError:
        pass

# A machine with an NVIDIA driver: tests that check the CPU fallback of a
# CUDA-capable binary do not apply there (test/gpu/ covers it).
try:
    import ctypes
    ctypes.CDLL("libcuda.so.1")
    config.available_features.add("cuda-driver")
except OSError:
    pass
