-- Grant at release: a place in line carries everything an acquisition writes, so that the
-- release it waits for can hand it the lease in the releasing commit (one flushed commit per
-- contended handoff instead of two). A ticket without lease_ttl_ms (one taken before this
-- migration) is never granted: its waiter is woken and acquires by itself.
ALTER TABLE quiesce_waiters
  ADD COLUMN system           text,
  ADD COLUMN pid_start        text,
  ADD COLUMN boot_id          text,
  ADD COLUMN child_pid        integer,
  ADD COLUMN child_pid_start  text,
  ADD COLUMN command          text,
  ADD COLUMN note             text,
  ADD COLUMN lease_ttl_ms     bigint,
  -- The TTL in words for the grant's lease.acquired message, written by the waiter:
  -- quiesce_duration() in the releasing statement cost it a third of a millisecond.
  ADD COLUMN lease_ttl_words  text;
-- The ticket the current lease was granted to, while that grant holds (null otherwise): how
-- its waiter recognises the lease as its own, and how a waiter that left hands it back.
ALTER TABLE quiesce_leases ADD COLUMN granted_ticket bigint;
CREATE INDEX quiesce_leases_granted ON quiesce_leases (granted_ticket) WHERE granted_ticket IS NOT NULL;
