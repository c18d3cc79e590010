-- A duration in the words formatDuration (src/domain/duration.ts) uses: 950ms, 1.25s, 12.3s,
-- 4m05s, 2h10m, 3d4h; halves round up. For messages written by SQL (lease.expired), so that
-- they read as the SQLite store's do; tests/contract/pg-duration-words.test.ts compares the two.
CREATE FUNCTION quiesce_duration(ms bigint) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN ms < 0 THEN '-' ELSE '' END || CASE
    WHEN a < 1000 THEN a || 'ms'
    WHEN a < 10000 THEN regexp_replace((round(a / 10.0) / 100)::numeric(12, 2)::text, '\.?0+$', '') || 's'
    WHEN a < 60000 THEN regexp_replace((round(a / 100.0) / 10)::numeric(12, 1)::text, '\.?0+$', '') || 's'
    WHEN a < 3600000 THEN (a / 60000) || 'm' || lpad(((a % 60000) / 1000)::text, 2, '0') || 's'
    WHEN a < 86400000 THEN (a / 3600000) || 'h' || lpad(((a % 3600000) / 60000)::text, 2, '0') || 'm'
    ELSE (a / 86400000) || 'd' || ((a % 86400000) / 3600000) || 'h'
  END
  FROM (SELECT abs(ms) AS a) AS d
$$;
