-- The side-effect journal and the maintenance-window runtime records.
-- JSON is stored as text, never jsonb: effect checksums are over the exact text written.
-- Times are the server's clock_timestamp() (I10).

-- One row per runtime id, persisted at every transition. The req_* columns are a pending
-- maintenance request from another process; only that process writes them, the runtime clears them.
CREATE TABLE quiesce_runtimes (
  runtime_id          text PRIMARY KEY,
  scope               text NOT NULL,
  state               text NOT NULL,
  version             bigint NOT NULL,
  incarnation         text NOT NULL,
  token               bigint NOT NULL,
  host                text,
  pid                 integer,
  maintenance_id      text,
  accepting_work      boolean NOT NULL,
  active_runs         integer NOT NULL,
  started_at          timestamptz NOT NULL,
  deadline_at         timestamptz,
  policy              text NOT NULL,
  note                text,
  review_reason       text,
  updated_at          timestamptz NOT NULL,
  req_maintenance_id  text,
  req_drain_ms        bigint,
  req_at              timestamptz,
  req_by              text
);

-- A run belongs to a runtime and writes under its lease (scope); seq counts its writes.
CREATE TABLE quiesce_runs (
  run_id         text PRIMARY KEY,
  runtime_id     text NOT NULL,
  scope          text NOT NULL,
  state          text NOT NULL,
  seq            bigint NOT NULL,
  token          bigint NOT NULL,
  checkpoint     text,
  review_reason  text,
  created_at     timestamptz NOT NULL,
  updated_at     timestamptz NOT NULL
);
CREATE INDEX quiesce_runs_runtime ON quiesce_runs (runtime_id, state);
CREATE INDEX quiesce_runs_state ON quiesce_runs (state);

-- One row per idempotency key within a run: a key planned twice is refused by the key.
CREATE TABLE quiesce_effects (
  run_id         text NOT NULL REFERENCES quiesce_runs (run_id) ON DELETE CASCADE,
  key            text NOT NULL,
  ordinal        integer NOT NULL,
  provider       text NOT NULL,
  state          text NOT NULL,
  prev_state     text,
  seq            bigint NOT NULL,
  attempt        integer NOT NULL,
  token          bigint NOT NULL,
  request        text NOT NULL,
  request_id     text,
  result         text,
  context        text,
  review_reason  text,
  checksum       text NOT NULL,
  created_at     timestamptz NOT NULL,
  updated_at     timestamptz NOT NULL,
  PRIMARY KEY (run_id, key)
);
