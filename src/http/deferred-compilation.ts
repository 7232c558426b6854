// Route schemas compiled on a route's first use, not at start: our validators and Fastify's own serializers
// (BENCHMARKS.md).
import SerializerSelector from '@fastify/fast-json-stringify-compiler';

/**
 * The compilations of one app still waiting for their route's first use. A process compiles only
 * what its requests need: all of them at start cost 11 MB of RSS and 0.19 s of the warm start.
 */
export class DeferredCompilations {
  private readonly pending = new Set<() => unknown>();

  /** What `compile` makes, made once, on the first call of the function returned. */
  defer<T>(compile: () => T): () => T {
    let made: { readonly value: T } | null = null;
    const get = (): T => {
      if (made === null) {
        made = { value: compile() };
        this.pending.delete(get);
      }
      return made.value;
    };
    this.pending.add(get);
    return get;
  }

  /** How many are still waiting. */
  get waiting(): number {
    return this.pending.size;
  }

  /** Compiles every one still waiting: a schema that does not compile throws here, as it threw at start before. */
  compileAll(): void {
    for (const get of [...this.pending]) get();
  }
}

type SerializerFactory = ReturnType<typeof SerializerSelector>;

/**
 * Fastify's default serializer compiler (fast-json-stringify, with the shared schemas), each
 * route's serializer for a status made on its first answer of that status.
 */
export function deferredSerializers(compilations: DeferredCompilations): SerializerFactory {
  const build = SerializerSelector();
  return (externalSchemas, options) => {
    const compiler = build(externalSchemas, options);
    return (route) => {
      const serializer = compilations.defer(() => compiler(route));
      return (document) => serializer()(document);
    };
  };
}
