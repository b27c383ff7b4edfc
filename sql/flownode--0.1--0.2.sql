-- flownode 0.1 -> 0.2 (ALTER EXTENSION flownode UPDATE): brings a 0.1 installation
-- to what flownode--0.2.sql creates, keeping its flows, their ids and pending work.
\echo Use "ALTER EXTENSION flownode UPDATE" to load this file. \quit
