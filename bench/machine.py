"""What the training benchmarks share: the cores a run uses, whether the
machine is idle enough to time anything, and the Python that has JAX.

Cores. `cores(n)` is the first n CPUs this process may run on; every
timed process (epl-run, PyTorch, XLA) is started with `pin(n)` as its
`preexec_fn`, so all three run on the same n cores besides using n
threads (OpenBLAS's, torch's intra-op pool, XLA's).

Idle check. `check_idle(n)` looks at the cores the run will use,
cores(n), before timing, and `Idle.rounds(R)` watches each timed round:
  * before: /proc/stat's lines of those cores sampled over half a second
    while this process sleeps; what they spent neither idle nor waiting
    for I/O (steal included: a VM's neighbours) is someone else's. Busy
    above 0.2 cores (or 10% of them, if more).
  * before: a calibrated spin, one process pinned to each of those cores
    spinning a fixed amount of work (about 0.1 s) twice; each reports its
    CPU time over its wall time. Busy when any got less than 90% of its
    core, or its two spins differ by more than 15%.
  * during each round: the cores' busy time from /proc/stat over the
    round, less the CPU time of this process and the children it waited
    for (getrusage; every timed process is pinned to those cores). Busy
    above 0.1 cores on average.
A busy check prints a line starting `warning: machine busy`. A busy round
(all frameworks' runs of it) is left out and another one run, up to
twice the rounds asked for; when every round was busy the benchmark
still prints its numbers but flags each ratio `UNRELIABLE (machine
busy)`: not ones to quote. `--wait-idle SECONDS` (each benchmark using
this) re-checks every 5 s for up to that long before timing anyway.
Load on other cores is not counted (a 1-thread benchmark may run next to
a 1-thread job on a 2-core machine; they still share caches and memory
bandwidth).

JAX. `jax_python()` finds an interpreter that imports jax: $EPL_JAX_PYTHON
if set (empty or "none" turns XLA off), else this one, `python3` and
`python` on PATH, the first whose `import jax` works (resolved to its real
executable, past pyenv's shims). `run_jax(code, args, n)` runs a JAX
benchmark in it on `cores(n)` with JAX_PLATFORMS=cpu: XLA's CPU client
sizes its intra-op thread pool by the CPUs it may run on (the affinity
mask), so pinning to n cores gives it n threads; with n = 1,
`--xla_cpu_multi_thread_eigen=false` also keeps Eigen's matmuls and
convolutions on the calling thread. (XLA has no flag for the pool's size:
`--intra_op_parallelism_threads` is TensorFlow's and XLA refuses it.)
"""

import functools
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time

BUSY_CORES = 0.2        # others' load (in cores) above which we call it busy
ROUND_BUSY_CORES = 0.1  # the same, averaged over a timed round
MIN_SHARE = 0.9         # the least CPU share a pinned spin may get
MAX_SPREAD = 0.15       # the most two spins of the same work may differ


def cores(n):
    """The first n CPUs this process may run on (all of them if fewer)."""
    mine = sorted(os.sched_getaffinity(0))
    return mine[:max(1, min(n, len(mine)))]


def pin(n):
    """A preexec_fn pinning a child to cores(n)."""
    cpus = set(cores(n))
    return lambda: os.sched_setaffinity(0, cpus)


def _cpu_times(cpus):
    """(idle, total) clock ticks of `cpus` from /proc/stat."""
    idle = total = 0
    with open("/proc/stat") as f:
        for line in f:
            name, *fields = line.split()
            if name[:3] != "cpu" or not name[3:].isdigit() or int(name[3:]) not in cpus:
                continue
            # user nice system idle iowait irq softirq steal (guest time
            # is counted in user already)
            fields = [int(v) for v in fields[:8]]
            idle += fields[3] + fields[4]
            total += sum(fields)
    return idle, total


def _busy_seconds(cpus):
    """CPU seconds `cpus` spent neither idle nor in I/O wait."""
    idle, total = _cpu_times(cpus)
    return (total - idle) / os.sysconf("SC_CLK_TCK")


def _own_seconds():
    """CPU seconds of this process and of the children it has waited for."""
    return sum(r.ru_utime + r.ru_stime for r in (resource.getrusage(resource.RUSAGE_SELF),
                                                 resource.getrusage(resource.RUSAGE_CHILDREN)))


def others_load(cpus, seconds=0.5):
    """Cores' worth of CPU time others used on `cpus` while this process
    slept."""
    idle0, total0 = _cpu_times(cpus)
    time.sleep(seconds)
    idle1, total1 = _cpu_times(cpus)
    total = total1 - total0
    return len(cpus) * (total - (idle1 - idle0)) / total if total else 0.0


def _too_busy(load, cpus):
    return load > max(BUSY_CORES, 0.1 * len(cpus))


SPIN = r"""
import os, sys, time
os.sched_setaffinity(0, {int(sys.argv[1])})
n = int(sys.argv[2])
def spin(n):
    x = 0
    for i in range(n):
        x += i * i
    return x
out = []
for _ in range(2):
    w, c = time.perf_counter(), time.process_time()
    spin(n)
    out.append((time.perf_counter() - w, time.process_time() - c))
print(" ".join("%r %r" % t for t in out))
"""


