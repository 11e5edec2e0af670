#!/usr/bin/env bash
# Import activation at N records (default 100,000) on three schemas, one after the other in one
# run (issue 30; docs/performance.md, "Transfer"), each with `bench.transfer --activation-only`
# (this tree's activation and BASELINE_TREE's, same database, same schema):
#   main     migration 0018 (0002's spoke_recall_lexemes) and engine/1's GIN index: main before
#   kept     migration 0019 (the cheaper function), the index kept (engine/1 or hybrid/1 served)
#   dropped  migration 0019, the index dropped (what `migrate` does for engine/2 and the hybrids)
# The activation itself runs under the default engine in all three (SPOKE_MEMORY_ENGINE unset),
# so only the schema differs. Each activation also prints the CPU seconds of its PostgreSQL
# backend and of the worker (bench/activation_cpu.py), in leg order (baseline, this). Needs DATABASE_URL (a bench database: it migrates it back and
# forth) and BASELINE_TREE (a checkout to compare with; the code leg, not the schema).
#
#   DATABASE_URL=postgres://postgres@127.0.0.1:5432/spoke_scale BASELINE_TREE=../main-at-start \
#     flock /work/bench.lock bench/activation_index.sh 100000
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-100000}
PY=${PY:-.venv/bin/python}
: "${DATABASE_URL:?a bench database}" "${BASELINE_TREE:?a checkout to compare with}"
unset SPOKE_MEMORY_ENGINE
for schema in main kept dropped; do
  case $schema in
    main) SPOKE_MEMORY_ENGINE=engine/1 $PY manage.py migrate --verbosity 0 \
            && SPOKE_MEMORY_ENGINE=engine/1 $PY manage.py migrate memory 0018 --verbosity 0 ;;
    kept) SPOKE_MEMORY_ENGINE=engine/1 $PY manage.py migrate --verbosity 0 ;;
    dropped) $PY manage.py migrate --verbosity 0 ;;
  esac
  index=$(psql "$DATABASE_URL" -tAc \
    "SELECT count(*) FROM pg_indexes WHERE indexname = 'record_recall_lexemes'")
  echo "{\"schema\": \"$schema\", \"gin_index\": $index, \"load\": \"$(cut -d' ' -f1-3 /proc/loadavg)\"}"
  extra=()
  if [ "$schema" = dropped ]; then extra=(--reexport); fi
  BENCH_PATCH="$PWD/bench/activation_cpu.py" $PY -m bench.transfer --activation-only \
    --records "$N" --baseline-tree "$BASELINE_TREE" --rounds "${ROUNDS:-1}" "${extra[@]}" 2>&1 \
    | grep -E '^\{"(records|backend)' | grep -v '^{"records": [0-9]*, "(this|baseline)"'

done
echo "{\"end_load\": \"$(cut -d' ' -f1-3 /proc/loadavg)\"}"
