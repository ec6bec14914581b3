#!/usr/bin/env bash
# Run once by the postgres image when it initialises its data directory (docker-compose.yml):
# lets a standby on the compose network stream WAL as the database owner (a superuser).
set -euo pipefail
echo "host replication ${POSTGRES_USER:-postgres} all scram-sha-256" >> "$PGDATA/pg_hba.conf"
