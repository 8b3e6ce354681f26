#!/bin/sh
# Installs what `npm start`, `npm test` and `npm run bench` need on a fresh machine, and nothing when it is there:
# the npm packages (from package-lock.json) and Debian's chromium (PDF rendering and browser tests).
set -e
cd "$(dirname "$0")/.."
if [ ! -x node_modules/.bin/node ] || [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "Installing npm packages…" >&2
  npm ci --loglevel=warn >&2
fi
if ! command -v chromium >/dev/null 2>&1 && [ -z "${SKIP_CHROMIUM_INSTALL:-}" ]; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    echo "Installing Debian's chromium…" >&2
    (apt-get install -y --no-install-recommends chromium >/dev/null 2>&1 || { apt-get update >/dev/null 2>&1 && apt-get install -y --no-install-recommends chromium >/dev/null; }) >&2
  else
    echo "chromium is missing; install Debian's chromium package (PDF rendering needs it)." >&2
  fi
fi
