#!/usr/bin/env python3
"""Pipeline schedules: measured bubble fractions next to the simulator's,
and peak memory per stage under GPipe and 1F1B.

Model: S stages of equal work, each a learned shift of its input followed
by a Dense(k x k) layer with tanh (k = 1024 by default), on a batch of 256
in m = 8 micro-batches, and a cheap loss (the mean of the last
activation). The shift makes every stage's input gradient (B) the same
work: a plain first layer needs none, which would make the first stage's B
cheaper. Momentum SGD. Stage devices p = ranks = cores (2 on the CI
machine), one BLAS thread per rank (OPENBLAS_NUM_THREADS=1).

Schedules (pipeline.strategy): PreferForward (GPipe), PreferBackward (1F1B),
ZeroBubbleH1 (S = p), and Interleaved1F1B with pipeline.num_virtual_stages
= 2 on twice the scopes (S = 2p: each stage device holds two layers).

For each one, epl-run trains the model on p threads with --report and
--trace, then:
* measured: the report's bubble (per rank, per step 1 - busy / span, span
  from the step's first action to its last over all ranks), here over the
  steps after the first (warm-up) and the mean over the ranks. The report
  averages over every step, the first included, so the script recomputes
  the per-step figure from the trace with the report's definition (and
  checks that over all steps it gives the report's numbers);
* replayed: the bubble the run would have had if each action took the time
  it took and nothing else (sends, receives, the update, the runtime's own
  work) took any: the ranks' orders from the trace replayed with their
  messages. The difference to measured is the time outside actions;
* simulated: the same stage programs (epl-opt --epl-parallelize
  --epl-simulate-pipeline) with the costs calibrated from that run's trace:
  the mean duration of the F, B and W slices (all stages, steps after the
  first) and of the sends; the mean bubble over the stage devices;
* the textbook closed form (p - 1) / (m + p - 1) of GPipe and 1F1B, which
  counts the whole backward on the critical path. Our backward is split
  into B and W and the gradient leaves after B, so the simulator gives
  both an idle time of (p - 1)(F + B) per device (test/PipelineSchedule/
  ScheduleTest.cpp checks it for F = B = W), a bubble of
  (p - 1)(F + B) / (m (F + B + W) + (p - 1)(F + B)): below the textbook
  value.

Then the peak memory of each stage device (the report's per_rank
peak_bytes) under GPipe and 1F1B, next to the simulator's peak number of
micro-batches in flight (the activations a stage holds): 1F1B's is below
GPipe's by the activations of the micro-batches it does not hold (the
parameters, gradients and optimizer state are the same under both).

Each schedule runs --rounds times (the schedules in turn, so that a busy
spell of a shared machine hits them alike); the table shows the median
round of each (by measured bubble), its simulated bubble and its costs.

usage: bench/pipeline.py [--size K] [--batch N] [--micro-batches M]
                         [--ranks P] [--steps T] [--rounds R]
Prints ratios only (bubble fractions, cost ratios, memory ratios); no
absolute times. Replayed bubbles exceed simulated ones when the actions'
times vary: the simulator takes every action at its mean cost, while in a
run an action that is slower than usual on one rank makes the others wait
for it.
"""

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
BUILD = pathlib.Path(os.environ.get("EPL_BUILD_DIR", ROOT / "build"))
if not BUILD.is_absolute():
    BUILD = ROOT / BUILD
sys.path.insert(0, str(ROOT / "python"))
import epl  # noqa: E402

#: (label, pipeline.strategy, stages per stage device)
SCHEDULES = [
    ("GPipe", "PreferForward", 1),
    ("1F1B", "PreferBackward", 1),
    ("ZB-H1", "ZeroBubbleH1", 1),
    ("interleaved 1F1B", "Interleaved1F1B", 2),
]
PHASES = {"forward": "F", "backward_input": "B", "backward_weight": "W"}


