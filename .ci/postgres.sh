#!/usr/bin/env bash
# A throwaway PostgreSQL for the tests that need one (persistence/postgres, cluster mode).
#
#   .ci/postgres.sh start DIR   initdb in DIR as an unprivileged user, start on a free port of
#                               127.0.0.1, print `export REEF_TEST_DATABASE_URL=...` (for eval)
#   .ci/postgres.sh stop DIR    stop it and remove DIR
#
# Installs Debian's postgresql when no PostgreSQL is found. The instance trusts every local
# connection and, unless REEF_PG_FSYNC=on, does not fsync: it is for tests, never for data.
# REEF_PG_OPTS adds server settings ("-c name=value ...", e.g. for a benchmark).
set -euo pipefail
cmd=${1:-}
dir=${2:-}
if [ -z "$cmd" ] || [ -z "$dir" ]; then
  echo "usage: $0 start|stop DIR" >&2; exit 2
fi

bindir() {
  local d
  d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
  if [ -z "$d" ] && command -v initdb >/dev/null; then d=$(dirname "$(readlink -f "$(command -v initdb)")"); fi
  echo "$d"
}

# as runs a command as the unprivileged owner of the instance (PostgreSQL refuses root).
as() {
  if [ "$(id -u)" != 0 ]; then "$@"; return; fi
  local user=postgres
  id "$user" >/dev/null 2>&1 || user=nobody
  if command -v runuser >/dev/null; then runuser -u "$user" -- "$@"; else su -s /bin/sh "$user" -c "$(printf '%q ' "$@")"; fi
}

case "$cmd" in
start)
  bin=$(bindir)
  if [ -z "$bin" ]; then
    { command -v apt-get >/dev/null && apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null; } ||
      { echo "PostgreSQL is needed: the cluster-mode tests run one" >&2; exit 1; }
    bin=$(bindir)
  fi
  mkdir -p "$dir"
  if [ "$(id -u)" = 0 ]; then
    user=postgres; id "$user" >/dev/null 2>&1 || user=nobody
    chown "$user" "$dir"
  fi
  as "$bin/initdb" -D "$dir/data" -U reef --auth=trust -E UTF8 --no-locale >"$dir/initdb.log" 2>&1 ||
    { cat "$dir/initdb.log" >&2; exit 1; }
  fsync=${REEF_PG_FSYNC:-off}
  for _ in 1 2 3 4 5 6 7 8; do
    port=$((20000 + RANDOM % 40000))
    if (echo >"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then continue; fi
    if as "$bin/pg_ctl" -D "$dir/data" -l "$dir/postgres.log" -w -t 60 \
      -o "-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories=$dir -c fsync=$fsync -c synchronous_commit=$fsync -c full_page_writes=$fsync -c max_connections=300 ${REEF_PG_OPTS:-}" \
      start >/dev/null; then
      url="postgres://reef@127.0.0.1:$port/postgres?sslmode=disable"
      echo "$url" >"$dir/url"
      echo "export REEF_TEST_DATABASE_URL='$url'"
      exit 0
    fi
  done
  cat "$dir/postgres.log" >&2
  echo "could not start PostgreSQL" >&2
  exit 1
  ;;
stop)
  bin=$(bindir)
  if [ -f "$dir/data/postmaster.pid" ]; then
    as "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null || true
  fi
  rm -rf "$dir"
  ;;
*)
  echo "usage: $0 start|stop DIR" >&2; exit 2
  ;;
esac
