-- Refresh cost follows rows, not windows: the two pathologies as
-- correctness tests of bounded size. Nothing here times anything: a refresh that
-- walked every empty window, or refreshed far more windows than the rows touched,
-- shows up as a count out of bounds or as the statement_timeout guard firing.
SET timezone = 'UTC';
SET statement_timeout = '300s';

-- 1. One sparse transaction: 20,000 rows a week apart from year 1 on (383 years),
-- into a per-minute flow. The transaction's set coalesces into ranges that span
-- about 200 million empty windows; a refresh must visit only the occupied ones.
CREATE TABLE sparse (ts timestamptz NOT NULL, v int);
CREATE INDEX ON sparse (ts);
SELECT flownode.create_flow('sparse_m', 'sparse_minutely',
  $$SELECT date_bin('1 minute', ts, timestamptz '2000-01-01') AS m, count(*) AS n, sum(v) AS s
    FROM sparse GROUP BY 1$$, eval_interval => '1 day') > 0;
INSERT INTO sparse SELECT timestamptz '0001-01-01' + i * interval '7 days', i
  FROM generate_series(0, 19999) i;
-- the flows view stays truthful: the pending windows cover every row
SELECT dirty_windows >= 20000 AS pending_cover_rows FROM flownode.flows WHERE flow_name = 'sparse_m';
-- (the windows of the ranges it took, empty ones included: counted, not visited)
SELECT flownode.flush_flow('sparse_m') >= 20000 AS refreshed, flow_diff('sparse_m');
SELECT dirty_windows FROM flownode.flows WHERE flow_name = 'sparse_m';
SELECT count(*) AS sink_rows FROM sparse_minutely;
-- and it keeps up: a fresh row after the backlog
INSERT INTO sparse VALUES ('2024-06-01 12:00:30+00', 1);
SELECT flownode.flush_flow('sparse_m') AS refreshed_after, flow_diff('sparse_m');

-- 2. Scattered late rows: 1,000 rows at random minutes of a year already in the sink
-- (100,000 rows), in one transaction. The refresh takes at most two windows per late
-- row, not the gaps between them (with a transaction's set of 256 ranges, as
-- flownode once kept, it took about 250 times more).
CREATE TABLE dense (ts timestamptz NOT NULL, host text, v int);
CREATE INDEX ON dense (ts);
INSERT INTO dense SELECT timestamptz '2024-01-01' + i * interval '5 minutes 15 seconds', 'h' || (i % 4), i
  FROM generate_series(0, 99999) i;
SELECT flownode.create_flow('dense_m', 'dense_minutely',
  $$SELECT date_bin('1 minute', ts, timestamptz '2000-01-01') AS m, host, count(*) AS n, sum(v) AS s
    FROM dense GROUP BY 1, 2$$, eval_interval => '1 day') > 0;
SELECT setseed(0.42);
INSERT INTO dense SELECT timestamptz '2024-01-01' + floor(random() * 525000) * interval '1 minute'
  + interval '20 seconds', 'late', 1 FROM generate_series(1, 1000);
SELECT dirty_windows BETWEEN 900 AND 2000 AS pending_close_to_rows FROM flownode.flows WHERE flow_name = 'dense_m';
SELECT flownode.flush_flow('dense_m') BETWEEN 900 AND 2000 AS refreshed_close_to_rows, flow_diff('dense_m');
-- late deletes too: the sink loses exactly those groups
DELETE FROM dense WHERE host = 'late' AND ts < '2024-07-01';
SELECT flownode.flush_flow('dense_m') BETWEEN 300 AND 2000 AS refreshed_close_to_rows, flow_diff('dense_m');

SELECT flownode.drop_flow(flow_name) FROM flownode.flows ORDER BY flow_name;
