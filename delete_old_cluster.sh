#!/bin/sh

rm -rf '/work/privs/test/tap/tmp_check/t_010_dump_restore_dump_data/pgdata'
