#!/usr/bin/env bash
# Run by test/deb_package.sh as root inside a clean chroot where the package
# postgresql-NN-flownode was just installed, as a new user would try it: a cluster
# with flownode preloaded, CREATE EXTENSION, the README's flow, writes (INSERT,
# UPDATE, DELETE), the sink equal to its query on its own within 30 s, exact after
# flush_flow too, then the flow and the extension dropped and the cluster removed.
#   bash deb_flow_check.sh MAJOR
set -euo pipefail
v="${1:?usage: deb_flow_check.sh MAJOR}"
bin="/usr/lib/postgresql/$v/bin"
d="$(mktemp -d /tmp/flownode-pkg.XXXXXX)"
chown postgres: "$d"
as_pg() { (cd / && runuser -u postgres -- "$@"); }
trap 'as_pg "$bin/pg_ctl" -D "$d/data" -m immediate stop >/dev/null 2>&1 || true; rm -rf "$d"' EXIT

as_pg "$bin/initdb" -D "$d/data" -A trust -U postgres --no-sync >"$d/initdb.log"
cat >>"$d/data/postgresql.conf" <<CONF
shared_preload_libraries = 'flownode'
max_worker_processes = 32
listen_addresses = ''
unix_socket_directories = '$d'
port = 5499
CONF
as_pg "$bin/pg_ctl" -D "$d/data" -l "$d/server.log" -w -t 60 start >/dev/null || { cat "$d/server.log"; exit 1; }

q() { as_pg "$bin/psql" -X -q -v ON_ERROR_STOP=1 -h "$d" -p 5499 -d postgres -tA "$@"; }
Q="SELECT date_bin('1 minute', ts, timestamptz '2000-01-01') AS minute, host,
       avg(usage) AS avg_usage, max(usage) AS max_usage, count(*) AS n
  FROM cpu GROUP BY 1, 2"
DIFF="SELECT count(*) FROM (
  (SELECT minute, host, avg_usage, max_usage, n FROM cpu_1m EXCEPT $Q)
  UNION ALL ($Q EXCEPT SELECT minute, host, avg_usage, max_usage, n FROM cpu_1m)) d"

q <<SQL
CREATE EXTENSION flownode;
CREATE TABLE cpu (ts timestamptz NOT NULL, host text, usage float8);
CREATE INDEX ON cpu (ts);
INSERT INTO cpu SELECT timestamptz '2024-01-01' + i * interval '10 seconds', 'host-' || h,
                       ((i * 37 + h * 11) % 400) / 4.0
  FROM generate_series(0, 179) i, generate_series(1, 3) h;
SELECT flownode.create_flow('cpu_1m', 'cpu_1m', \$q\$$Q\$q\$, eval_interval => '1 second') > 0;
INSERT INTO cpu SELECT timestamptz '2024-01-01 00:30' + i * interval '10 seconds', 'host-' || h, i / 4.0
  FROM generate_series(0, 59) i, generate_series(1, 3) h;
UPDATE cpu SET usage = usage + 1 WHERE host = 'host-2';
DELETE FROM cpu WHERE host = 'host-3' AND ts < '2024-01-01 00:05';
SQL
n=""
for _ in $(seq 1 60); do
  n="$(q -c "$DIFF")"
  [[ "$n" == 0 ]] && break
  sleep 0.5
done
echo "PostgreSQL $v: rows by which the sink differs from its query, without a flush: $n"
[[ "$n" == 0 ]]
q -c "SELECT flownode.flush_flow('cpu_1m')" >/dev/null
[[ "$(q -c "$DIFF")" == 0 ]]
echo "PostgreSQL $v: flow cpu_1m converged and exact after flush_flow; sink rows: $(q -c 'SELECT count(*) FROM cpu_1m')"
q -c "SELECT flownode.drop_flow('cpu_1m')" -c "DROP EXTENSION flownode" >/dev/null
