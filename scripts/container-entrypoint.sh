#!/bin/sh
# The container's command chooses its role; anything else runs as given (for example `sh`).
set -e
case "$1" in
  api) exec node dist/apps/api/src/main.js ;;
  worker) exec node dist/apps/worker/src/main.js ;;
  migrate) exec node scripts/migrate.js ;;
  *) exec "$@" ;;
esac
