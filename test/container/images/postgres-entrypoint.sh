#!/bin/bash
# As the official postgres image's entrypoint: an empty PGDATA is initialised from POSTGRES_USER,
# POSTGRES_PASSWORD and POSTGRES_DB (password auth from other hosts), then postgres runs as postgres.
set -euo pipefail
if [ "${1#-}" != "$1" ]; then set -- postgres "$@"; fi
as_postgres() { setpriv --reuid=postgres --regid=postgres --init-groups "$@"; }
if [ "$1" = postgres ] && [ "$(id -u)" = 0 ]; then
  mkdir -p "$PGDATA" && chown postgres:postgres "$PGDATA" && chmod 700 "$PGDATA"
  if [ ! -s "$PGDATA/PG_VERSION" ]; then
    : "${POSTGRES_PASSWORD:?POSTGRES_PASSWORD is required}"
    user=${POSTGRES_USER:-postgres}
    database=${POSTGRES_DB:-$user}
    printf '%s\n' "$POSTGRES_PASSWORD" >/tmp/pwfile && chown postgres /tmp/pwfile
    as_postgres initdb --username="$user" --pwfile=/tmp/pwfile --auth-local=trust --auth-host=scram-sha-256 >/dev/null
    rm -f /tmp/pwfile
    echo "listen_addresses = '*'" >>"$PGDATA/postgresql.conf"
    echo 'host all all all scram-sha-256' >>"$PGDATA/pg_hba.conf"
    if [ "$database" != postgres ]; then
      as_postgres pg_ctl -D "$PGDATA" -o "-c listen_addresses=''" -w start >/dev/null
      as_postgres psql -v ON_ERROR_STOP=1 --username="$user" --dbname=postgres -q \
        -c "CREATE DATABASE \"$database\""
      as_postgres pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
    fi
    echo 'PostgreSQL init process complete; ready for start up.'
  fi
  exec setpriv --reuid=postgres --regid=postgres --init-groups "$@"
fi
exec "$@"
