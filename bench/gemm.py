#!/usr/bin/env python3
"""GFLOP/s of the GEMM libraries on the training steps' shapes, side by side.

Libraries: OpenBLAS (cblas_sgemm), BLIS (its CBLAS layer, cblas_sgemm) and
oneDNN (dnnl_sgemm, its own row-major C API); whichever of the Debian
packages libopenblas-dev, libblis-dev and libdnnl-dev are installed. And
the column "epl-run": our runtime as built ($EPL_BUILD_DIR, else build/),
its GEMM entry point called as the lowered code calls it, on one rank of N
threads (the default build: oneDNN on one thread, cut into blocks over the
rank's threads when large; OpenBLAS for small GEMMs). Each gets one small
C++ timing program (g++ -O2, built in a temporary folder), run in
interleaved rounds; the median of the rounds is printed.

Shapes (M x K x N, row-major fp32, C += A * B as lib/Runtime/Gemm.cpp does):
the forward GEMMs of bench/cpu_train.py's MLP (batch 256, 784-1024-1024-10)
and of bench/transformer_train.py (512 tokens = batch 8 x seq 64, dim 128,
MLP 512, qkv 384; attention per head 64x32x64 and 64x64x32, one GEMM per
head and batch, 32 in all), each followed by its backward's two transposed
GEMMs: dX = dY * W^T (M x N x K, B transposed) and dW = X^T * dY
(K x M x N, A transposed).

Peak: an FMA-throughput loop (independent accumulators of __m512 FMAs, or
__m256 with AVX2 only, per /proc/cpuinfo) on every thread at once.

The machine should be idle: the CPU time spent in the second before the run
and the CPU time of other processes during it are read from /proc/stat (the
1-minute load average, which lags, is printed), and the numbers are marked
unreliable when either is above a quarter of a core (a tenth of the cores
during the run).

usage: bench/gemm.py [--threads N] [--rounds R] [--min-time S] [--libs L,...]
Prints each shape's GFLOP/s per library next to the peak, the geometric mean
per library and the best library.
"""

import argparse
import math
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

