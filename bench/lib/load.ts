import { readdir, readFile } from 'node:fs/promises';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

/** One MCP session against a server: an SDK Client over Streamable HTTP (or the older SSE transport, for peers that speak only that). */
export interface Session {
  client: Client;
  transport: StreamableHTTPClientTransport | SSEClientTransport;
}

/** Opens a session; `auth` is a bearer token, or headers to send on every request (an API key). */
export async function openSession(url: string, auth?: string | Record<string, string>): Promise<Session> {
  const headers = typeof auth === 'string' ? { Authorization: `Bearer ${auth}` } : auth;
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: headers ? { headers } : {},
  });
  const client = new Client({ name: 'bench-load', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport };
}

/** Opens a session over the SSE transport (a GET event stream, messages POSTed beside it). */
export async function openSseSession(url: string): Promise<Session> {
  const transport = new SSEClientTransport(new URL(url));
  const client = new Client({ name: 'bench-load', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport };
}

export async function closeSession(session: Session): Promise<void> {
  // DELETE ends the session on the server too, then the client closes its streams.
  if (session.transport instanceof StreamableHTTPClientTransport) await session.transport.terminateSession().catch(() => {});
  await session.client.close().catch(() => {});
}

/** The tool call a benchmark case makes, and a check of its answer. */
export interface Call {
  name: string;
  arguments: Record<string, unknown>;
  check: (result: CallToolResult) => void;
}

export async function callOnce(session: Session, call: Call, timeoutMs = 60_000): Promise<CallToolResult> {
  const result = (await session.client.callTool({ name: call.name, arguments: call.arguments }, undefined, {
    timeout: timeoutMs,
  })) as CallToolResult;
  call.check(result);
  return result;
}

export interface Segment {
  /** Per-call latencies in ms, in completion order. */
  latencies: number[];
  /** Wall time of the whole segment in ms (first call sent to last answer received). */
  wallMs: number;
  /** CPU time the server processes (all their threads) used during the segment, in ms: their sum. */
  serverCpuMs: number;
  /** The same, per process, in the order of the pids given to runSegment. */
  cpuMsByPid: number[];
  /** CPU time this process (the load generator) used during the segment, in ms. */
  clientCpuMs: number;
}

/** CPU time used so far by all threads of a process, in ns (from /proc/<pid>/task/<tid>/schedstat). */
export async function cpuTimeNs(pid: number): Promise<number> {
  const tasks = await readdir(`/proc/${pid}/task`);
  const times = await Promise.all(
    tasks.map((tid) =>
      readFile(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').then(
        (text) => Number(text.split(' ')[0]),
        () => 0, // the thread ended meanwhile
      ),
    ),
  );
  return times.reduce((a, b) => a + b, 0);
}

/**
 * `sessions.length` workers, each with its own session, each making `callsPerWorker` calls one
 * after another: so exactly `sessions.length` calls are in flight at any moment. The CPU time of
 * each process in `serverPids` (a server, or a gateway and the server behind it) is measured.
 */
export async function runSegment(serverPids: number | number[], sessions: Session[], call: Call, callsPerWorker: number): Promise<Segment> {
  const pids = typeof serverPids === 'number' ? [serverPids] : serverPids;
  const latencies: number[] = [];
  const server0 = await Promise.all(pids.map(cpuTimeNs));
  const client0 = process.cpuUsage();
  const started = performance.now();
  await Promise.all(
    sessions.map(async (session) => {
      for (let i = 0; i < callsPerWorker; i++) {
        const t0 = performance.now();
        await callOnce(session, call);
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const wallMs = performance.now() - started;
  const client = process.cpuUsage(client0);
  const server1 = await Promise.all(pids.map(cpuTimeNs));
  const cpuMsByPid = server1.map((ns, i) => (ns - server0[i]!) / 1e6);
  const serverCpuMs = cpuMsByPid.reduce((a, b) => a + b, 0);
  return { latencies, wallMs, serverCpuMs, cpuMsByPid, clientCpuMs: (client.user + client.system) / 1000 };
}

export interface Summary {
  calls: number;
  p50: number;
  p90: number;
  p99: number;
  mean: number;
  min: number;
  max: number;
  /** Calls completed per second of wall time, over all segments. */
  throughput: number;
  /** Server CPU time (all threads of all measured processes) per call, in ms. */
  serverCpuPerCall: number;
  /** The same per measured process, in the order of the pids given to runSegment. */
  cpuPerCallByPid: number[];
  /** Load generator CPU time per call, in ms. */
  clientCpuPerCall: number;
}

/** Nearest-rank percentile of sorted values. */
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

export function summarize(segments: Segment[]): Summary {
  const all = segments.flatMap((s) => s.latencies).sort((a, b) => a - b);
  const wall = segments.reduce((sum, s) => sum + s.wallMs, 0);
  return {
    calls: all.length,
    p50: percentile(all, 50),
    p90: percentile(all, 90),
    p99: percentile(all, 99),
    mean: all.reduce((a, b) => a + b, 0) / all.length,
    min: all[0]!,
    max: all[all.length - 1]!,
    throughput: (all.length / wall) * 1000,
    serverCpuPerCall: segments.reduce((sum, s) => sum + s.serverCpuMs, 0) / all.length,
    cpuPerCallByPid: (segments[0]?.cpuMsByPid ?? []).map((_, i) => segments.reduce((sum, s) => sum + s.cpuMsByPid[i]!, 0) / all.length),
    clientCpuPerCall: segments.reduce((sum, s) => sum + s.clientCpuMs, 0) / all.length,
  };
}

/** The text blocks of a tool result, joined. */
export function textOf(result: CallToolResult): string {
  return result.content
    .filter((c): c is { type: 'text'; text: string } => c.type === 'text')
    .map((c) => c.text)
    .join('\n');
}
