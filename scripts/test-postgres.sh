#!/usr/bin/env bash
# A throwaway PostgreSQL server for the tests, on 127.0.0.1 only.
#
#   scripts/test-postgres.sh start DIR   # initdb in DIR/data, start it, write DIR/dsn
#   scripts/test-postgres.sh stop DIR    # stop it and remove DIR/data
#
# The server runs as the `postgres` user when started by root (PostgreSQL refuses
# root), trusts local connections (nothing but this machine's tests reach it), and
# skips fsync: the tests kill loopwarden, never the database's machine.
set -euo pipefail

cmd=${1:?start or stop}
dir=$(realpath -m "${2:?directory}")
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -n "$bin" ] && [ -x "$bin/initdb" ] || { echo "test-postgres: no PostgreSQL server (apt-get install postgresql)" >&2; exit 1; }

as_owner() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

case "$cmd" in
  start)
    if [ -f "$dir/data/postmaster.pid" ] && as_owner "$bin/pg_ctl" -D "$dir/data" status >/dev/null 2>&1; then
      as_owner "$bin/pg_ctl" -D "$dir/data" stop -m immediate >/dev/null 2>&1 || true
    fi
    rm -rf "$dir/data" "$dir/dsn" "$dir/socket"
    mkdir -p "$dir/data" "$dir/socket"
    if [ "$(id -u)" = 0 ]; then
      chown postgres "$dir/data" "$dir/socket"
      # The server must reach its directory through every parent.
      p="$dir"; while [ "$p" != / ]; do chmod o+x "$p" 2>/dev/null || true; p=$(dirname "$p"); done
    fi
    as_owner "$bin/initdb" -D "$dir/data" -U loopwarden --auth=trust -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 ||
      { cat "$dir/initdb.log" >&2; exit 1; }
    # A free port: the kernel's choice for a socket bound to port 0.
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/data/server.log" -w -t 60 start \
      -o "-p $port -c listen_addresses=127.0.0.1 -k $dir/socket -c fsync=off -c synchronous_commit=off -c max_connections=200" \
      >/dev/null || { cat "$dir/data/server.log" >&2; exit 1; }
    "$bin/createdb" -h 127.0.0.1 -p "$port" -U loopwarden loopwarden
    echo "postgresql://loopwarden@127.0.0.1:$port/loopwarden" >"$dir/dsn"
    echo "test-postgres: $(cat "$dir/dsn")"
    ;;
  stop)
    if [ -d "$dir/data" ]; then
      as_owner "$bin/pg_ctl" -D "$dir/data" stop -m fast >/dev/null 2>&1 || true
      rm -rf "$dir/data" "$dir/dsn" "$dir/socket"
    fi
    ;;
  *) echo "usage: $0 start|stop DIR" >&2; exit 2 ;;
esac
