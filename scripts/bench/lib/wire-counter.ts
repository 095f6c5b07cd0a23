import net from "node:net";

/** What crossed the relay so far, summed over all its connections. */
export type TWireCounts = {
  /** Statements the client sent: extended-protocol Sync and simple Query messages. */
  statements: number;
  /** Times the client asked after the database had answered: each is one wait for a reply (pipelined statements share one; an unprepared statement's parameter types are one more). */
  waits: number;
};

/**
 * A TCP relay in front of PostgreSQL for the benchmark: the server connects to it instead of the
 * database, and it counts the statements the server sends and how often it waits for the database,
 * numbers that do not depend on how loaded the machine is. The startup message (no type byte) is
 * skipped; a connection opened meanwhile adds its authentication exchange, which sends no statement.
 */
export async function startWireCounter(databaseUrl: string): Promise<{ url: string; counts: () => TWireCounts; close: () => Promise<void> }> {
  const target = new URL(databaseUrl);
  const counts: TWireCounts = { statements: 0, waits: 0 };
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port || 5432), target.hostname);
    sockets.add(client);
    sockets.add(upstream);
    let started = false;
    let pending: Buffer = Buffer.alloc(0);
    let answered = true;
    client.on("data", (chunk: Buffer) => {
      upstream.write(chunk);
      pending = pending.length > 0 ? Buffer.concat([pending, chunk]) : chunk;
      let statements = 0;
      // Sync, simple Query or Flush: the client now waits for an answer (Flush: for a statement's parameter types).
      let asks = 0;
      for (;;) {
        if (!started) {
          if (pending.length < 4) break;
          const length = pending.readInt32BE(0);
          if (pending.length < length) break;
          pending = pending.subarray(length);
          started = true;
          continue;
        }
        if (pending.length < 5) break;
        const length = pending.readInt32BE(1);
        if (pending.length < 1 + length) break;
        const type = pending[0];
        if (type === 0x53 || type === 0x51) statements++;
        if (type === 0x53 || type === 0x51 || type === 0x48) asks++;
        pending = pending.subarray(1 + length);
      }
      counts.statements += statements;
      if (asks > 0 && answered) {
        counts.waits++;
        answered = false;
      }
    });
    upstream.on("data", (chunk: Buffer) => {
      client.write(chunk);
      answered = true;
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    for (const s of [client, upstream]) {
      s.on("error", end);
      s.on("close", end);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  const url = new URL(databaseUrl);
  url.hostname = "127.0.0.1";
  url.port = String(port);
  return {
    url: url.toString(),
    counts: () => ({ ...counts }),
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
