#!/usr/bin/env python3
"""A deterministic mutation fuzzer over the test corpus (issue 16).

Each run takes one `// -----` chunk of a corpus .mlir file, applies one
mutation chosen by a seeded generator (an integer made 2^32, 0, -1 or big;
a line dropped or repeated; a list entry repeated; a mesh axis renamed;
an attribute entry dropped), and runs epl-opt on it: parse and verify
alone, then each public pipeline. Every run must end in exit code 0 or 1
within the time limit, and a failure must print a diagnostic: a crash (a
signal, LLVM's crash handler), a hang or a silent failure is a finding.
Findings are written to --out as reproducers (the mutated input and the
command), to become lit regression tests.

usage: mutate.py --epl-opt PATH --corpus DIR [--seed N] [--runs N]
                 [--out DIR] [--timeout S]
       mutate.py --corpus DIR --write-corpus SEEDS
The same seed and corpus give the same mutants, in the same order.
"""

import argparse
import pathlib
import random
import re
import subprocess
import sys

PIPELINES = [
    [],
    ["--epl-training-step"],
    ["--epl-parallelize=devices=4"],
    ["--epl-lower-to-cpu"],
]

INT = re.compile(r"(?<![\w.#%@^])(\d+)(?![\w.])")
AXIS = re.compile(r'"(data|tensor|stage|x|y)"')


def corpus(root):
    files = sorted(p for p in pathlib.Path(root).rglob("*.mlir")
                   if "fuzz" not in p.relative_to(root).parts)
    chunks = []
    for path in files:
        text = path.read_text()
        for i, chunk in enumerate(re.split(r"^// -----$", text, flags=re.M)):
            # Lines lit and -verify-diagnostics read are not the program.
            body = "\n".join(l for l in chunk.splitlines()
                             if not l.lstrip().startswith("//"))
            if "func.func" in body or "epl." in body:
                chunks.append((f"{path.relative_to(root)}#{i}", body))
    return chunks


def mutate(text, rng):
    lines = text.splitlines()
    kind = rng.choice(["int", "int", "int", "drop-line", "dup-line",
                       "dup-entry", "axis", "drop-attr"])
    if kind == "int":
        spots = list(INT.finditer(text))
        if spots:
            m = rng.choice(spots)
            new = rng.choice(["4294967296", "4294967298", "0", "-1",
                              "9223372036854775807", "3", "100000"])
            return kind, text[:m.start(1)] + new + text[m.end(1):]
    if kind in ("drop-line", "dup-line") and len(lines) > 2:
        i = rng.randrange(len(lines))
        if kind == "drop-line":
            del lines[i]
        else:
            lines.insert(i, lines[i])
        return kind, "\n".join(lines)
    if kind == "dup-entry":
        spots = list(re.finditer(r"\[([^\[\]]+)\]", text))
        if spots:
            m = rng.choice(spots)
            items = m.group(1).split(",")
            items.insert(rng.randrange(len(items) + 1), rng.choice(items))
            return kind, text[:m.start(1)] + ",".join(items) + text[m.end(1):]
    if kind == "axis":
        spots = list(AXIS.finditer(text))
        if spots:
            m = rng.choice(spots)
            new = rng.choice(["data", "tensor", "stage", "nope"])
            return kind, text[:m.start(1)] + new + text[m.end(1):]
    if kind == "drop-attr":
        spots = list(re.finditer(r"epl\.\w+ = [^,}]+[,]?", text))
        if spots:
            m = rng.choice(spots)
            return kind, text[:m.start()] + text[m.end():]
    return "none", text


# Crashes in upstream MLIR's own verifiers on what they should reject,
# reached while parsing (before any EPL code runs): reported, not counted.
# Each names the frame it crashes in.
KNOWN_UPSTREAM = {
    "mlir::tensor::ConcatOp::verify()":
        "LLVM 22's tensor.concat verifier indexes the shape with a negative "
        "dim(-1) instead of rejecting it",
}


def classify(result, timed_out):
    out = result if timed_out else result.stdout + result.stderr
    if timed_out:
        return "hang"
    rc = result.returncode
    if rc < 0 or rc > 1 or "PLEASE submit a bug report" in out \
            or "Stack dump" in out:
        for frame, why in KNOWN_UPSTREAM.items():
            if frame in out:
                return "upstream: " + why
        return "crash"
    if rc == 1 and "error" not in out:
        return "silent failure"
    return None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epl-opt")
    parser.add_argument("--corpus", required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--timeout", type=float, default=20)
    parser.add_argument("--out", default="fuzz-findings")
    parser.add_argument("--write-corpus", metavar="DIR",
                        help="write each chunk to DIR as a file (epl-fuzz's "
                        "seed corpus) and exit")
    options = parser.parse_args()

    if options.write_corpus:
        seeds = pathlib.Path(options.write_corpus)
        seeds.mkdir(parents=True, exist_ok=True)
        chunks = corpus(options.corpus)
        for name, text in chunks:
            stem = re.sub(r"[^\w.-]", "_", name)
            (seeds / f"{stem}.mlir").write_text(text + "\n")
        return 0
    if not options.epl_opt:
        parser.error("--epl-opt is required to fuzz")

    rng = random.Random(options.seed)
    chunks = corpus(options.corpus)
    out = pathlib.Path(options.out)
    findings = 0
    counts = {}
    for run in range(options.runs):
        name, text = rng.choice(chunks)
        kind, mutant = mutate(text, rng)
        counts[kind] = counts.get(kind, 0) + 1
        for pipeline in PIPELINES:
            cmd = [options.epl_opt, "-", "-o", "/dev/null"] + pipeline
            try:
                r = subprocess.run(cmd, input=mutant, capture_output=True,
                                   text=True, timeout=options.timeout)
                finding = classify(r, False)
            except subprocess.TimeoutExpired:
                r, finding = "", "hang"
            # Only while parsing: an EPL pass that builds such an op is
            # ours to fix.
            if finding is not None and finding.startswith("upstream: ") \
                    and pipeline:
                finding = "crash"
            if finding is not None and finding.startswith("upstream: "):
                print(f"run {run}: known {finding} ({name}, {kind})")
                break
            if finding is None:
                # A pipeline that fails on an input the verifier rejects
                # tells nothing more.
                if pipeline == [] and r.returncode != 0:
                    break
                continue
            findings += 1
            out.mkdir(parents=True, exist_ok=True)
            stem = out / f"seed{options.seed}-run{run}"
            stem.with_suffix(".mlir").write_text(mutant + "\n")
            log = r if isinstance(r, str) else r.stdout + r.stderr
            stem.with_suffix(".txt").write_text(
                f"{finding}: {' '.join(cmd[1:])} (from {name}, {kind})\n"
                + log[-4000:])
            print(f"run {run}: {finding} in {' '.join(pipeline) or 'verify'}"
                  f" on {name} ({kind}): {stem}.mlir")
            break
    print(f"{options.runs} mutants of {len(chunks)} chunks (seed "
          f"{options.seed}; {', '.join(f'{k} {v}' for k, v in sorted(counts.items()))}): "
          f"{findings} finding(s)")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
