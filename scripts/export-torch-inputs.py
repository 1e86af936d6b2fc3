#!/usr/bin/env python3
"""Regenerates test/e2e/Inputs/torch/: exports the models of models.py
through torch-mlir (python/epl/torch.py) and records PyTorch's per-step
losses. Runs inside the venv of scripts/setup-torch.sh:

    .venv-torch/bin/python scripts/export-torch-inputs.py [--out DIR] [NAME...]

For each model NAME: NAME.mlir (and NAME-split.mlir where models.VARIANTS
has one), NAME.params.safetensors, NAME.data.safetensors and NAME.json
(torch and torch-mlir versions, steps, and per optimizer its epl.config
and PyTorch's losses)."""

import argparse
import json
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
INPUTS = ROOT / "test" / "e2e" / "Inputs" / "torch"
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(INPUTS))

import torch  # noqa: E402
import torch_mlir  # noqa: E402,F401

import epl.torch  # noqa: E402
import models  # noqa: E402


def version(package):
    from importlib.metadata import version as v
    return v(package)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=pathlib.Path, default=INPUTS)
    parser.add_argument("names", nargs="*", default=list(models.MODELS))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for name in args.names:
        spec = models.MODELS[name]()
        configs = models.configs(name)
        first = next(iter(configs.values()))
        for suffix, strategy in models.VARIANTS[name].items():
            exported = epl.torch.export(spec["model"], spec["inputs"], spec["labels"],
                                        strategy=strategy, config=first,
                                        batch_dims=spec.get("batch_dims"))
            (args.out / f"{name}{suffix}.mlir").write_text(exported.mlir)
        epl.torch.safetensors.save(args.out / f"{name}.params.safetensors",
                                   exported.params)
        epl.torch.safetensors.save(args.out / f"{name}.data.safetensors", exported.data)
        record = {"torch": torch.__version__, "torch_mlir": version("torch-mlir"),
                  "steps": models.STEPS, "optimizers": {}}
        for key, config in configs.items():
            losses = epl.torch.torch_losses(spec["model"], spec["inputs"],
                                            spec["labels"], config, models.STEPS)
            record["optimizers"][key] = {"config": config, "losses": losses}
        (args.out / f"{name}.json").write_text(json.dumps(record, indent=1) + "\n")
        sizes = ", ".join(f"{p.name} {p.stat().st_size // 1024} KB"
                          for p in sorted(args.out.glob(f"{name}*.mlir")))
        print(f"{name}: {sizes}; {record['optimizers'][next(iter(configs))]['losses'][:2]}")


if __name__ == "__main__":
    main()
