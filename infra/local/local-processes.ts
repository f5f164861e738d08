import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

/**
 * The processes of the local stack as the operating system sees them. DynamoDB Local is a Java
 * child process: if node dies hard (SIGKILL, a crash of the terminal), Java stays and keeps its
 * port and its database files. So `startDynamoLocal` records the Java pid in the data directory,
 * and the next `npm start` over the same data stops a DynamoDB Local of ours whose owner is gone,
 * instead of blaming "another npm start". Pids are checked against the process's command line
 * before anything is signalled, so a reused pid is never killed.
 */
export const DYNAMO_RECORD_FILE = 'dynamodb-local.pid.json';

export interface DynamoLocalRecord {
  /** The Java process running DynamoDB Local. */
  javaPid: number;
  /** The node process that started it (npm start). */
  ownerPid: number;
  port: number;
  /** Absolute database directory, as passed to DynamoDB Local's -dbPath. */
  dbPath: string;
  startedAt: string;
}

export function recordDynamoLocal(record: DynamoLocalRecord): void {
  writeFileSync(join(record.dbPath, DYNAMO_RECORD_FILE), `${JSON.stringify(record)}\n`, { mode: 0o600 });
}

export function readDynamoLocalRecord(dbPath: string): DynamoLocalRecord | undefined {
  try {
    const parsed = JSON.parse(readFileSync(join(resolve(dbPath), DYNAMO_RECORD_FILE), 'utf8')) as Partial<DynamoLocalRecord>;
    if (
      ![parsed.javaPid, parsed.ownerPid, parsed.port].every((n) => Number.isInteger(n) && (n as number) > 0) ||
      typeof parsed.dbPath !== 'string'
    )
      return undefined;
    return parsed as DynamoLocalRecord;
  } catch {
    return undefined;
  }
}

/** Removes the record if it still describes this Java process (a newer start may own it now). */
export function forgetDynamoLocal(dbPath: string, javaPid: number): void {
  if (readDynamoLocalRecord(dbPath)?.javaPid === javaPid) rmSync(join(resolve(dbPath), DYNAMO_RECORD_FILE), { force: true });
}

/** The process's command line, or undefined when it is gone or cannot be read. */
export function commandLine(pid: number): string | undefined {
  try {
    const raw = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    return raw.split('\0').filter(Boolean).join(' ');
  } catch {
    // No /proc (macOS): ask ps.
  }
  const ps = spawnSync('ps', ['-o', 'args=', '-p', String(pid)], { encoding: 'utf8' });
  const out = ps.status === 0 ? ps.stdout.trim() : '';
  return out || undefined;
}

/** True while the process exists and is not a zombie waiting to be reaped. */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    const ps = spawnSync('ps', ['-o', 'stat=', '-p', String(pid)], { encoding: 'utf8' });
    return ps.status === 0 && !ps.stdout.trim().startsWith('Z');
  }
}

function isOurDynamoLocal(record: DynamoLocalRecord): boolean {
  const line = commandLine(record.javaPid);
  return line !== undefined && /DynamoDB/i.test(line) && line.includes(record.dbPath);
}

async function waitForExit(pid: number, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (processAlive(pid)) {
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 100));
  }
  return true;
}

export type StaleCheck =
  | { kind: 'none' }
  | { kind: 'stopped'; javaPid: number; port: number }
  | { kind: 'in-use'; ownerPid: number; javaPid: number; port: number };

/**
 * Looks at the DynamoDB Local recorded in `dbPath`. Its owner still running means another
 * `npm start` uses this data (`in-use`, nothing is touched). Its owner gone but Java still
 * running means a leftover of a start that died hard: it is stopped (SIGTERM, then SIGKILL).
 * A record of a process that is gone, or that is no longer DynamoDB Local, is removed.
 */
export async function reclaimStaleDynamoLocal(dbPath: string): Promise<StaleCheck> {
  const record = readDynamoLocalRecord(dbPath);
  if (!record) return { kind: 'none' };
  if (!processAlive(record.javaPid) || !isOurDynamoLocal(record)) {
    forgetDynamoLocal(dbPath, record.javaPid);
    return { kind: 'none' };
  }
  if (record.ownerPid !== process.pid && processAlive(record.ownerPid) && /node/.test(commandLine(record.ownerPid) ?? '')) {
    return { kind: 'in-use', ownerPid: record.ownerPid, javaPid: record.javaPid, port: record.port };
  }
  process.kill(record.javaPid, 'SIGTERM');
  if (!(await waitForExit(record.javaPid, 5_000))) {
    process.kill(record.javaPid, 'SIGKILL');
    await waitForExit(record.javaPid, 3_000);
  }
  forgetDynamoLocal(dbPath, record.javaPid);
  return { kind: 'stopped', javaPid: record.javaPid, port: record.port };
}

/**
 * Which process listens on the TCP port, as "pid N: command line" (best effort: lsof, then ss;
 * undefined when neither can tell, e.g. another user's process without privileges).
 */
export function describePortHolder(port: number): string | undefined {
  let pid: number | undefined;
  const lsof = spawnSync('lsof', ['-nP', `-iTCP:${port}`, '-sTCP:LISTEN', '-t'], { encoding: 'utf8' });
  if (lsof.status === 0) pid = Number(lsof.stdout.trim().split('\n')[0]);
  if (!pid) {
    const ss = spawnSync('ss', ['-ltnpH', `sport = :${port}`], { encoding: 'utf8' });
    const match = ss.status === 0 ? /pid=(\d+)/.exec(ss.stdout) : null;
    if (match) pid = Number(match[1]);
  }
  if (!pid || !Number.isInteger(pid)) return undefined;
  const line = commandLine(pid);
  return `pid ${pid}${line ? `: ${line.length > 160 ? `${line.slice(0, 157)}...` : line}` : ''}`;
}
