-- Grant at release: a place in line carries everything an acquisition writes, so that the
-- release it waits for can hand it the lease in the releasing commit (one fsync per contended
-- handoff, not a release and then an acquisition). A ticket without lease_ttl_ms (one taken
-- before this migration) is never granted: its waiter is woken and acquires by itself.
ALTER TABLE quiesce_waiters ADD COLUMN system TEXT;
ALTER TABLE quiesce_waiters ADD COLUMN pid_start TEXT;
ALTER TABLE quiesce_waiters ADD COLUMN boot_id TEXT;
ALTER TABLE quiesce_waiters ADD COLUMN child_pid INTEGER;
ALTER TABLE quiesce_waiters ADD COLUMN child_pid_start TEXT;
ALTER TABLE quiesce_waiters ADD COLUMN command TEXT;
ALTER TABLE quiesce_waiters ADD COLUMN note TEXT;
ALTER TABLE quiesce_waiters ADD COLUMN lease_ttl_ms INTEGER;
-- The ticket the current lease was granted to, while that grant holds (null otherwise): how
-- its waiter recognises the lease as its own, and how a waiter that left hands it back.
ALTER TABLE quiesce_leases ADD COLUMN granted_ticket INTEGER;
CREATE INDEX quiesce_leases_granted ON quiesce_leases (granted_ticket) WHERE granted_ticket IS NOT NULL;
