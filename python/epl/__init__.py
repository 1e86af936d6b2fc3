"""EPL-MLIR's Python package. `epl.safetensors` reads and writes the files
epl-run exchanges; the EPL-style frontend API comes with its own issue."""
