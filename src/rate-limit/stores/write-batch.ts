// Sends the Redis commands of one event-loop turn in one socket write, each still its own command.
import type { Cluster, Redis } from 'ioredis';

/**
 * Every decision's EVALSHA is written as it is made, but the client's sockets are corked at the
 * first of a loop turn and uncorked once that turn's I/O callbacks have run (setImmediate): the
 * decisions of every request that arrived together leave in one `writev`, and Redis reads them
 * in one go. Under load a decision costs well under one round trip.
 *
 * Why not ioredis' `enableAutoPipelining`, which batches the same way: it builds a Pipeline, a
 * callback list and a second promise per command, which costs more per request than corking the
 * socket (measured: BENCHMARKS.md). Replies
 * and errors stay per command, as ioredis delivers them.
 */
export class WriteBatch {
  private readonly client: Redis | Cluster;
  private corked: Redis['stream'][] | null = null;
  private readonly release = () => {
    const streams = this.corked!;
    this.corked = null;
    for (const stream of streams) stream.uncork();
  };

  constructor(client: Redis | Cluster) {
    this.client = client;
  }

  /** Called before a command is sent: holds this turn's writes if nothing holds them yet. */
  hold(): void {
    if (this.corked !== null) return;
    const streams: Redis['stream'][] = [];
    // A cluster's command goes to the node that owns its slot: each node's socket is held.
    for (const node of 'nodes' in this.client ? this.client.nodes('master') : [this.client]) {
      const stream = node.stream;
      if (stream && !stream.destroyed && stream.writable) {
        stream.cork();
        streams.push(stream);
      }
    }
    this.corked = streams;
    setImmediate(this.release);
  }
}
