#!/bin/sh
# The image's entry point: the first argument chooses the process kind, the rest go to it (the operator command's
# arguments). Each kind runs the same file as its npm script (package.json), without npm in between, so the process
# gets the signals itself.
set -e
kind="${1:-api}"
[ "$#" -gt 0 ] && shift
case "$kind" in
  api) exec node services/api/main.ts "$@" ;;
  pay) exec node services/pay/main.ts "$@" ;;
  workflows) exec node workflows/main.ts "$@" ;;
  migrate) exec node services/db/migrate-cli.ts "$@" ;;
  admin) exec node services/admin/cli.ts "$@" ;;
  *)
    echo "usage: <image> api | pay | workflows | migrate | admin [arguments of the operator command]" >&2
    echo "unknown process kind: $kind" >&2
    exit 2
    ;;
esac
