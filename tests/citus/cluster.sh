#!/usr/bin/env bash
# A Citus coordinator and two workers on loopback, for the suite's Citus leg (`make test-citus`)
# and the Citus bench: each node its own `initdb`, `shared_preload_libraries = 'citus'`,
# `CREATE EXTENSION citus` in every database the leg uses, the coordinator registered with
# `citus_set_coordinator_host` and each worker with `citus_add_node`.
#   usage: tests/citus/cluster.sh start|stop|status|createdb NAME
# Environment: CITUS_DIR (data folders; default var/citus), CITUS_PORT (the coordinator's; the
# workers take the next two; default 9700). Needs the Citus extension installed for the
# machine's PostgreSQL (docs/scaling.md says where to get it); `start` says so and exits 3 if not.
# As root, the servers run as the `postgres` user.
set -euo pipefail
cd "$(dirname "$0")/../.."
dir=${CITUS_DIR:-$PWD/var/citus}
port=${CITUS_PORT:-9700}
ports=("$port" "$((port + 1))" "$((port + 2))")
pgconfig=${PG_CONFIG:-$(ls -d /usr/lib/postgresql/*/bin/pg_config 2>/dev/null | sort -V | tail -1)}
bin=$(dirname "$pgconfig")
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
sql() { PGOPTIONS="-c client_min_messages=warning" psql -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$1" -U postgres -d "$2" -Atc "$3"; }

installed() { [ -f "$("$pgconfig" --pkglibdir)/citus.so" ]; }

start() {
  if ! installed; then
    echo "Citus is not installed for $("$pgconfig" --version); the Citus leg is skipped" >&2
    exit 3
  fi
  mkdir -p "$dir"
  [ "$(id -u)" = 0 ] && chown postgres "$dir"
  for i in 0 1 2; do
    node="$dir/node$i"
    if [ ! -f "$node/PG_VERSION" ]; then
      as_pg "$bin/initdb" -D "$node" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 >/dev/null
      cat >>"$node/postgresql.conf" <<CONF
shared_preload_libraries = 'citus'
listen_addresses = '127.0.0.1'
port = ${ports[$i]}
unix_socket_directories = '$node'
max_connections = 200
shared_buffers = 64MB
fsync = off
synchronous_commit = off
full_page_writes = off
max_prepared_transactions = 100
wal_level = logical
CONF
    fi
    if ! pg_isready -q -h 127.0.0.1 -p "${ports[$i]}"; then
      as_pg "$bin/pg_ctl" -D "$node" -l "$node/server.log" -w -t 60 start >/dev/null
    fi
  done
  createdb_all postgres
  echo "citus: coordinator 127.0.0.1:${ports[0]}, workers ${ports[1]}, ${ports[2]} ($dir)"
}

# The extension in database $1 on every node, the workers added to its coordinator's metadata.
createdb_all() {
  local db=$1
  for p in "${ports[@]}"; do
    if [ "$(sql "$p" postgres "SELECT count(*) FROM pg_database WHERE datname = '$db'")" = 0 ]; then
      sql "$p" postgres "CREATE DATABASE \"$db\""
    fi
    sql "$p" "$db" "CREATE EXTENSION IF NOT EXISTS citus"
  done
  sql "${ports[0]}" "$db" "SELECT citus_set_coordinator_host('127.0.0.1', ${ports[0]})" >/dev/null
  for p in "${ports[1]}" "${ports[2]}"; do
    sql "${ports[0]}" "$db" "SELECT citus_add_node('127.0.0.1', $p)" >/dev/null
  done
}

stop() {
  for i in 2 1 0; do
    node="$dir/node$i"
    if [ -f "$node/postmaster.pid" ]; then
      as_pg "$bin/pg_ctl" -D "$node" -m fast -w stop >/dev/null || true
    fi
  done
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status)
    for p in "${ports[@]}"; do pg_isready -h 127.0.0.1 -p "$p"; done
    sql "${ports[0]}" postgres "SELECT nodename, nodeport, noderole FROM pg_dist_node ORDER BY nodeport"
    ;;
  createdb) createdb_all "${2:?database name}" ;;
  installed) installed ;;
  *) echo "usage: $0 start|stop|status|createdb NAME|installed" >&2; exit 2 ;;
esac