@functools.lru_cache(maxsize=None)
def _spin_iterations(target=0.1):
    """Iterations of SPIN's loop that take about `target` seconds here."""
    n, x = 200000, 0
    start = time.process_time()
    for i in range(n):
        x += i * i
    took = max(time.process_time() - start, 1e-4)
    return max(n, int(n * target / took))


def spin_shares(n):
    """[(cpu, share of its core, spread of the two spins)] for cores(n),
    all spinning at once."""
    iters = _spin_iterations()
    procs = [(cpu, subprocess.Popen([sys.executable, "-c", SPIN, str(cpu), str(iters)],
                                    stdout=subprocess.PIPE, text=True))
             for cpu in cores(n)]
    result = []
    for cpu, p in procs:
        w1, c1, w2, c2 = map(float, p.communicate()[0].split())
        result.append((cpu, min(c1 / w1, c2 / w2), abs(w1 - w2) / min(w1, w2)))
    return result


class Idle:
    """The idle checks of one benchmark run. `busy` when the results are
    not to be quoted: every round ran while others used the cores."""

    def __init__(self, threads, wait=0):
        self.threads, self.cpus = threads, set(cores(threads))
        self.busy = False
        self.clean = []
        deadline = time.monotonic() + wait
        reasons, detail = self.measure()
        while reasons and time.monotonic() < deadline:
            time.sleep(min(5.0, max(0.0, deadline - time.monotonic())))
            reasons, detail = self.measure()
        if reasons:
            print(f"warning: machine busy before timing: {'; '.join(reasons)} ({detail}); "
                  "rounds it stays busy in are repeated", flush=True)
        else:
            print(f"machine: idle before timing ({detail})", flush=True)

    def measure(self):
        load = others_load(self.cpus)
        spins = spin_shares(self.threads)
        loadavg = open("/proc/loadavg").read().split()[0]
        reasons = []
        if _too_busy(load, self.cpus):
            reasons.append(f"others used {load:.2f} of its {len(self.cpus)} core(s)")
        for cpu, share, spread in spins:
            if share < MIN_SHARE:
                reasons.append(f"a spin on cpu {cpu} got {share * 100:.1f}% of it")
            elif spread > MAX_SPREAD:
                reasons.append(f"two spins on cpu {cpu} differed by {spread:.0%}")
        detail = (f"others' load {load:.2f} cores, spins on cpus "
                  f"{','.join(str(c) for c, _, _ in spins)} got at least "
                  f"{min(s for _, s, _ in spins):.0%} of a core, load average {loadavg}")
        return reasons, detail

    def rounds(self, n):
        """Yields round numbers until n rounds ran clean, at most 2n: a
        round is clean when others used at most ROUND_BUSY_CORES of the
        cores on average during it (their busy time in /proc/stat less
        the CPU time of this process and its children, all pinned there)."""
        self.clean = []
        for i in range(2 * n):
            if sum(self.clean) >= n:
                return
            busy0, own0, wall0 = _busy_seconds(self.cpus), _own_seconds(), time.perf_counter()
            yield i
            wall = time.perf_counter() - wall0
            load = max(0.0, (_busy_seconds(self.cpus) - busy0) - (_own_seconds() - own0)) / wall
            self.clean.append(load <= ROUND_BUSY_CORES)
            if not self.clean[-1]:
                print(f"warning: machine busy during round {i + 1}: others used {load:.2f} "
                      f"of its {len(self.cpus)} core(s) over {wall:.0f} s"
                      f"{'; another round follows' if i + 1 < 2 * n else ''}", flush=True)

    def keep(self, results):
        """Of `results` (one per round rounds() yielded), those of the clean
        rounds; all of them, and `busy`, when none was clean."""
        clean = [r for r, ok in zip(results, self.clean) if ok]
        if not clean:
            self.busy = True
            print("warning: machine busy in every round; ratios below are unreliable",
                  flush=True)
            return results
        if len(clean) < len(results):
            print(f"machine: {len(results) - len(clean)} busy round(s) left out, "
                  f"{len(clean)} kept", flush=True)
        else:
            print(f"machine: idle during all {len(clean)} round(s)", flush=True)
        return clean

    def flag(self):
        return "  UNRELIABLE (machine busy)" if self.busy else ""


def pooled(rounds, key):
    """The step times `key` of every round, in one list."""
    return [t for r in rounds for t in r[key]]


def median(rounds, key):
    """The median of the step times `key` of every round."""
    return statistics.median(pooled(rounds, key))


def check_idle(threads, wait=0):
    """Checks before timing; with `wait` > 0, retries for up to that many
    seconds while the machine is busy."""
    return Idle(threads, wait)


def add_arguments(parser):
    parser.add_argument("--wait-idle", type=float, default=0, metavar="SECONDS",
                        help="while the machine is busy, wait up to this long before timing")


