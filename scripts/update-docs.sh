#!/usr/bin/env bash
# Regenerates the documentation pages derived from ODS and Passes.td and
# copies them into docs/generated, where they are committed.
set -euo pipefail
cd "$(dirname "$0")/.."
ninja -C build mlir-doc >/dev/null
mkdir -p docs/generated/EPL
cp build/docs/EPL/*.md docs/generated/EPL/
cp build/docs/Config.md build/docs/config-schema.json docs/generated/
# The Python frontend validates epl.Config against the same schema.
cp build/docs/config-schema.json python/epl/config_schema.json
echo "docs/generated updated"
