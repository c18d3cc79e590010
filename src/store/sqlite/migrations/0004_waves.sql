-- Rolling patch waves. One row per wave; one row per host of a wave, in wave order. Host state
-- changes are written by the wave's agent under its lease (wave:NAME), fenced by its token (I3).
CREATE TABLE quiesce_waves (
  name           TEXT PRIMARY KEY,
  host_count     INTEGER NOT NULL,
  batch_spec     TEXT NOT NULL,
  batch_size     INTEGER NOT NULL,
  failure_spec   TEXT NOT NULL,
  max_failures   INTEGER NOT NULL,
  time_window    TEXT,
  max_per_group  INTEGER,
  state          TEXT NOT NULL,
  reason         TEXT,
  token          INTEGER,
  settings       TEXT,
  created_at     INTEGER NOT NULL,
  started_at     INTEGER,
  finished_at    INTEGER,
  updated_at     INTEGER NOT NULL
) STRICT;

CREATE TABLE quiesce_wave_hosts (
  wave         TEXT NOT NULL REFERENCES quiesce_waves (name) ON DELETE CASCADE,
  host         TEXT NOT NULL,
  ordinal      INTEGER NOT NULL,
  grp          TEXT,
  state        TEXT NOT NULL,
  attempts     INTEGER NOT NULL,
  run_id       TEXT,
  token        INTEGER,
  reason       TEXT,
  detail       TEXT,
  started_at   INTEGER,
  finished_at  INTEGER,
  updated_at   INTEGER NOT NULL,
  PRIMARY KEY (wave, host)
) STRICT;
CREATE UNIQUE INDEX quiesce_wave_hosts_order ON quiesce_wave_hosts (wave, ordinal);
