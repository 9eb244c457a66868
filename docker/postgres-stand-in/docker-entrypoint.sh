#!/bin/sh
# What the official postgres image's entrypoint does with POSTGRES_USER, POSTGRES_PASSWORD
# and POSTGRES_DB on a first start (no initdb scripts, no other variables), then the server
# on every address. Arguments after `postgres` go to the server (`postgres -c ssl=on`).
set -eu

user="${POSTGRES_USER:-postgres}"
database="${POSTGRES_DB:-$user}"

if [ ! -s "$PGDATA/PG_VERSION" ]; then
  : "${POSTGRES_PASSWORD:?set POSTGRES_PASSWORD, as the official image requires}"
  password_file="$(mktemp)"
  printf '%s\n' "$POSTGRES_PASSWORD" >"$password_file"
  initdb --username="$user" --pwfile="$password_file" --encoding=UTF8 --locale=C.UTF-8 \
    --auth-local=trust --auth-host=scram-sha-256 >/dev/null
  rm -f "$password_file"
  # initdb allows only the loopback; clients come from the container network.
  echo 'host all all all scram-sha-256' >>"$PGDATA/pg_hba.conf"
  if [ "$database" != postgres ]; then
    echo "CREATE DATABASE \"$database\"" | postgres --single -D "$PGDATA" postgres >/dev/null
  fi
fi

if [ "${1:-}" = postgres ]; then
  shift
fi
exec postgres -c listen_addresses='*' "$@"
