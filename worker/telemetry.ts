import type { TelemetryOptions } from '@temporalio/worker';

/**
 * The Temporal SDK's own worker metrics (task slots, poll and schedule-to-start latencies, sticky cache, activity
 * and workflow task outcomes), served by the SDK's Prometheus exporter at `http://<address>/metrics`.
 * Off unless WORKER_METRICS_ADDRESS is set: two workers on one host would fight over a fixed port.
 */
export function workerTelemetry(metricsAddress: string | undefined): { telemetryOptions?: TelemetryOptions } {
  if (!metricsAddress) return {};
  return {
    telemetryOptions: {
      metrics: { prometheus: { bindAddress: metricsAddress, countersTotalSuffix: true, useSecondsForDurations: true } },
    },
  };
}
