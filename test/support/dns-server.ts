import { createSocket, type RemoteInfo } from 'node:dgram';
import { isIPv4, isIPv6 } from 'node:net';

/**
 * A DNS server on a loopback UDP port for the sender's and the bench's resolution (RFC 1035, the
 * little of it a stub resolver's A and AAAA queries need). Each name is in one of three states:
 *
 * - answered: `answers[name]` lists its addresses; A queries get its IPv4 ones, AAAA queries its
 *   IPv6 ones (none of a family: NOERROR with no answer, which resolvers call ENODATA), TTL 0 so no
 *   resolver caches them (a test may change the answer between two queries);
 * - a black hole: the query is read, counted, and never answered, as a name server that is down or
 *   drops packets (what fills libuv's thread pool under dns.lookup);
 * - unknown: NXDOMAIN (ENOTFOUND).
 *
 * `answers` and `blackHoles` may be changed while it runs (a name that answered at creation and
 * stops answering later). `queries` counts the questions received per name.
 */
export interface DnsServer {
  /** `127.0.0.1:<port>`, as dns.Resolver#setServers and WEBHOOK_DNS_SERVERS take it. */
  address: string;
  port: number;
  answers: Map<string, string[]>;
  blackHoles: Set<string>;
  queries: Map<string, number>;
  close(): Promise<void>;
}

const TYPE_A = 1;
const TYPE_AAAA = 28;
const CLASS_IN = 1;

export async function startDnsServer(
  options: { answers?: Record<string, string[]>; blackHoles?: readonly string[]; port?: number } = {},
): Promise<DnsServer> {
  const answers = new Map(Object.entries(options.answers ?? {}).map(([name, addresses]) => [name.toLowerCase(), addresses]));
  const blackHoles = new Set((options.blackHoles ?? []).map((name) => name.toLowerCase()));
  const queries = new Map<string, number>();
  const socket = createSocket('udp4');

  socket.on('message', (message: Buffer, from: RemoteInfo) => {
    const question = parseQuestion(message);
    if (!question) return;
    queries.set(question.name, (queries.get(question.name) ?? 0) + 1);
    if (blackHoles.has(question.name)) return;
    const known = answers.get(question.name);
    const records =
      known === undefined || question.qclass !== CLASS_IN
        ? []
        : question.qtype === TYPE_A
          ? known.filter((a) => isIPv4(a))
          : question.qtype === TYPE_AAAA
            ? known.filter((a) => isIPv6(a))
            : [];
    socket.send(answer(message, question, records, known === undefined ? 3 : 0), from.port, from.address);
  });

  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const port = socket.address().port;
  return {
    address: `127.0.0.1:${port}`,
    port,
    answers,
    blackHoles,
    queries,
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}

interface Question {
  name: string;
  qtype: number;
  qclass: number;
  /** Where the question section ends (the answer repeats it as it came). */
  end: number;
}

/** The first question of a query; undefined for anything that is not a well-formed standard query. */
function parseQuestion(message: Buffer): Question | undefined {
  if (message.length < 12 || (message[2]! & 0x80) !== 0 || message.readUInt16BE(4) < 1) return undefined;
  const labels: string[] = [];
  let at = 12;
  for (;;) {
    const length = message[at];
    if (length === undefined || length > 63) return undefined;
    at++;
    if (length === 0) break;
    if (at + length > message.length) return undefined;
    labels.push(message.toString('latin1', at, at + length));
    at += length;
  }
  if (at + 4 > message.length) return undefined;
  return { name: labels.join('.').toLowerCase(), qtype: message.readUInt16BE(at), qclass: message.readUInt16BE(at + 2), end: at + 4 };
}

/** The response to a query: its id and question, the records (TTL 0), rcode 0 or 3 (NXDOMAIN). */
function answer(query: Buffer, question: Question, addresses: readonly string[], rcode: number): Buffer {
  const header = Buffer.alloc(12);
  query.copy(header, 0, 0, 2);
  // QR, the query's opcode and RD, RA; the rcode.
  header[2] = 0x80 | (query[2]! & 0x79);
  header[3] = 0x80 | rcode;
  header.writeUInt16BE(1, 4);
  header.writeUInt16BE(addresses.length, 6);
  const records = addresses.map((address) => {
    const data = isIPv4(address) ? Buffer.from(address.split('.').map(Number)) : ipv6Bytes(address);
    const record = Buffer.alloc(12 + data.length);
    // A pointer to the name in the question (offset 12).
    record.writeUInt16BE(0xc00c, 0);
    record.writeUInt16BE(question.qtype, 2);
    record.writeUInt16BE(CLASS_IN, 4);
    record.writeUInt32BE(0, 6);
    record.writeUInt16BE(data.length, 10);
    data.copy(record, 12);
    return record;
  });
  return Buffer.concat([header, query.subarray(12, question.end), ...records]);
}

function ipv6Bytes(address: string): Buffer {
  const [head, tail] = address.includes('::') ? address.split('::') : [address, undefined];
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = tail === undefined ? left : [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  const bytes = Buffer.alloc(16);
  groups.forEach((group, i) => bytes.writeUInt16BE(parseInt(group || '0', 16), i * 2));
  return bytes;
}