def model(size, batch, micro_batches, strategy, stages, chunks):
    """The L0 module: `stages` named scopes, each a shift and a
    Dense(size x size) + tanh."""
    config = {"pipeline.num_micro_batch": micro_batches, "pipeline.strategy": strategy,
              "optimizer.type": "momentum", "optimizer.lr": 0.01}
    if chunks > 1:
        config["pipeline.num_virtual_stages"] = chunks
    epl.init(epl.Config(config))
    h = epl.input("x", (batch, size))
    for s in range(stages):
        with epl.replicate(device_count=1, name=f"stage_{s}"):
            h = h + epl.param(f"shift{s}", (size,), init="zeros")
            h = epl.layers.Dense(size, activation="tanh", name=f"fc{s}")(h)
            if s == stages - 1:
                loss = epl.nn.mean(h)
    return epl.to_mlir(loss)


def per_step(trace, ranks, steps):
    """Per step and rank, from the trace: the actions (phase, duration in
    ms), the busy time and the step's span (first action's start to last
    action's end over all ranks), as epl-run's report computes them."""
    events = [[] for _ in range(ranks)]
    for e in trace["traceEvents"]:
        if e.get("ph") == "X":
            events[e["tid"]].append(e)
    # Each rank runs the same actions, sends and receives every step, in order.
    result = []
    for k in range(steps):
        mine = [rank[k * len(rank) // steps:(k + 1) * len(rank) // steps] for rank in events]
        actions = [[e for e in rank if "phase" in e["args"]] for rank in mine]
        start = min(a["ts"] for rank in actions for a in rank)
        end = max(a["ts"] + a["dur"] for rank in actions for a in rank)
        result.append({"span": (end - start) / 1000,
                       "busy": [sum(a["dur"] for a in rank) / 1000 for rank in actions],
                       "actions": [(a["args"]["phase"], a["dur"] / 1000)
                                   for rank in actions for a in rank],
                       "sends": [e["dur"] / 1000 for rank in mine for e in rank
                                 if e["name"] == "send"],
                       "events": mine})
    return result


def replay(step):
    """The step's bubble per rank when each action takes the time it took
    in the run and nothing else takes time: the ranks' orders with their
    sends and receives (FIFO per sender, receiver and tag), as the
    simulator runs them, but with the measured durations."""
    ranks = len(step["events"])
    time, position = [0.0] * ranks, [0] * ranks
    first, last, busy = [None] * ranks, [0.0] * ranks, [0.0] * ranks
    messages = {}
    progress = True
    while progress:
        progress = False
        for r in range(ranks):
            events = step["events"][r]
            while position[r] < len(events):
                e = events[position[r]]
                if "phase" in e["args"]:
                    first[r] = time[r] if first[r] is None else first[r]
                    time[r] += e["dur"]
                    busy[r] += e["dur"]
                    last[r] = time[r]
                elif e["name"] == "send":
                    messages.setdefault((r, e["args"]["to"], e["args"]["tag"]),
                                        []).append(time[r])
                elif e["name"] == "recv wait":
                    queue = messages.get((e["args"]["from"], r, e["args"]["tag"]))
                    if not queue:
                        break
                    time[r] = max(time[r], queue.pop(0))
                position[r] += 1
                progress = True
    assert position == [len(e) for e in step["events"]], "the replay is stuck"
    span = max(last) - min(f for f in first if f is not None)
    return [1 - b / span for b in busy]


def bubbles(step):
    return [1 - busy / step["span"] for busy in step["busy"]]


def mean(values):
    values = list(values)
    return sum(values) / len(values)


def simulate(path, devices, costs):
    """epl-simulate-pipeline on the stage programs of `path`: the mean
    bubble over the stage devices and each device's peak micro-batches in
    flight."""
    out = subprocess.run(
        [str(BUILD / "bin" / "epl-opt"), str(path), f"--epl-parallelize=devices={devices}",
         "--epl-simulate-pipeline=" + " ".join(
             f"{k}={v!r}" for k, v in (("forward", costs["F"]), ("backward-input", costs["B"]),
                                       ("backward-weight", costs["W"]),
                                       ("send", costs["send"]))),
         "-o", os.devnull], check=True, capture_output=True, text=True).stdout
    lines = out.splitlines()
    makespan = float(next(l for l in lines if l.startswith("makespan")).split()[1])
    rows = [l.split() for l in lines if l.split() and l.split()[0].isdigit()]
    return mean(float(r[2]) / makespan for r in rows), [int(r[4]) for r in rows]


def run_schedule(tmp, args, label, strategy, chunks):
    stages = args.ranks * chunks
    path = tmp / f"{strategy}.mlir"
    path.write_text(model(args.size, args.batch, args.micro_batches, strategy, stages, chunks))
    report, trace = tmp / f"{strategy}.report.json", tmp / f"{strategy}.trace.json"
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    subprocess.run([str(BUILD / "bin" / "epl-run"), str(path), "--ranks", str(args.ranks),
                    "--steps", str(args.steps), "--report", str(report), "--trace", str(trace)],
                   env=env, check=True, stdout=subprocess.DEVNULL)
    report = json.loads(report.read_text())
    steps = per_step(json.loads(trace.read_text()), args.ranks, args.steps)
    # The trace gives the report's figures over all steps.
    for rank, figures in enumerate(report["per_rank"]):
        ours = mean(bubbles(s)[rank] for s in steps)
        assert abs(ours - figures["bubble"]) < 1e-3, (label, rank, ours, figures["bubble"])
    later = steps[1:]
    measured = mean(b for s in later for b in bubbles(s))
    replayed = mean(b for s in later for b in replay(s))
    costs = {PHASES[p]: mean(d for s in later for phase, d in s["actions"] if phase == p)
             for p in PHASES}
    costs["send"] = mean(d for s in later for d in s["sends"])
    simulated, in_flight = simulate(path, args.ranks, costs)
    return {"label": label, "strategy": strategy, "chunks": chunks, "measured": measured,
            "replayed": replayed, "simulated": simulated, "costs": costs, "in_flight": in_flight,
            "peak": [r["peak_bytes"] for r in report["per_rank"]]}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1024, help="k: each stage's Dense(k x k)")
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--micro-batches", type=int, default=8)
    parser.add_argument("--ranks", type=int, default=os.cpu_count(),
                        help="stage devices p (default: the cores)")
    parser.add_argument("--steps", type=int, default=11)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    p, m = args.ranks, args.micro_batches

    rounds = [[] for _ in SCHEDULES]
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.rounds):
            for i, schedule in enumerate(SCHEDULES):
                rounds[i].append(run_schedule(pathlib.Path(tmp), args, *schedule))
    results = []
    for runs in rounds:
        median = statistics.median_low(r["measured"] for r in runs)
        results.append(next(r for r in runs if r["measured"] == median))

    print(f"pipeline: p = {p} stage devices (threads, one BLAS thread each), m = {m} "
          f"micro-batches, stages of shift + Dense({args.size} x {args.size}) + tanh, batch "
          f"{args.batch}; {args.steps - 1} steps after the first, median of {args.rounds} "
          "round(s)")
    textbook = (p - 1) / (m + p - 1)
    print(f"{'schedule':<18} {'stages':>6} {'measured':>9} {'replayed':>9} {'simulated':>10} "
          f"{'(p-1)/(m+p-1)':>14}   calibrated costs B/F, W/F")
    for r in results:
        formula = f"{textbook:14.3f}" if r["strategy"] in ("PreferForward",
                                                           "PreferBackward") else f"{'-':>14}"
        c = r["costs"]
        print(f"{r['label']:<18} {p * r['chunks']:>6} {r['measured']:9.3f} "
              f"{r['replayed']:9.3f} {r['simulated']:10.3f} {formula}   "
              f"{c['B'] / c['F']:.2f}, {c['W'] / c['F']:.2f}")

    gpipe, one_f_one_b = results[0], results[1]
    print(f"\npeak memory per stage device (report per_rank peak_bytes), m = {m}:")
    print(f"{'stage':>5} {'GPipe MiB':>10} {'1F1B MiB':>10} {'1F1B/GPipe':>11}   "
          "micro-batches in flight (simulator) GPipe, 1F1B")
    for s in range(p):
        g, o = gpipe["peak"][s], one_f_one_b["peak"][s]
        print(f"{s:>5} {g / 2**20:10.2f} {o / 2**20:10.2f} {o / g:11.3f}   "
              f"{gpipe['in_flight'][s]}, {one_f_one_b['in_flight'][s]}")


if __name__ == "__main__":
    main()
