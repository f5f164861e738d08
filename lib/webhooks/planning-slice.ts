import * as z from 'zod';
import { MODES, type Mode } from '../mode.js';

/**
 * What the fan-out (the table's stream) hands the planning worker: one company-and-mode's events
 * of one stream batch (docs/webhooks-design.md, "Planning: at once or on the fair queue"). A slice is one message
 * on its mode's planning queue, an SQS fair queue whose MessageGroupId is the slice's `tenant`, so a
 * company's burst is planned beside, never ahead of, another company's event.
 */
export interface PlanningSlice {
  mode: Mode;
  companyId: string;
  events: { eventId: string; eventType: string; createdAt: string }[];
}

/**
 * Events per slice, at most: a stream batch's (100). A slice's JSON stays far below SQS's message
 * size (about 120 bytes an event: 12 KB), and its planning (every matching endpoint's delivery
 * record started, each endpoint filled once) is what one message costs the worker.
 */
export const MAX_EVENTS_PER_SLICE = 100;

const text = z.string().min(1).max(200);

/** The planning message's body, checked by the worker before anything is planned (never trusted as typed). */
export const planningSliceSchema = z.object({
  v: z.literal(1),
  mode: z.enum(MODES),
  companyId: text,
  events: z
    .array(z.object({ eventId: text, eventType: text, createdAt: text }))
    .min(1)
    .max(MAX_EVENTS_PER_SLICE),
});
export type PlanningMessage = z.infer<typeof planningSliceSchema>;

/**
 * The tenant a slice belongs to on the fair queue (its MessageGroupId): the mode and the company,
 * so a test key's burst is another tenant than its own company's live events. SQS allows 128
 * characters; ids here are far shorter.
 */
export function tenantOf(slice: Pick<PlanningSlice, 'mode' | 'companyId'>): string {
  return `${slice.mode}#${slice.companyId}`;
}
