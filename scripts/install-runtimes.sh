#!/usr/bin/env bash
# Installs Node 18, Node 22 and Bun from the npm registry into .build/runtimes/<name>, so the e2e
# suite can prove dist/claw.mjs runs on each (test/e2e/runtimes.test.ts), then the other architectures'
# runtimes into .build/xarch (scripts/xarch/fetch.mjs, for test/e2e/xarch.test.ts). Idempotent: what is
# there is not fetched again.
set -euo pipefail
cd "$(dirname "$0")/.."
install() { # name spec binary
  local dir=".build/runtimes/$1"
  if [ -x "$dir/node_modules/.bin/$3" ]; then return; fi
  mkdir -p "$dir"
  echo '{"private":true}' > "$dir/package.json"
  npm install --prefix "$dir" --no-audit --no-fund --no-save "$2" >/dev/null
}
install node18 node@18 node
install node22 node@22 node
install bun bun bun
node scripts/xarch/fetch.mjs
