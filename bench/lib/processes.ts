import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Runs one bundled handler in a fresh Node process (bench/lib/cold-child.mjs) and returns what
 * the child measured. The child gets a clean environment: PATH, the variables the CDK stack sets
 * on every function (infra/contract/stack-config.ts functionEnvironment, incl. NODE_OPTIONS
 * --enable-source-maps) and the local stores' endpoints and dummy credentials.
 */
export interface ChildInvocation {
  statusCode: number;
  ms: number;
  maxRssMb: number;
  body?: string;
}

export interface ChildResult {
  loadMs: number;
  firstInvokeMs: number;
  coldMs: number;
  processStartToFirstResponseMs: number;
  invocations: ChildInvocation[];
  heapUsedMb: number;
  /** Wall time of the whole child process, spawn to exit, seen from the parent. */
  wallMs: number;
}

const CHILD = join(import.meta.dirname, 'cold-child.mjs');

export async function runChild(
  bundleFile: string,
  events: unknown[],
  env: Record<string, string>,
  scratchDir: string,
  tag: string,
): Promise<ChildResult> {
  const eventsFile = join(scratchDir, `events-${tag}.json`);
  writeFileSync(eventsFile, JSON.stringify(events));
  const started = performance.now();
  const { code, stdout, stderr } = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    // Through a shell that forks it, not spawned directly: Linux keeps a process's peak RSS across exec
    // (getrusage(2): ru_maxrss), and a child spawned straight from this process starts from this process's
    // own, so every child read this bench's RSS whenever it was the larger (117.6 MB for every bundle in one
    // run, against 68–70 MB for get-case before). The shell's child starts from the shell's (`; exit $?`: a lone
    // command the shell would exec in its own place instead).
    const child = spawn('/bin/sh', ['-c', '"$@"; exit $?', 'sh', process.execPath, CHILD, bundleFile, eventsFile], {
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.once('error', reject);
    child.once('close', (exitCode) => resolve({ code: exitCode, stdout: out, stderr: err }));
  });
  const wallMs = performance.now() - started;
  const line = stdout.split('\n').find((l) => l.startsWith('BENCH_RESULT '));
  if (code !== 0 || !line) throw new Error(`child for ${bundleFile} failed (exit ${code}): ${stderr.slice(0, 1500)} ${stdout.slice(-500)}`);
  return { ...(JSON.parse(line.slice('BENCH_RESULT '.length)) as Omit<ChildResult, 'wallMs'>), wallMs };
}
