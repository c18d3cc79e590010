-- The side-effect journal and the maintenance-window runtime records.
-- JSON is stored as text (the exact text written: effect checksums are over it).

-- One row per runtime id, persisted at every transition. The req_* columns are a pending
-- maintenance request from another process; only that process writes them, the runtime clears them.
CREATE TABLE quiesce_runtimes (
  runtime_id          TEXT PRIMARY KEY,
  scope               TEXT NOT NULL,
  state               TEXT NOT NULL,
  version             INTEGER NOT NULL,
  incarnation         TEXT NOT NULL,
  token               INTEGER NOT NULL,
  host                TEXT,
  pid                 INTEGER,
  maintenance_id      TEXT,
  accepting_work      INTEGER NOT NULL,
  active_runs         INTEGER NOT NULL,
  started_at          INTEGER NOT NULL,
  deadline_at         INTEGER,
  policy              TEXT NOT NULL,
  note                TEXT,
  review_reason       TEXT,
  updated_at          INTEGER NOT NULL,
  req_maintenance_id  TEXT,
  req_drain_ms        INTEGER,
  req_at              INTEGER,
  req_by              TEXT
) STRICT;

-- A run belongs to a runtime and writes under its lease (scope); seq counts its writes.
CREATE TABLE quiesce_runs (
  run_id         TEXT PRIMARY KEY,
  runtime_id     TEXT NOT NULL,
  scope          TEXT NOT NULL,
  state          TEXT NOT NULL,
  seq            INTEGER NOT NULL,
  token          INTEGER NOT NULL,
  checkpoint     TEXT,
  review_reason  TEXT,
  created_at     INTEGER NOT NULL,
  updated_at     INTEGER NOT NULL
) STRICT;
CREATE INDEX quiesce_runs_runtime ON quiesce_runs (runtime_id, state);
CREATE INDEX quiesce_runs_state ON quiesce_runs (state);

-- One row per idempotency key within a run: a key planned twice is refused by the key.
CREATE TABLE quiesce_effects (
  run_id         TEXT NOT NULL REFERENCES quiesce_runs (run_id) ON DELETE CASCADE,
  key            TEXT NOT NULL,
  ordinal        INTEGER NOT NULL,
  provider       TEXT NOT NULL,
  state          TEXT NOT NULL,
  prev_state     TEXT,
  seq            INTEGER NOT NULL,
  attempt        INTEGER NOT NULL,
  token          INTEGER NOT NULL,
  request        TEXT NOT NULL,
  request_id     TEXT,
  result         TEXT,
  context        TEXT,
  review_reason  TEXT,
  checksum       TEXT NOT NULL,
  created_at     INTEGER NOT NULL,
  updated_at     INTEGER NOT NULL,
  PRIMARY KEY (run_id, key)
) STRICT;
