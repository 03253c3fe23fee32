// Whether `serve` can listen where it was asked to, tried before anything
// starts: the store opens and the agents start before the server listens, so
// a port in use would otherwise be said after their start and stop lines, at
// the end of a screenful that buries it.
import { createServer } from "node:net";

/** The error listening on host:port gives (EADDRINUSE, EACCES, …), or undefined when it can; the port is free again after. */
export function probeListen(host: string, port: number): Promise<NodeJS.ErrnoException | undefined> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once("error", (error: NodeJS.ErrnoException) => resolve(error));
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve(undefined)));
  });
}
