#!/usr/bin/env bash
# Makes a private copy of the PostgreSQL 15 installation under DIR and prints the
# path of its pg_config. PostgreSQL finds its share and lib directories relative to
# its binaries, so the copy works where it lands; with PG_CONFIG set to it, `make
# install` and test/run_all.sh install and test there, and two checkouts can build
# and test side by side without replacing each other's flownode.so.
#   PG_CONFIG=$(bash test/private_pg.sh /opt/pg-mine) bash test/run_all.sh
set -euo pipefail
dir="${1:?usage: private_pg.sh DIR}"
major=15
if [[ ! -x "$dir/usr/lib/postgresql/$major/bin/pg_config" ]]; then
  mkdir -p "$dir/usr/lib/postgresql" "$dir/usr/share/postgresql" "$dir/usr/include"
  cp -a "/usr/lib/postgresql/$major" "$dir/usr/lib/postgresql/"
  cp -a "/usr/share/postgresql/$major" "$dir/usr/share/postgresql/"
  cp -a /usr/include/postgresql "$dir/usr/include/"
fi
echo "$dir/usr/lib/postgresql/$major/bin/pg_config"
