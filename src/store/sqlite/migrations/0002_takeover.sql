-- Takeover with proof of death: a lease taken over keeps who held it before and the evidence
-- that they were gone (JSON), until it is released.
ALTER TABLE quiesce_leases ADD COLUMN prev_owner TEXT;
ALTER TABLE quiesce_leases ADD COLUMN takeover_evidence TEXT;

-- The run-activity probe asks "when did run R last record anything?".
CREATE INDEX quiesce_events_run ON quiesce_events (run_id, id);
