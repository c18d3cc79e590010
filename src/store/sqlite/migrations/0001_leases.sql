-- Leases. One row per scope, kept after release: `token` is the last fencing token the scope
-- ever had, so the next acquisition gets token + 1 even after a release (I2).
CREATE TABLE quiesce_leases (
  scope            TEXT PRIMARY KEY,
  token            INTEGER NOT NULL,
  held             INTEGER NOT NULL,
  run_id           TEXT,
  system           TEXT,
  host             TEXT,
  pid              INTEGER,
  pid_start        TEXT,
  boot_id          TEXT,
  child_pid        INTEGER,
  child_pid_start  TEXT,
  command          TEXT,
  note             TEXT,
  ttl_ms           INTEGER,
  acquired_at      INTEGER,  -- epoch ms, host clock (the store clock for SQLite)
  heartbeat_at     INTEGER,
  expires_at       INTEGER,
  expiry_reported  INTEGER NOT NULL DEFAULT 0
) STRICT;

CREATE TABLE quiesce_events (
  id       INTEGER PRIMARY KEY AUTOINCREMENT,
  at       INTEGER NOT NULL,
  kind     TEXT NOT NULL,
  scope    TEXT,
  token    INTEGER,
  run_id   TEXT,
  host     TEXT,
  pid      INTEGER,
  message  TEXT NOT NULL,
  detail   TEXT NOT NULL DEFAULT '{}'
) STRICT;
CREATE INDEX quiesce_events_scope ON quiesce_events (scope, id);
CREATE INDEX quiesce_events_at ON quiesce_events (at);

-- The wait queue: `--wait` callers take a ticket so the lease is handed over in arrival order
-- instead of to whoever polls at the right moment.
CREATE TABLE quiesce_waiters (
  id           INTEGER PRIMARY KEY AUTOINCREMENT,
  scope        TEXT NOT NULL,
  run_id       TEXT,
  host         TEXT,
  pid          INTEGER,
  enqueued_at  INTEGER NOT NULL,
  expires_at   INTEGER NOT NULL
) STRICT;
CREATE INDEX quiesce_waiters_scope ON quiesce_waiters (scope, id);

-- Small key/value state written under a lease, fenced by its token (I3).
CREATE TABLE quiesce_state (
  scope       TEXT NOT NULL,
  key         TEXT NOT NULL,
  value       TEXT NOT NULL,
  token       INTEGER NOT NULL,
  updated_at  INTEGER NOT NULL,
  PRIMARY KEY (scope, key)
) STRICT;
