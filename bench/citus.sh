#!/usr/bin/env bash
# The Citus measurements of docs/scaling.md, on a coordinator and two workers on loopback
# (tests/citus/cluster.sh; all three servers share this machine's cores):
#   1. plans: the statement-capture test on the Citus leg EXPLAINs every statement the ops, jobs,
#      drain and sweepers issue (tests/memory/test_space_scoped_sql.py check_plans): router
#      plans (Task Count 1) and fan-outs per phase;
#   2. writes, one node vs the cluster, in one run: `python -m bench writes` against a plain
#      database on the coordinator's own server (same settings, no extension) and then against a
#      distributed one (`manage.py spoke citus-setup`), one after the other in the same run.
# Output: bench/results/2026-12-06-citus.md (override with BENCH_CITUS_OUT).
#   3. move: `python -m bench citus_move` on a distributed database: a space's shards moved to
#      the other worker and back (citus_move_shard_placement) while clients run bench.mixed_load's
#      mix in it, then mixed_load's audit (BENCH_MOVE_MODE, BENCH_SECONDS, BENCH_PORT apply).
#   4. throughput: `python -m bench citus_throughput`: records.create, recall and subjects.get on
#      a plain database and a distributed one of the same coordinator, one gunicorn each, rounds
#      interleaved in one run (BENCH_SECONDS, BENCH_ROUNDS, BENCH_PORT apply).
#   usage: bench/citus.sh [plans] [writes] [move] [throughput]    (plans writes move by default)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
py=${PYTHON:-$root/.venv/bin/python}
port=${CITUS_PORT:-9700}
out=${BENCH_CITUS_OUT:-$root/bench/results/2026-12-06-citus.md}
parts=("$@")
[ ${#parts[@]} -gt 0 ] || parts=(plans writes move)
tests/citus/cluster.sh start
export PGOPTIONS="-c client_min_messages=warning"
{
  echo "# Citus: plans and one node vs the cluster ($(date -u +%FT%TZ), commit $(git rev-parse --short HEAD))"
  echo
  echo "A coordinator and two workers on 127.0.0.1 (tests/citus/cluster.sh: fsync off), every"
  echo "server on this machine's $(nproc) cores, shared with the load driver and gunicorn."
  echo "Load average at start: $(cut -d' ' -f1-3 /proc/loadavg)."
} >"$out"

# two_databases SINGLE CLUSTER: a plain database and a distributed one (citus-setup) on the same
# coordinator, both migrated, each dropped first wherever it was left (coordinator and workers).
two_databases() {
  local db p
  for db in "$1" "$2"; do
    for p in "$port" "$((port + 1))" "$((port + 2))"; do
      psql -X -q -h 127.0.0.1 -p "$p" -U postgres -d postgres -c "DROP DATABASE IF EXISTS $db WITH (FORCE)"
    done
  done
  psql -X -q -h 127.0.0.1 -p "$port" -U postgres -d postgres -c "CREATE DATABASE $1"
  tests/citus/cluster.sh createdb "$2" >/dev/null
  for db in "$1" "$2"; do
    DATABASE_URL="postgres://postgres@127.0.0.1:$port/$db" SECRET_KEY=bench-only-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx \
      "$py" manage.py migrate -v0
  done
  DATABASE_URL="postgres://postgres@127.0.0.1:$port/$2" SECRET_KEY=bench-only-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx \
    "$py" manage.py spoke citus-setup >/dev/null
}

for part in "${parts[@]}"; do
  case $part in
  plans)
    plans=$(mktemp)
    CITUS_KEEP=1 CITUS_DB=spoke_citus_plans SPOKE_MEMORY_CITUS_PLANS=$plans tests/citus/run.sh \
      tests/memory/test_space_scoped_sql.py -k names_its_space -q -p no:randomly | tail -3
    { echo; echo "## Plans (EXPLAIN of every recorded statement, shard count 8)"; cat "$plans"; } >>"$out"
    rm -f "$plans"
    ;;
  writes)
    single=spoke_citus_bench_single
    cluster=spoke_citus_bench_cluster
    two_databases "$single" "$cluster"
    for db in "$single" "$cluster"; do
      echo; echo "## writes: $db"
      echo
      echo '```'
      BENCH_DATABASE_URL="postgres://postgres@127.0.0.1:$port/$db" "$py" -m bench writes 2>&1 | tail -25
      echo '```'
    done >>"$out"
    ;;
  throughput)
    single=spoke_citus_tp_single
    cluster=spoke_citus_tp_cluster
    two_databases "$single" "$cluster"
    {
      echo; echo "## throughput: one node vs the cluster, interleaved in one run"; echo
      echo "uptime before: $(uptime)"; echo
      echo '```'
      BENCH_SINGLE_URL="postgres://postgres@127.0.0.1:$port/$single" \
        BENCH_CLUSTER_URL="postgres://postgres@127.0.0.1:$port/$cluster" \
        "$py" -m bench citus_throughput 2>&1 | grep -v "UserWarning\|mw_instance"
      echo '```'
      echo; echo "uptime after: $(uptime)"
    } >>"$out"
    ;;
  move)
    db=spoke_citus_bench_move
    for p in "$port" "$((port + 1))" "$((port + 2))"; do
      psql -X -q -h 127.0.0.1 -p "$p" -U postgres -d postgres -c "DROP DATABASE IF EXISTS $db WITH (FORCE)"
    done
    tests/citus/cluster.sh createdb "$db" >/dev/null
    url="postgres://postgres@127.0.0.1:$port/$db"
    DATABASE_URL=$url SECRET_KEY=bench-only-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx \
      "$py" manage.py migrate -v0
    DATABASE_URL=$url SECRET_KEY=bench-only-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx \
      "$py" manage.py spoke citus-setup >/dev/null
    {
      echo; echo "## move: a space's shards to the other worker while clients write"; echo
      echo '```'
      BENCH_DATABASE_URL=$url "$py" -m bench citus_move 2>&1 | grep -v "UserWarning\|mw_instance"
      echo '```'
    } >>"$out"
    ;;
  esac
done
echo "Load average at end: $(cut -d' ' -f1-3 /proc/loadavg)." >>"$out"
echo "$out"