@functools.lru_cache(maxsize=None)
def jax_python():
    """(executable, jax version) of a Python with jax, or (None, why not)."""
    override = os.environ.get("EPL_JAX_PYTHON")
    if override is not None:
        if override.strip().lower() in ("", "none", "0", "off"):
            return None, "EPL_JAX_PYTHON turns XLA off"
        candidates = [override]
    else:
        candidates = [sys.executable, shutil.which("python3"), shutil.which("python")]
    tried = []
    for c in dict.fromkeys(c for c in candidates if c):
        tried.append(c)
        try:
            out = subprocess.run(
                [c, "-c", "import sys, jax, jaxlib; print(sys.executable); print(jax.__version__)"],
                capture_output=True, text=True, timeout=120,
                env=dict(os.environ, JAX_PLATFORMS="cpu"))
        except (OSError, subprocess.TimeoutExpired):
            continue
        if out.returncode == 0:
            exe, version = out.stdout.split()[-2:]
            return exe, version
    return None, (f"no Python with jax ({', '.join(tried)} cannot import it); "
                  "`pip install jax` or set EPL_JAX_PYTHON")


# The timing loop of every benchmark's JAX step, appended to its code: the
# step (params, state, x, y) -> (params, state, loss) compiled ahead with
# both donated, then timed step by step; prints the times after the first,
# then the compile time (ms).
JAX_TIMED_STEPS = r"""
def timed_steps(step, params, state, x, y, steps):
    import time
    import jax
    start = time.perf_counter()
    compiled = jax.jit(step, donate_argnums=(0, 1)).lower(params, state, x, y).compile()
    compile_ms = (time.perf_counter() - start) * 1000
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        params, state, loss = compiled(params, state, x, y)
        jax.block_until_ready((params, state, loss))
        times.append((time.perf_counter() - start) * 1000)
    print(" ".join(map(str, times[1:])), compile_ms)
"""


# The MLP of cpu_forward.py and cpu_train.py in JAX: argv is threads, steps,
# batch and the comma-separated layer sizes; defines params, x, y and the
# mean cross-entropy loss_fn(params, x, y) of relu layers.
JAX_MLP = r"""
import sys, time
import jax, jax.numpy as jnp
threads, steps, batch = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
sizes = [int(s) for s in sys.argv[4].split(",")]
keys = jax.random.split(jax.random.PRNGKey(0), len(sizes) + 1)
params = [(jax.random.normal(keys[i], (sizes[i], sizes[i + 1]), jnp.float32) / sizes[i] ** 0.5,
           jnp.zeros((sizes[i + 1],), jnp.float32)) for i in range(len(sizes) - 1)]
x = jax.random.normal(keys[-2], (batch, sizes[0]), jnp.float32)
y = jax.nn.one_hot(jax.random.randint(keys[-1], (batch,), 0, sizes[-1]), sizes[-1])
def loss_fn(params, x, y):
    h = x
    for i, (w, b) in enumerate(params):
        h = h @ w + b
        if i < len(params) - 1:
            h = jnp.maximum(h, 0.0)
    return -jnp.mean(jnp.sum(y * jax.nn.log_softmax(h, axis=-1), axis=-1))
"""

# PyTorch's momentum SGD step on loss_fn, given lr and momentum, timed.
JAX_MOMENTUM_STEPS = JAX_TIMED_STEPS + r"""
bufs = jax.tree.map(jnp.zeros_like, params)
def step(params, bufs, x, y):
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
    bufs = jax.tree.map(lambda b, g: b * momentum + g, bufs, grads)
    params = jax.tree.map(lambda p, b: p - lr * b, params, bufs)
    return params, bufs, loss
timed_steps(step, params, bufs, x, y, steps)
"""


def xla_times(out):
    """A timed JAX run's (step times, compile ms), or (None, None) without
    JAX (run_jax's None)."""
    if out is None:
        return None, None
    return [float(v) for v in out[:-1]], float(out[-1])


def run_jax(code, args, threads):
    """Runs a JAX benchmark (a code string) in jax_python() on cores(threads);
    returns its stdout split, or None when there is no JAX."""
    exe, _ = jax_python()
    if exe is None:
        return None
    flags = os.environ.get("XLA_FLAGS", "")
    if threads == 1:
        flags += " --xla_cpu_multi_thread_eigen=false"
    env = dict(os.environ, JAX_PLATFORMS="cpu", XLA_FLAGS=flags.strip(),
               TF_CPP_MIN_LOG_LEVEL="2")
    env.pop("PYTHONPATH", None)  # the project's python/ is not for this interpreter
    run = subprocess.run([exe, "-c", code, *map(str, args)], capture_output=True, text=True,
                         env=env, preexec_fn=pin(threads))
    if run.returncode:
        sys.stderr.write(run.stderr)
        raise subprocess.CalledProcessError(run.returncode, [exe, "-c", "<JAX benchmark>"])
    return run.stdout.split()


def xla_note():
    """The line saying why XLA did not run (None when it can)."""
    exe, version = jax_python()
    if exe is None:
        return f"  XLA      skipped: {version}"
    return None
