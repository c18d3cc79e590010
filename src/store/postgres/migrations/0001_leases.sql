-- Leases. One row per scope, kept after release: `token` is the last fencing token the scope
-- ever had, so the next acquisition gets token + 1 even after a release (I2).
CREATE TABLE quiesce_leases (
  scope            text PRIMARY KEY,
  token            bigint NOT NULL,
  held             boolean NOT NULL,
  run_id           text,
  system           text,
  host             text,
  pid              integer,
  pid_start        text,
  boot_id          text,
  child_pid        integer,
  child_pid_start  text,
  command          text,
  note             text,
  ttl_ms           bigint,
  acquired_at      timestamptz,  -- all times are the server's clock_timestamp() (I10)
  heartbeat_at     timestamptz,
  expires_at       timestamptz,
  expiry_reported  boolean NOT NULL DEFAULT false
);

CREATE TABLE quiesce_events (
  id       bigserial PRIMARY KEY,
  at       timestamptz NOT NULL,
  kind     text NOT NULL,
  scope    text,
  token    bigint,
  run_id   text,
  host     text,
  pid      integer,
  message  text NOT NULL,
  detail   jsonb NOT NULL DEFAULT '{}'
);
CREATE INDEX quiesce_events_scope ON quiesce_events (scope, id);
CREATE INDEX quiesce_events_at ON quiesce_events (at);

-- The wait queue: `--wait` callers take a ticket so the lease is handed over in arrival order.
CREATE TABLE quiesce_waiters (
  id           bigserial PRIMARY KEY,
  scope        text NOT NULL,
  run_id       text,
  host         text,
  pid          integer,
  enqueued_at  timestamptz NOT NULL,
  expires_at   timestamptz NOT NULL
);
CREATE INDEX quiesce_waiters_scope ON quiesce_waiters (scope, id);

-- Small key/value state written under a lease, fenced by its token (I3).
CREATE TABLE quiesce_state (
  scope       text NOT NULL,
  key         text NOT NULL,
  value       text NOT NULL,
  token       bigint NOT NULL,
  updated_at  timestamptz NOT NULL,
  PRIMARY KEY (scope, key)
);

-- Epoch milliseconds of a server timestamp: what the library reads every time back as.
CREATE FUNCTION quiesce_ms(t timestamptz) RETURNS bigint
  LANGUAGE sql STABLE PARALLEL SAFE
  AS $$ SELECT floor(extract(epoch FROM t) * 1000)::bigint $$;
