#!/usr/bin/env bash
# A PostgreSQL server for the relay's cluster tests (tests/it/relay_cluster.rs): installs
# Debian's postgresql package when missing, starts the first cluster (listening on
# loopback only, as Debian configures it), makes a role `hal0` (password `hal0`) that may
# create databases, and prints the URL the tests take as HAL0_TEST_DATABASE_URL on its
# last line of stdout (everything else goes to stderr). Run as root (CI) or with sudo.
set -euo pipefail

log() { printf '%s\n' "$*" >&2; }
as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

if ! ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1; then
    log "postgres.sh: installing postgresql (apt)"
    as_root apt-get update -qq >&2
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >&2
fi
version=$(ls /usr/lib/postgresql | sort -n | tail -1)
if [ -z "$(pg_lsclusters -h 2>/dev/null)" ]; then
    as_root pg_createcluster "$version" main >&2
fi
read -r version name port status _ < <(pg_lsclusters -h | head -1)
if [ "$status" != "online" ]; then
    log "postgres.sh: starting cluster $version/$name on port $port"
    as_root pg_ctlcluster "$version" "$name" start >&2
fi
for _ in $(seq 1 60); do
    pg_isready -q -h 127.0.0.1 -p "$port" && break
    sleep 0.5
done
pg_isready -h 127.0.0.1 -p "$port" >&2
as_root su postgres -c "psql -q -p $port -v ON_ERROR_STOP=1" >&2 <<'SQL'
DO $$BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'hal0') THEN
    CREATE ROLE hal0 LOGIN CREATEDB PASSWORD 'hal0';
  END IF;
END$$;
SQL
echo "postgres://hal0:hal0@127.0.0.1:$port/postgres"
