// node bench/reply-decoding.ts: what ioredis spends decoding one decision's reply, by the reply's shape.
//
// The decide script's reply is read on every request that Redis decides. This feeds ioredis' own
// RESP decoder batches of 17 replies (about one loop turn's batch under the bench's load) in a
// tight loop and prints the ns per reply of each shape: the four integers the script replied
// with before, the one string it replies with now, and @fastify/rate-limit's two integers.
import { createRequire } from 'node:module';

interface Decoder {
  write(chunk: Buffer): void;
}
type DecoderClass = new (config: {
  onReply(reply: unknown): void;
  onErrorReply(error: unknown): void;
  onPush(push: unknown): void;
  getTypeMapping(): Record<number, unknown>;
}) => Decoder;

// The decoder ioredis parses every reply with (not part of its public API, hence the path).
const { Decoder } = createRequire(import.meta.url)('ioredis/built/resp/decoder.js') as {
  Decoder: DecoderClass;
};

const BATCH = 17;
const ROUNDS = 3;
const WRITES = 100_000;
const shapes: [name: string, reply: string][] = [
  ['four integers (before)', '*4\r\n:1\r\n:999\r\n:0\r\n:1795594517712\r\n'],
  ['one string (now)', '$21\r\n1,999,0,1795594517712\r\n'],
  ["two integers (@fastify/rate-limit's)", '*2\r\n:12\r\n:899000\r\n'],
];

let replies = 0;
const decoder = new Decoder({
  onReply: () => {
    replies++;
  },
  onErrorReply: () => {},
  onPush: () => {},
  getTypeMapping: () => ({}),
});

const results = new Map<string, number[]>(shapes.map(([name]) => [name, []]));
for (let round = 0; round < ROUNDS; round++) {
  for (const [name, reply] of shapes) {
    const chunk = Buffer.from(reply.repeat(BATCH));
    for (let i = 0; i < WRITES / 5; i++) decoder.write(chunk); // warm-up
    const before = replies;
    const started = process.hrtime.bigint();
    for (let i = 0; i < WRITES; i++) decoder.write(chunk);
    const nanos = Number(process.hrtime.bigint() - started);
    if (replies - before !== WRITES * BATCH) throw new Error(`${name}: the decoder lost replies`);
    results.get(name)!.push(nanos / (WRITES * BATCH));
  }
}
for (const [name, values] of results) {
  const sorted = [...values].sort((a, b) => a - b);
  console.log(
    `${name.padEnd(38)} ${sorted[sorted.length >> 1]!.toFixed(0)} ns per reply (median of ${ROUNDS})`,
  );
}
