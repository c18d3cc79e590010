-- Rolling patch waves. One row per wave; one row per host of a wave, in wave order. Host state
-- changes are written by the wave's agent under its lease (wave:NAME), fenced by its token (I3).
-- Times are the server's clock_timestamp() (I10).
CREATE TABLE quiesce_waves (
  name           text PRIMARY KEY,
  host_count     integer NOT NULL,
  batch_spec     text NOT NULL,
  batch_size     integer NOT NULL,
  failure_spec   text NOT NULL,
  max_failures   integer NOT NULL,
  time_window    text,
  max_per_group  integer,
  state          text NOT NULL,
  reason         text,
  token          bigint,
  settings       text,
  created_at     timestamptz NOT NULL,
  started_at     timestamptz,
  finished_at    timestamptz,
  updated_at     timestamptz NOT NULL
);

CREATE TABLE quiesce_wave_hosts (
  wave         text NOT NULL REFERENCES quiesce_waves (name) ON DELETE CASCADE,
  host         text NOT NULL,
  ordinal      integer NOT NULL,
  grp          text,
  state        text NOT NULL,
  attempts     integer NOT NULL,
  run_id       text,
  token        bigint,
  reason       text,
  detail       text,
  started_at   timestamptz,
  finished_at  timestamptz,
  updated_at   timestamptz NOT NULL,
  PRIMARY KEY (wave, host)
);
CREATE UNIQUE INDEX quiesce_wave_hosts_order ON quiesce_wave_hosts (wave, ordinal);
