// Local ports for the engines. Fresh ones come from the kernel (listen on port 0).
// Ports used last time with the same data dir are reused while they are free:
// Typesense's persisted raft state names its node by ip:peering_port:api_port, and
// under a new identity it waits ~10 s before re-electing itself leader. Stable
// ports also keep URLs such as the Temporal Web UI the same between runs.
import fs from 'node:fs';
import net from 'node:net';

/** Listens on 127.0.0.1:port (0 = any free port); null if that port is taken. */
function listen(port: number): Promise<net.Server | null> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(null));
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}

/** One free port per name, preferring those recorded in `stateFile`, which is then
 * updated. All listeners stay open until every port is picked, so no port is
 * handed out twice; they are closed before returning. */
export async function pickPorts<K extends string>(names: readonly K[], stateFile?: string): Promise<Record<K, number>> {
  let previous: Partial<Record<string, number>> = {};
  try {
    if (stateFile) previous = JSON.parse(fs.readFileSync(stateFile, 'utf8')) as Record<string, number>;
  } catch {
    // first run with this data dir
  }
  const servers: net.Server[] = [];
  const ports = {} as Record<K, number>;
  try {
    for (const name of names) {
      const wanted = previous[name];
      let server = typeof wanted === 'number' && wanted > 0 ? await listen(wanted) : null;
      server ??= await listen(0);
      if (!server) throw new Error('could not listen on any local port');
      servers.push(server);
      ports[name] = (server.address() as net.AddressInfo).port;
    }
  } finally {
    await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
  }
  if (stateFile) fs.writeFileSync(stateFile, JSON.stringify(ports, null, 2) + '\n');
  return ports;
}
