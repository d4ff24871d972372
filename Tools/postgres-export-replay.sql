-- The rows of one LensDB table, rebuilt in PostgreSQL from the transactions
-- `logtool dump --follow --json` exported into `changes(doc jsonb)`, one
-- transaction a row: for each key, the last put or remove by LSN (and by
-- position inside its transaction) wins, and a key whose last operation is
-- a remove is gone. Keys and values stay in logtool's JSON shape,
-- {"encoding": ..., "json": ...}, the shape `logtool dump --snapshot --json`
-- prints too, so the two compare as they are.
--
-- Usage (README, "Exporting to PostgreSQL"):
--   psql "$DATABASE_URL" -v table=people -f Tools/postgres-export-replay.sql
SELECT key, value
FROM (
    SELECT DISTINCT ON (o.op->'key')
           o.op->'key' AS key, o.op->>'op' AS last_op, o.op->'value' AS value
    FROM changes
    CROSS JOIN LATERAL jsonb_array_elements(changes.doc->'operations') WITH ORDINALITY AS o(op, n)
    WHERE o.op->>'table' = :'table' AND o.op->>'op' IN ('put', 'remove')
    ORDER BY o.op->'key', (changes.doc->>'lsn')::bigint DESC, o.n DESC
) AS latest
WHERE last_op = 'put'
ORDER BY key;
