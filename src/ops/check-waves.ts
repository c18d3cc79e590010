import { waveScope } from "../domain/wave-input.js";
import { HostState, WaveState } from "../domain/wave-state.js";
import type { CheckCollector, CheckFinding } from "./check.js";

/**
 * Waves waiting for a person (WARNING): hosts whose patch may or may not have landed, and
 * halted waves. A crashed agent shows up as its expired `wave:NAME` lease (leases collector).
 */
export const waveCollector: CheckCollector = {
  name: "waves",
  async collect({ store }) {
    const { waves } = await store.waves.listWaves();
    const findings: CheckFinding[] = [];
    let halted = 0;
    let hostsInReview = 0;
    for (const { wave, counts } of waves) {
      const review = counts[HostState.NEEDS_REVIEW] ?? 0;
      hostsInReview += review;
      if (review > 0)
        findings.push({
          severity: "warning",
          code: "wave_needs_review",
          subject: waveScope(wave.name),
          message: `wave ${wave.name}: ${review} host(s) need review (whether their patch landed is unknown); see quiesce wave status ${wave.name}`,
        });
      if (wave.state === WaveState.HALTED) {
        halted++;
        findings.push({
          severity: "warning",
          code: "wave_halted",
          subject: waveScope(wave.name),
          message: `wave ${wave.name} halted: ${wave.reason ?? "no reason recorded"}; see quiesce wave status ${wave.name}`,
        });
      }
    }
    return {
      findings,
      metrics: [
        {
          perf: "waves_halted",
          prom: "waves_halted",
          help: "Waves halted until someone looks (budget, health gate, review)",
          value: halted,
        },
        {
          perf: "wave_hosts_needing_review",
          prom: "wave_hosts_needs_review",
          help: "Wave hosts whose patch may or may not have landed",
          value: hostsInReview,
        },
      ],
    };
  },
};
