import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import type pg from 'pg';
import { cpuMsOfPids, processTree, type TrackedProcess } from './process-cpu';

/**
 * Postgres's CPU split by the process each backend serves (API, command worker, …), so the
 * benchmark shows whose statements the database time goes to. A backend is matched to its client
 * through the client's TCP socket: pg_stat_activity's client port → the socket's inode in
 * /proc/net/tcp → the process holding that inode. Backends of no tracked process (autovacuum,
 * checkpointer, WAL writer, the bench's own pool) and backends that exited count as "other".
 */

/** Socket inodes of client sockets connected to `serverPort`, by their local port. */
function clientSockets(serverPort: number): Map<number, string> {
  const out = new Map<number, string>();
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length < 10) continue;
      const local = parseInt(f[1]!.split(':')[1]!, 16);
      const remote = parseInt(f[2]!.split(':')[1]!, 16);
      if (remote === serverPort) out.set(local, f[9]!);
    }
  }
  return out;
}

/** Socket inode → label, for every socket a tracked process (or a descendant) holds. */
function socketHolders(tracked: readonly TrackedProcess[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const p of tracked) {
    for (const pid of p.withDescendants ? processTree(p.pid) : [p.pid]) {
      let fds: string[];
      try {
        fds = readdirSync(`/proc/${pid}/fd`);
      } catch {
        continue;
      }
      for (const fd of fds) {
        try {
          const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
          if (m) out.set(m[1]!, p.label);
        } catch {
          // closed meanwhile
        }
      }
    }
  }
  return out;
}

/** Backend pid → the label of the tracked process it serves (null: none of them), for every backend. */
async function backendOwners(db: pg.Pool, tracked: readonly TrackedProcess[]): Promise<Map<number, string | null>> {
  const { rows } = await db.query<{ pid: number; port: number; server: number }>(
    `select pid, client_port as port, inet_server_port() as server from pg_stat_activity`,
  );
  const sockets = clientSockets(rows[0]!.server);
  const holders = socketHolders(tracked);
  return new Map(rows.map((r) => [r.pid, holders.get(sockets.get(r.port) ?? '') ?? null]));
}

/**
 * Starts counting. The function returned finds the backends' owners again and gives a synchronous
 * reader of the CPU ms each tracked process's backends used since, so the caller can read it right
 * next to its other counters (the query takes milliseconds the window must not include).
 */
export async function postgresByClient(
  db: pg.Pool,
  tracked: readonly TrackedProcess[],
): Promise<() => Promise<() => Map<string, number>>> {
  // Every backend's time at the start, so one matched only later counts from here, not from its start.
  const owners = await backendOwners(db, tracked);
  const before = cpuMsOfPids([...owners.keys()]);
  return async () => {
    // A backend's owner may be known only now (its socket was not listed yet); a new backend started within the window.
    for (const [pid, label] of await backendOwners(db, tracked)) {
      if (label || !owners.has(pid)) owners.set(pid, label);
    }
    return () => {
      const after = cpuMsOfPids([...owners.keys()]);
      const out = new Map<string, number>();
      for (const [pid, label] of owners) {
        if (!label) continue;
        const ms = (after.get(pid) ?? before.get(pid) ?? 0) - (before.get(pid) ?? 0);
        out.set(label, (out.get(label) ?? 0) + ms);
      }
      return out;
    };
  };
}