# (group, name, M, K, N, batch): the forward GEMMs; the backward's two are
# derived from each.
MLP_BATCH, MLP_SIZES = 256, [784, 1024, 1024, 10]
TOKENS, DIM, FF, QKV, SEQ, HEAD_DIM, HEADS_X_BATCH = 512, 128, 512, 384, 64, 32, 32
FORWARD = [("mlp", f"dense{i}", MLP_BATCH, k, n, 1)
           for i, (k, n) in enumerate(zip(MLP_SIZES, MLP_SIZES[1:]))] + [
    ("mlp/2", f"dense{i}", MLP_BATCH // 2, k, n, 1)
    for i, (k, n) in enumerate(zip(MLP_SIZES, MLP_SIZES[1:]))] + [
    ("transformer", "qkv", TOKENS, DIM, QKV, 1),
    ("transformer", "attn-out", TOKENS, DIM, DIM, 1),
    ("transformer", "mlp-up", TOKENS, DIM, FF, 1),
    ("transformer", "mlp-down", TOKENS, FF, DIM, 1),
    ("transformer", "scores", SEQ, HEAD_DIM, SEQ, HEADS_X_BATCH),
    ("transformer", "context", SEQ, SEQ, HEAD_DIM, HEADS_X_BATCH),
]


def shapes():
    """(label, transA, transB, M, N, K, batch) per GEMM timed."""
    out = []
    for group, name, m, k, n, batch in FORWARD:
        out.append((f"{group} {name} fwd", 0, 0, m, n, k, batch))
        out.append((f"{group} {name} dX", 0, 1, m, k, n, batch))
        out.append((f"{group} {name} dW", 1, 0, k, n, m, batch))
    return out


GEMM_PROGRAM = r"""
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>
#if defined(LIB_OPENBLAS) || defined(LIB_BLIS)
#include <cblas.h>
#endif
#if defined(LIB_BLIS)
extern "C" void bli_thread_set_num_threads(long long);
extern "C" char *bli_info_get_version_str(void);
extern "C" int bli_arch_query_id(void);
extern "C" char *bli_arch_string(int);
#endif
#if defined(LIB_DNNL)
#include <dnnl.h>
#endif
#if defined(LIB_EPL)
#include "epl/Runtime/Backend.h"
#include "epl/Runtime/Runtime.h"
#endif

static void setThreads(int n) {
#if defined(LIB_OPENBLAS)
  openblas_set_num_threads(n);
#elif defined(LIB_BLIS)
  bli_thread_set_num_threads(n);
#else
  (void)n; // oneDNN: OMP_NUM_THREADS; the runtime: its rank's threads
#endif
}

static void describe() {
#if defined(LIB_OPENBLAS)
  std::printf("info %s (core %s)\n", openblas_get_config(),
              openblas_get_corename());
#elif defined(LIB_BLIS)
  std::printf("info BLIS %s (arch %s)\n", bli_info_get_version_str(),
              bli_arch_string(bli_arch_query_id()));
#elif defined(LIB_EPL)
  std::printf("info epl_runtime (EPL_BLAS=%s), as epl-run calls it\n",
              epl::rt::gemmLibrary());
#else
  const dnnl_version_t *v = dnnl_version();
  std::printf("info oneDNN %d.%d.%d (cpu runtime %u, isa %d)\n", v->major,
              v->minor, v->patch, v->cpu_runtime, (int)dnnl_get_effective_cpu_isa());
#endif
}

#if defined(LIB_EPL)
/// A row-major view of rows x cols with leading dimension ld, transposed
/// (column-major) with `t`, as the lowering passes memrefs.
struct View {
  long desc[7];
  EplUnrankedMemRef ref;
  View(const float *p, long rows, long cols, long ld, int t) {
    long ptr = reinterpret_cast<long>(p);
    long d[7] = {ptr, ptr, 0, rows, cols, t ? 1 : ld, t ? ld : 1};
    for (int i = 0; i < 7; ++i) desc[i] = d[i];
    ref = {2, desc};
  }
};
#endif

static void sgemm(int ta, int tb, long m, long n, long k, const float *a,
                  long lda, const float *b, long ldb, float *c, long ldc) {
#if defined(LIB_EPL)
  View va(a, m, k, lda, ta), vb(b, k, n, ldb, tb), vc(c, m, n, ldc, 0);
  _mlir_ciface_epl_rt_matmul_f32(&va.ref, &vb.ref, &vc.ref);
#elif defined(LIB_DNNL)
  dnnl_sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, 1.0f, a, lda, b, ldb,
             1.0f, c, ldc);
#else
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans,
              tb ? CblasTrans : CblasNoTrans, m, n, k, 1.0f, a, lda, b, ldb,
              1.0f, c, ldc);
#endif
}

static int run(int threads, double minSeconds);

// stdin: threads min_seconds, then "ta tb m n k batch" per line.
// stdout: "gflops <value>" per line, in order.
int main() {
  int threads;
  double minSeconds;
  if (std::scanf("%d %lf", &threads, &minSeconds) != 2)
    return 2;
#if defined(LIB_EPL)
  // On one rank of `threads` threads, as `epl-run --threads-per-rank`.
  epl::rt::Options options;
  options.ranks = 1;
  options.threadsPerRank = threads;
  int status = 0;
  epl::rt::runRanks(options, [&](int) { status = run(threads, minSeconds); });
  return status;
#else
  return run(threads, minSeconds);
#endif
}

static int run(int threads, double minSeconds) {
  setThreads(threads);
  describe();
  int ta, tb;
  long m, n, k, batch;
  while (std::scanf("%d %d %ld %ld %ld %ld", &ta, &tb, &m, &n, &k, &batch) == 6) {
    std::vector<float> a(batch * m * k), b(batch * k * n), c(batch * m * n);
    unsigned seed = 1;
    auto next = [&] { seed = seed * 1664525u + 1013904223u; return (seed >> 9) * (1.0f / (1 << 23)) - 0.5f; };
    for (float &x : a) x = next();
    for (float &x : b) x = next();
    for (float &x : c) x = 0.0f;
    long lda = ta ? m : k, ldb = tb ? k : n;
    auto once = [&] {
      for (long i = 0; i < batch; ++i)
        sgemm(ta, tb, m, n, k, a.data() + i * m * k, lda, b.data() + i * k * n,
              ldb, c.data() + i * m * n, n);
    };
    using clock = std::chrono::steady_clock;
    for (int i = 0; i < 3; ++i) once();
    long reps = 1;
    double best = 1e30, spent = 0;
    for (;;) {
      auto start = clock::now();
      for (long r = 0; r < reps; ++r) once();
      double s = std::chrono::duration<double>(clock::now() - start).count();
      if (s < minSeconds / 4) { reps *= 2; continue; }
      best = std::min(best, s / reps);
      spent += s;
      if (spent >= minSeconds) break;
    }
    double sink = 0;
    for (float x : c) sink += x;
    std::printf("gflops %.3f %g\n", 2.0 * m * n * k * batch / best * 1e-9, sink);
    std::fflush(stdout);
  }
  return 0;
}
"""

PEAK_PROGRAM = r"""
#include <immintrin.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

constexpr int ACC = 16;  // independent chains: latency x FMA ports, and more
constexpr long ITERS = 20000000;

__attribute__((target("avx512f"))) static float fma512() {
  __m512 acc[ACC];
  for (int i = 0; i < ACC; ++i) acc[i] = _mm512_set1_ps(i * 0.01f);
  volatile float xv = 0.9999999f, yv = 1e-7f;
  __m512 x = _mm512_set1_ps(xv), y = _mm512_set1_ps(yv);
  for (long it = 0; it < ITERS; ++it)
#pragma GCC unroll 16
    for (int i = 0; i < ACC; ++i) acc[i] = _mm512_fmadd_ps(acc[i], x, y);
  __m512 s = acc[0];
  for (int i = 1; i < ACC; ++i) s = _mm512_add_ps(s, acc[i]);
  return _mm512_reduce_add_ps(s);
}

__attribute__((target("avx2,fma"))) static float fma256() {
  __m256 acc[ACC];
  for (int i = 0; i < ACC; ++i) acc[i] = _mm256_set1_ps(i * 0.01f);
  volatile float xv = 0.9999999f, yv = 1e-7f;
  __m256 x = _mm256_set1_ps(xv), y = _mm256_set1_ps(yv);
  for (long it = 0; it < ITERS; ++it)
#pragma GCC unroll 16
    for (int i = 0; i < ACC; ++i) acc[i] = _mm256_fmadd_ps(acc[i], x, y);
  float out[8];
  __m256 s = acc[0];
  for (int i = 1; i < ACC; ++i) s = _mm256_add_ps(s, acc[i]);
  _mm256_storeu_ps(out, s);
  float t = 0;
  for (float v : out) t += v;
  return t;
}

// argv: threads avx512|avx2 repeats. stdout: "peak <GFLOP/s>" (the best repeat).
int main(int argc, char **argv) {
  if (argc != 4) return 2;
  int threads = std::atoi(argv[1]), repeats = std::atoi(argv[3]);
  bool wide = std::strcmp(argv[2], "avx512") == 0;
  double lanes = wide ? 16 : 8, best = 0;
  for (int r = 0; r < repeats; ++r) {
    std::vector<float> sinks(threads);
    std::vector<std::thread> pool;
    auto start = std::chrono::steady_clock::now();
    for (int t = 0; t < threads; ++t)
      pool.emplace_back([&, t] { sinks[t] = wide ? fma512() : fma256(); });
    for (auto &t : pool) t.join();
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    double flops = 2.0 * lanes * ACC * ITERS * threads;
    best = std::max(best, flops / s * 1e-9);
    double sink = 0;
    for (float v : sinks) sink += v;
    std::fprintf(stderr, "sink %g\n", sink);
  }
  std::printf("peak %.3f\n", best);
  return 0;
}
"""


def multiarch():
    try:
        return subprocess.run(["gcc", "-print-multiarch"], capture_output=True,
                              text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "x86_64-linux-gnu"


def first_dir(candidates, header):
    for d in candidates:
        if (pathlib.Path(d) / header).is_file():
            return d
    return None


def library_flags(lib):
    """g++ flags to build the program against lib, or None if not installed."""
    inc = pathlib.Path("/usr/include") / multiarch()
    if lib == "openblas":
        # Debian's cblas.h alternative may point at another CBLAS: name the
        # OpenBLAS one explicitly.
        d = first_dir(sorted(inc.glob("openblas*")) + [inc, "/usr/include/openblas"],
                      "openblas_config.h")
        return None if d is None else ["-DLIB_OPENBLAS", f"-I{d}", "-lopenblas"]
    if lib == "blis":
        d = first_dir(sorted(inc.glob("blis*")) + ["/usr/include/blis"], "cblas.h")
        return None if d is None else ["-DLIB_BLIS", f"-I{d}", "-lblis"]
    if lib == "onednn":
        d = first_dir(["/usr/include", "/usr/local/include"], "dnnl.h")
        return None if d is None else ["-DLIB_DNNL", f"-I{d}", "-ldnnl"]
    if lib == "epl":
        # The runtime as built (build/lib/libepl_runtime.so): what epl-run
        # does with the GEMM, library choice and threads included.
        so = BUILD / "lib" / "libepl_runtime.so"
        if not so.is_file():
            return None
        return ["-DLIB_EPL", f"-I{ROOT / 'include'}", str(so),
                f"-Wl,-rpath,{so.parent}"]
    raise ValueError(lib)


ROOT = pathlib.Path(__file__).resolve().parents[1]
BUILD = pathlib.Path(os.environ.get("EPL_BUILD_DIR", ROOT / "build"))
NAMES = {"openblas": "OpenBLAS", "blis": "BLIS", "onednn": "oneDNN", "epl": "epl-run"}


def build(tmp, name, source, flags):
    src = tmp / f"{name}.cpp"
    src.write_text(source)
    exe = tmp / name
    cmd = ["g++", "-O2", "-std=c++17", "-o", str(exe), str(src)] + flags + ["-pthread"]
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        print(f"warning: {name} does not build: {result.stderr.strip()[:400]}")
        return None
    return exe


def cpu_busy_seconds():
    """Non-idle CPU seconds of the whole machine since boot (/proc/stat)."""
    fields = [int(v) for v in open("/proc/stat").readline().split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def own_children_seconds():
    t = os.times()
    return t.children_user + t.children_system


def cpu_flags():
    for line in open("/proc/cpuinfo"):
        if line.startswith("flags"):
            return set(line.split(":", 1)[1].split())
    return set()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--min-time", type=float, default=0.1,
                        help="seconds of timing per shape and round")
    parser.add_argument("--libs", default="openblas,blis,onednn,epl")
    args = parser.parse_args()
    unknown = set(args.libs.split(",")) - set(NAMES)
    if unknown:
        parser.error(f"unknown --libs {','.join(sorted(unknown))}; "
                     f"known: {','.join(NAMES)}")
    cores = os.cpu_count()
    threads = args.threads

    # Idle check: the CPU time the machine spent in a second before the run
    # and, during it, the CPU time not ours (/proc/stat); the load average
    # lags a minute behind and is only printed.
    load1 = float(open("/proc/loadavg").read().split()[0])
    busy_before = cpu_busy_seconds()
    time.sleep(1.0)
    busy_now = cpu_busy_seconds() - busy_before
    unreliable = []
    if busy_now > 0.25:
        unreliable.append(f"{busy_now:.2f} of {cores} cores busy before the run, "
                          f"1-minute load average {load1:.2f}")
        print(f"WARNING: machine not idle ({unreliable[-1]}): "
              "the numbers below are unreliable")

    env = dict(os.environ, OPENBLAS_NUM_THREADS=str(threads),
               BLIS_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads))
    gemms = shapes()
    stdin = f"{threads} {args.min_time}\n" + "".join(
        f"{ta} {tb} {m} {n} {k} {b}\n" for _, ta, tb, m, n, k, b in gemms)

    with tempfile.TemporaryDirectory() as d:
        tmp = pathlib.Path(d)
        programs = {}
        for lib in args.libs.split(","):
            flags = library_flags(lib)
            if flags is None:
                print(f"warning: {NAMES.get(lib, lib)} is not installed; skipped")
                continue
            exe = build(tmp, lib, GEMM_PROGRAM, flags)
            if exe:
                programs[lib] = exe
        peak_exe = build(tmp, "peak", PEAK_PROGRAM, [])
        if not programs:
            sys.exit("no GEMM library to measure")

        flags = cpu_flags()
        isa = "avx512" if "avx512f" in flags else "avx2" if {"avx2", "fma"} <= flags else None

        start_busy, start_own, start_wall = (cpu_busy_seconds(),
                                             own_children_seconds(), time.time())
        results = {lib: [[] for _ in gemms] for lib in programs}
        info, peaks = {}, []
        libs = list(programs)
        for r in range(args.rounds):
            order = libs[r % len(libs):] + libs[:r % len(libs)]
            for lib in order:
                out = subprocess.run([str(programs[lib])], input=stdin, env=env,
                                     capture_output=True, text=True, check=True).stdout
                values = []
                for line in out.splitlines():
                    if line.startswith("info "):
                        info[lib] = line[5:]
                    elif line.startswith("gflops "):
                        values.append(float(line.split()[1]))
                for i, v in enumerate(values):
                    results[lib][i].append(v)
            if peak_exe and isa:
                out = subprocess.run([str(peak_exe), str(threads), isa, "1"],
                                     capture_output=True, text=True, check=True).stdout
                peaks.append(float(out.split()[1]))
        wall = time.time() - start_wall
        others = (cpu_busy_seconds() - start_busy) - (own_children_seconds() - start_own)
        if others > 0.1 * wall * cores:
            unreliable.append(f"other processes used {others / wall:.2f} cores during the run")
            print(f"WARNING: machine not idle ({unreliable[-1]}): the numbers below are unreliable")

    peak = max(peaks) if peaks else float("nan")
    mark = " (UNRELIABLE: machine busy)" if unreliable else ""
    model = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo")
                  if line.startswith("model name")), "?")
    print(f"GEMM fp32 GFLOP/s, {threads} thread(s), median of {args.rounds} rounds; "
          f"{model}, {cores} cores, load average {load1:.2f} before{mark}")
    for lib in libs:
        print(f"  {NAMES[lib]}: {info.get(lib, '?')}")
    print(f"peak ({isa or 'no FMA'} FMA x {threads} thread(s)): {peak:.1f} GFLOP/s")
    width = max(len(g[0]) for g in gemms)
    header = f"{'shape':<{width}}  {'op':<12} {'MxKxN':>16}" + "".join(
        f" {NAMES[lib]:>9}" for lib in libs) + "   % peak (best)"
    print(header)
    medians = {lib: [statistics.median(v) for v in results[lib]] for lib in libs}
    for i, (label, ta, tb, m, n, k, b) in enumerate(gemms):
        op = ("A^T*B" if ta else "A*B^T" if tb else "A*B") + (f" x{b}" if b > 1 else "")
        row = [medians[lib][i] for lib in libs]
        print(f"{label:<{width}}  {op:<12} {f'{m}x{k}x{n}':>16}"
              + "".join(f" {v:9.1f}" for v in row)
              + f"   {100 * max(row) / peak:5.1f}%")
    geo = {lib: math.exp(statistics.fmean(math.log(v) for v in medians[lib]))
           for lib in libs}
    print(f"{'geometric mean':<{width}}  {'':<12} {'':>16}"
          + "".join(f" {geo[lib]:9.1f}" for lib in libs))
    best = max(libs, key=geo.get)
    print(f"best: {NAMES[best]} (geometric mean {geo[best]:.1f} GFLOP/s, "
          f"{100 * geo[best] / peak:.0f}% of peak){mark}")


if __name__ == "__main__":
    main()
