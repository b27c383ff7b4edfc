-- What a restore and an upgrade leave behind, short of pg_dump itself (that is
-- test/tap/010_dump_restore.pl and 012_upgrade.pl): a flow that is not bound to its
-- tables, rows a restore adds to the durable record, and the objects of 0.1 under
-- this library (docs/operations.md "Backup and restore", docs/internals.md §9).
SET timezone = 'UTC';
CREATE TABLE r (ts timestamptz NOT NULL, host text NOT NULL, v int NOT NULL);
CREATE INDEX ON r (ts);
INSERT INTO r SELECT timestamptz '2024-03-01' + i * interval '10 minutes', 'h' || (i % 2), i
  FROM generate_series(0, 143) i;
SELECT flownode.create_flow('r_hourly', 'r_hourly',
  $$SELECT date_bin('1 hour', ts, timestamptz '2000-01-01') AS h, host, count(*) AS n, sum(v) AS s
      FROM r GROUP BY 1, 2$$,
  eval_interval => '1 hour') > 0;
-- the catalog names tables and the owner (a dump writes these columns as names)
SELECT pg_typeof(source_table), pg_typeof(sink_table), pg_typeof(owner), source_table, sink_table
  FROM flownode.flow WHERE flow_name = 'r_hourly';
-- what pg_dump writes of the extension: the flows, their ids' sequence, the record
-- (windows and key marks), the clocks
SELECT c::regclass AS dumped, cond FROM pg_extension, unnest(extconfig, extcondition) AS u(c, cond)
 WHERE extname = 'flownode' ORDER BY c::regclass::text;

-- Rows a restore adds to the durable record reach the flow's worker, which read the
-- record when it started (the flush waits for that): a window the sink got wrong
-- meanwhile, recorded by SQL, is refreshed by the next flush.
SELECT flownode.flush_flow('r_hourly');
UPDATE r_hourly SET n = 0 WHERE h = '2024-03-01 05:00';
SELECT flow_diff('r_hourly');
INSERT INTO flownode.pending
SELECT flow_id, int8multirange(int8range(
         ((extract(epoch FROM timestamptz '2024-03-01 05:00') - 946684800) * 1000000)::int8,
         ((extract(epoch FROM timestamptz '2024-03-01 06:00') - 946684800) * 1000000)::int8))
  FROM flownode.flow WHERE flow_name = 'r_hourly';
SELECT flownode.flush_flow('r_hourly');
SELECT flow_diff('r_hourly');

-- A flow not bound to this database's tables (what a data-only restore leaves: no
-- triggers of its own, no worker): the view says so, flush_flow refuses with the
-- step, and refresh_flow binds it and recomputes it, writes made meanwhile included.
-- read_flow refuses it too: it returned the sink as restored, without those writes.
DELETE FROM flownode.flow_binding WHERE flow_id = (SELECT flow_id FROM flownode.flow WHERE flow_name = 'r_hourly');
SELECT state, dirty_windows, worker_pid IS NULL AS no_worker FROM flownode.flows WHERE flow_name = 'r_hourly';
SELECT flownode.flush_flow('r_hourly');
INSERT INTO r VALUES ('2024-03-01 07:05', 'h0', 1000);
DELETE FROM r WHERE ts = '2024-03-01 08:00';
SELECT flow_diff('r_hourly');
SELECT count(*) FROM flownode.read_flow(NULL::r_hourly);
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT flownode.refresh_flow('r_hourly');
ROLLBACK;
SELECT flownode.refresh_flow('r_hourly');
SELECT flow_diff('r_hourly');
SELECT state <> 'restored' AS bound, marking_enabled FROM flownode.flows WHERE flow_name = 'r_hourly';
INSERT INTO r VALUES ('2024-03-02 00:05', 'h1', 5);
SELECT flownode.flush_flow('r_hourly');
SELECT flow_diff('r_hourly');
SELECT flownode.drop_flow('r_hourly');

-- A one-row flow (no GROUP BY, no time column) bound with its sink empty (a dump
-- without the sink's rows): binding records its one mark for the worker to fill it.
-- Before the binding knew that such a flow has no time column to read, this crashed
-- the server (the oracle's seed 1362488457).
SELECT flownode.create_flow('r_total', 'r_total', $$SELECT count(*) AS n, sum(v) AS s FROM r$$,
  eval_interval => '1 hour') > 0 AS created;
DELETE FROM flownode.flow_binding WHERE flow_id = (SELECT flow_id FROM flownode.flow WHERE flow_name = 'r_total');
DELETE FROM r_total;
SELECT state FROM flownode.flows WHERE flow_name = 'r_total';
SELECT flownode.refresh_flow('r_total');
SELECT state <> 'restored' AS bound FROM flownode.flows WHERE flow_name = 'r_total';
SELECT flow_diff('r_total'), (SELECT count(*) FROM r_total) AS sink_rows;
SELECT flownode.drop_flow('r_total');
DROP TABLE r_total;
DROP TABLE r, r_hourly;

-- The objects of 0.1 under this library: everything but marking and DDL refuses, with
-- the update as the hint; ALTER EXTENSION flownode UPDATE brings them to 0.3.
-- (the sinks that earlier tests' keyed flows left have the index of key hashes
-- create_flow gave them: it goes with the extension, without CASCADE)
DROP EXTENSION flownode;
SELECT count(*) AS key_hash_indexes FROM pg_index WHERE indexprs::text LIKE '%key_hash%';
CREATE EXTENSION flownode VERSION '0.1';
SELECT * FROM flownode.flow_status();
SELECT flownode.create_flow('x', 'x', 'SELECT 1 AS one GROUP BY 1', eval_interval => '1 hour');
SELECT flownode.drop_flow('x');
ALTER EXTENSION flownode UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'flownode';
SELECT count(*) FROM flownode.flows;
