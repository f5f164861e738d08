import { Session } from 'node:inspector/promises';

/**
 * CPU attribution while `work` runs, from the V8 sampling profiler of this process (the same data
 * as `node --cpu-prof`): self time per package (node_modules), per project folder, and for the
 * garbage collector and Node internals.
 */
interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export interface Attribution {
  totalMs: number;
  /** Share of sampled time per bucket, largest first. */
  buckets: { name: string; ms: number; share: number }[];
}

export function bucketOf(url: string, functionName: string): string {
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1]!;
  const project = /\/(lib|functions|bench)\/([^/]+)/.exec(url);
  if (project) return project[1] === 'bench' ? 'bench (store stand-in, harness)' : `${project[1]}/${project[2]!.replace(/\.ts$/, '')}`;
  if (functionName === '(garbage collector)') return 'garbage collector';
  if (functionName === '(idle)' || functionName === '(program)') return 'idle / VM';
  const internal = /^node:(?:internal\/)?([a-z_]+)/.exec(url);
  if (internal) return `node:${internal[1]}`;
  return 'node (native)';
}

export async function profileCpu(work: () => Promise<void>, intervalUs = 200): Promise<Attribution> {
  const session = new Session();
  session.connect();
  try {
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: intervalUs });
    await session.post('Profiler.start');
    await work();
    const { profile } = (await session.post('Profiler.stop')) as unknown as { profile: Profile };
    const byId = new Map(profile.nodes.map((n) => [n.id, n]));
    const parent = new Map<number, number>();
    for (const n of profile.nodes) for (const child of n.children ?? []) parent.set(child, n.id);
    const ms = new Map<string, number>();
    let total = 0;
    profile.samples.forEach((id, i) => {
      let node = byId.get(id);
      const delta = (profile.timeDeltas[i] ?? 0) / 1000;
      if (!node) return;
      // A native builtin (no script URL: Hmac, digest, runMicrotasks...) counts for its caller.
      const special = ['(garbage collector)', '(idle)', '(program)', '(root)'].includes(node.callFrame.functionName);
      while (!special && node.callFrame.url === '' && parent.has(node.id)) node = byId.get(parent.get(node.id)!)!;
      const name = bucketOf(node.callFrame.url, node.callFrame.functionName);
      // The profiler's own work when it stops is not part of the measured requests.
      if (name === 'idle / VM' || name === 'node:inspector') return;
      ms.set(name, (ms.get(name) ?? 0) + delta);
      total += delta;
    });
    const buckets = [...ms.entries()].map(([name, t]) => ({ name, ms: t, share: t / total })).sort((a, b) => b.ms - a.ms);
    return { totalMs: total, buckets };
  } finally {
    await session.post('Profiler.disable').catch(() => undefined);
    session.disconnect();
  }
}
