#!/usr/bin/env bash
# The suite's Citus leg (`make test-citus`): a coordinator and two workers on loopback
# (tests/citus/cluster.sh), a test database made on every node with the extension and the workers
# added, then pytest with SPOKE_MEMORY_CITUS=1: tests/conftest.py's django_db_setup migrates that
# database and runs `manage.py spoke citus-setup` on it before the first test, so every test runs
# against distributed tables. Tests marked `single_node` are skipped there (each says why).
# Without the Citus extension installed: one line saying the leg is skipped, exit 0.
#   usage: tests/citus/run.sh [pytest args]   (default: CITUS_TESTS, the black-box op suites)
# Environment: CITUS_DIR, CITUS_PORT (tests/citus/cluster.sh), CITUS_KEEP=1 leaves the cluster up,
# CITUS_REMOVE=1 removes CITUS_DIR after.
set -uo pipefail
cd "$(dirname "$0")/../.."
here=$PWD
port=${CITUS_PORT:-9700}
if ! tests/citus/cluster.sh installed; then
  echo "== Citus leg skipped: no Citus extension installed for this PostgreSQL (docs/scaling.md says how to get it)"
  exit 0
fi
tests/citus/cluster.sh start || exit 1
# CITUS_REMOVE=1: the data folders go too (CI's throwaway CITUS_DIR)
[ "${CITUS_KEEP:-0}" = 1 ] || trap 'tests/citus/cluster.sh stop; [ "${CITUS_REMOVE:-0}" = 1 ] && rm -rf "${CITUS_DIR:?}"' EXIT
db=${CITUS_DB:-spoke_citus_leg}
export PGOPTIONS="-c client_min_messages=warning"
for p in "$port" "$((port + 1))" "$((port + 2))"; do
  psql -X -q -h 127.0.0.1 -p "$p" -U postgres -d postgres -c "DROP DATABASE IF EXISTS test_$db WITH (FORCE)" || exit 1
done
tests/citus/cluster.sh createdb "$db" >/dev/null || exit 1
tests/citus/cluster.sh createdb "test_$db" >/dev/null || exit 1
unset PGOPTIONS
export SPOKE_MEMORY_CITUS=1
export DATABASE_URL="postgres://postgres@127.0.0.1:$port/$db"
export SPOKE_MEMORY_VAR_DIR=${SPOKE_MEMORY_VAR_DIR:-$here/var/ci-citus}
py=${PYTHON:-$here/.venv/bin/python}
if [ $# -eq 0 ]; then set -- ${CITUS_TESTS:-tests/memory/ops tests/hostile}; fi
"$py" -m pytest -p no:cacheprovider "$@"
