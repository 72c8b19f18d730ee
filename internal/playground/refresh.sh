#!/usr/bin/env bash
# Refreshes the vendored GraphiQL, React and ReactDOM browser builds that the playground embeds,
# from the npm registry at the exact versions package-lock.json pins, and rewrites their SHA256SUMS.
# To move to other versions: edit package.json, run `npm install --package-lock-only` here, then
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
modules="$work/node_modules"
cp "$modules/react/umd/react.production.min.js" "$vendor/"
cp "$modules/react-dom/umd/react-dom.production.min.js" "$vendor/"
cp "$modules/graphiql/graphiql.min.js" "$modules/graphiql/graphiql.min.css" "$vendor/"
for pkg in react react-dom graphiql; do
  cp "$modules/$pkg/LICENSE" "$vendor/LICENSE.$pkg"
done
(cd "$vendor" && files=(*) && sha256sum -- "${files[@]}" | LC_ALL=C sort -k2 > SHA256SUMS)
echo "refreshed $vendor:"
cat "$vendor/SHA256SUMS"
