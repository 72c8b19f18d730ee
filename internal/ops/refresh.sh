#!/usr/bin/env bash
# Refreshes the vendored uPlot browser build that the operations page embeds, from the npm
# registry at the exact version package-lock.json pins, and rewrites its SHA256SUMS.
# To move to another version: edit package.json, run `npm install --package-lock-only` here, then
# this script, and commit package.json, package-lock.json and assets/vendor together.
set -euo pipefail
cd "$(dirname "$0")"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp package.json package-lock.json "$work/"
(cd "$work" && npm ci --no-audit --no-fund --ignore-scripts --loglevel=error)

vendor=assets/vendor
rm -rf "$vendor"
mkdir -p "$vendor"
uplot="$work/node_modules/uplot"
cp "$uplot/dist/uPlot.iife.min.js" "$uplot/dist/uPlot.min.css" "$vendor/"
cp "$uplot/LICENSE" "$vendor/LICENSE.uplot"
(cd "$vendor" && files=(*) && sha256sum -- "${files[@]}" | LC_ALL=C sort -k2 > SHA256SUMS)
echo "refreshed $vendor:"
cat "$vendor/SHA256SUMS"
