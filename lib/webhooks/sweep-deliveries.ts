import { mapAtMost } from '../map-at-most.js';
import { MODES, type Mode } from '../mode.js';
import { sweepEndpoint, type SlotDeps, type SweepResult } from './delivery-slots.js';
import type { WebhookDeliveryStore, WebhookEndpointStore } from './ports.js';

/**
 * The delivery sweeper (functions/sweep-webhook-deliveries.ts, run by an EventBridge Scheduler
 * schedule; locally by the engines on an interval): every endpoint of every company and mode is
 * mended as delivery-slots.ts `sweepEndpoint` says: slots held by deliveries that ended are given
 * back, deliveries promoted but never queued are queued, and waiting deliveries are queued into
 * free slots. So no delivery says `pending` for 30 days because a process stopped between two of
 * its writes (the fan-out puts every job on its endpoint's waiting list before it starts the
 * record, so a started record is always on a list or in a lane).
 *
 * Deleted endpoints are not visited: their waiting jobs would find the endpoint gone, and expire
 * with their records (`ttl`). An endpoint that fails to sweep is counted and the others go on.
 */
export interface SweepDeps extends SlotDeps {
  companies: { list(): Promise<{ companyId: string }[]> };
  endpoints: Pick<WebhookEndpointStore, 'list'>;
  deliveries: Pick<WebhookDeliveryStore, 'get'>;
  /** Told of each endpoint that could not be swept, with why (the caller logs it: a count alone says nothing to act on). */
  onEndpointFailed?: (failure: { mode: Mode; endpointId: string; error: unknown }) => void;
}

export interface SweepTotals extends SweepResult {
  endpoints: number;
  failed: number;
}

/** How many endpoints are swept at once. */
const SWEEP_CONCURRENCY = 8;

export async function sweepDeliveries(deps: SweepDeps): Promise<SweepTotals> {
  const totals: SweepTotals = { endpoints: 0, failed: 0, released: 0, requeued: 0, filled: 0 };
  const companies = await deps.companies.list();
  const endpoints = (
    await Promise.all(
      companies.flatMap(({ companyId }) =>
        MODES.map(async (mode) => (await deps.endpoints.list(mode, companyId)).map((e) => ({ mode, endpointId: e.endpointId }))),
      ),
    )
  ).flat();
  await mapAtMost(endpoints, SWEEP_CONCURRENCY, async ({ mode, endpointId }) => {
    totals.endpoints++;
    try {
      const result = await sweepEndpoint(deps, mode, endpointId);
      totals.released += result.released;
      totals.requeued += result.requeued;
      totals.filled += result.filled;
    } catch (error) {
      totals.failed++;
      deps.onEndpointFailed?.({ mode, endpointId, error });
    }
  });
  return totals;
}
