-- A fenced write locks its lease row FOR KEY SHARE (it was FOR SHARE): that lock conflicts
-- only with FOR UPDATE, which PostgreSQL takes for a DELETE, an explicit FOR UPDATE, and an
-- UPDATE that changes a column of a unique index. This index makes `token` and `held` such
-- columns, so every change of owner (a takeover, an acquisition: token + 1) and every release
-- (held = false) waits for the fenced writes in flight, as before. A renewal changes neither:
-- it no longer waits for them, where a stream of overlapping FOR SHARE locks from the holder's
-- own writes could hold it back indefinitely (PostgreSQL lets a compatible lock in ahead of a
-- queued UPDATE). `scope` alone is already unique; the index exists for the lock it implies.
CREATE UNIQUE INDEX quiesce_leases_fence ON quiesce_leases (scope, token, held);
