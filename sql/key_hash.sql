-- flownode.key_hash: the hash naming a group in a key mark (docs/internals.md §3,
-- *Key marks*). Every two values GROUP BY puts in one group must hash alike, or a
-- refresh of the marked hashes would recompute a group from part of its rows.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS flownode;
RESET client_min_messages;
SET timezone = 'UTC';

-- values equal under their type's equality, in one group, with one hash
SELECT flownode.key_hash(1.0::numeric) = flownode.key_hash(1.00::numeric) AS numeric_scale,
       flownode.key_hash('-0'::float8) = flownode.key_hash('0'::float8) AS float_zero,
       flownode.key_hash('NaN'::float8) = flownode.key_hash('-NaN'::float8) AS float_nan,
       flownode.key_hash('2024-01-01 00:00+02'::timestamptz)
         = flownode.key_hash('2023-12-31 22:00+00'::timestamptz) AS same_instant,
       flownode.key_hash(ARRAY[1.0, 2]::numeric[]) = flownode.key_hash(ARRAY[1, 2.00]::numeric[]) AS arrays;

-- NULLs group together: one hash; column order matters; types of one value agree
SELECT flownode.key_hash(NULL::int) = flownode.key_hash(NULL::int) AS nulls_alike,
       flownode.key_hash(NULL::int) IS NOT NULL AS null_hashes,
       flownode.key_hash(1, NULL::int) <> flownode.key_hash(NULL::int, 1) AS order_matters,
       flownode.key_hash(1, 2) <> flownode.key_hash(2, 1) AS order_matters_2,
       flownode.key_hash('a'::text, 'b'::text) <> flownode.key_hash('ab'::text, ''::text) AS no_concat;

-- Over a table: every group of GROUP BY has exactly one hash (the property the
-- refresh relies on), with NULL keys, numerics of many scales and signed zeros.
CREATE TABLE kh (a numeric, b float8, c text, d int);
INSERT INTO kh
SELECT CASE WHEN i % 7 = 0 THEN NULL ELSE round((i % 5)::numeric, i % 3) END,
       CASE WHEN i % 4 = 0 THEN '-0'::float8 WHEN i % 4 = 1 THEN 0 ELSE i % 3 END,
       CASE WHEN i % 6 = 0 THEN NULL ELSE 'k' || (i % 4) END,
       CASE WHEN i % 9 = 0 THEN NULL ELSE i % 2 END
FROM generate_series(1, 2000) i;
SELECT count(*) AS groups, bool_and(hashes = 1) AS one_hash_per_group
FROM (SELECT count(DISTINCT flownode.key_hash(a, b, c, d)) AS hashes FROM kh GROUP BY a, b, c, d) g;
-- and distinct groups rarely share one (64 bits)
SELECT count(DISTINCT flownode.key_hash(a, b, c, d)) = count(DISTINCT (a, b, c, d)) AS distinct_groups_distinct_hashes
FROM (SELECT DISTINCT a, b, c, d FROM kh) g;

-- IMMUTABLE: an index on (key_hash(keys), time) finds a window's rows of a few groups
CREATE TABLE kr (ts timestamptz NOT NULL, dev int, v float8);
INSERT INTO kr SELECT '2024-01-01'::timestamptz + i * interval '1 minute', i % 50, i FROM generate_series(1, 20000) i;
CREATE INDEX ON kr (flownode.key_hash(dev), ts);
ANALYZE kr;
PREPARE groups_of(bigint[]) AS
SELECT dev, count(*) FROM kr
 WHERE flownode.key_hash(dev) = ANY ($1) AND ts >= '2024-01-02' AND ts < '2024-01-03'
 GROUP BY dev;
SET plan_cache_mode = force_generic_plan;
EXPLAIN (COSTS OFF) EXECUTE groups_of(ARRAY[flownode.key_hash(7)]);
RESET plan_cache_mode;
SELECT dev, count(*) FROM kr
 WHERE flownode.key_hash(dev) = ANY (ARRAY[flownode.key_hash(7)])
   AND ts >= '2024-01-02' AND ts < '2024-01-03'
 GROUP BY dev;

-- a type without a hash opclass names no group; a VARIADIC array is refused
SELECT flownode.key_hash(point(1, 2));
SELECT flownode.key_hash(VARIADIC ARRAY[1, 2]);

DROP TABLE kh, kr;
