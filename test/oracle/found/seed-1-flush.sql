-- flownode oracle: seed 1, failure flush of flow f1 at step final check
-- shrunk to 6 steps (42 runs). Reproduce the case:
--   test/oracle/oracle.pl --seed 1 --cases 1
-- or run this script as a superuser with psql -X -f on a server with
-- shared_preload_libraries = 'flownode' (\! lines need pg_ctl, pg_dump, PGDATA).
-- Database names below are those of the oracle's run.
\set VERBOSITY verbose
SET timezone = 'UTC';

-- [0] extensions
CREATE EXTENSION flownode;
CREATE EXTENSION hll;
CREATE EXTENSION tdigest;


-- [1] source table
CREATE TABLE src (id bigint NOT NULL, t timestamp NOT NULL, host text, k int, v int, f float8, b bool, x int, PRIMARY KEY (id));
CREATE INDEX ON src (t);
CREATE INDEX ON src (k);


-- [2] dimension table
CREATE TABLE dim (dk int, host text, region text, active bool);
INSERT INTO dim VALUES (0, 'h0', 'r3', true), (3, 'h1', 'r2', true), (4, 'h1', 'r3', true), (5, NULL, 'r3', true), (6, 'h3', 'r3', true), (8, 'h0', 'r1', false), (9, NULL, 'r2', true);


-- [3] create_flow f1 (copy)
SELECT flownode.create_flow('f1',
  'f1_sink',
  $q$SELECT s.id AS id, s.t AS t, s.host AS host, s.v AS v FROM src s$q$,
  eval_interval => '2 seconds') > 0 AS created;

-- [4] insert
INSERT INTO src (id, t, host, k, v, f, b) VALUES
  (89, '2024-03-23 08:38:38', 'h4', 4, -14, -66.25, NULL),
  (90, 'infinity', 'h4', 2, -12, -71.75, true),
  (91, '2024-03-15 01:54:14', 'h3', 2, -25, 44.75, true),
  (92, '2024-03-21 22:15:32', 'h3', 0, 31, -82.5, false);

-- [5] final check
-- flush f1
SELECT flownode.flush_flow('f1') >= 0;
-- check: sink of f1 = query (expect no rows)
SELECT * FROM (
  SELECT '-' AS side, * FROM (SELECT "id" AS "id", "t" AS "t", "host" AS "host", "v" AS "v" FROM (TABLE f1_sink) a
    EXCEPT ALL SELECT "id" AS "id", "t" AS "t", "host" AS "host", "v" AS "v" FROM (SELECT s.id AS id, s.t AS t, s.host AS host, s.v AS v FROM src s) b) x
  UNION ALL
  SELECT '+' AS side, * FROM (SELECT "id" AS "id", "t" AS "t", "host" AS "host", "v" AS "v" FROM (SELECT s.id AS id, s.t AS t, s.host AS host, s.v AS v FROM src s) b
    EXCEPT ALL SELECT "id" AS "id", "t" AS "t", "host" AS "host", "v" AS "v" FROM (TABLE f1_sink) a) y) d
ORDER BY 1 LIMIT 12
-- FAILED (flush, f1):
--   after flush_flow the sink differs from the query:
--   +|90|infinity|h4|-12
