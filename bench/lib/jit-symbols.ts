// Names for the code V8 generated, from the map `node --perf-basic-prof` writes (/tmp/perf-<pid>.map).
import { existsSync, readFileSync } from 'node:fs';

interface CodeRange {
  readonly start: number;
  readonly end: number;
  readonly name: string;
  /** Its line in the map: a higher one was made later. */
  readonly order: number;
}

/**
 * The JS function (or stub) whose code holds an address. Tools that know only the binary's
 * symbols (callgrind) name V8's generated code by address; the map lists every code object V8
 * made, in order, with its start, size and name (`JS:*handler file.ts:31:12`, `*` optimised,
 * `~` interpreted). A range that was reused later is named by the code made last.
 */
export class JitSymbols {
  private readonly ranges: CodeRange[];

  private constructor(ranges: CodeRange[]) {
    this.ranges = ranges;
  }

  /** The map of a running (or just stopped) process. */
  static forProcess(pid: number): JitSymbols | null {
    return JitSymbols.fromFile(`/tmp/perf-${pid}.map`);
  }

  static fromFile(file: string): JitSymbols | null {
    if (!existsSync(file)) return null;
    const ranges: CodeRange[] = [];
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      const first = line.indexOf(' ');
      const second = line.indexOf(' ', first + 1);
      if (first <= 0 || second <= first) continue;
      const start = Number.parseInt(line.slice(0, first), 16);
      const size = Number.parseInt(line.slice(first + 1, second), 16);
      if (Number.isFinite(start) && Number.isFinite(size))
        ranges.push({ start, end: start + size, name: line.slice(second + 1), order: ranges.length });
    }
    ranges.sort((a, b) => a.start - b.start);
    return new JitSymbols(ranges);
  }

  /** The name of the newest code object whose range holds `address`, or null. */
  nameOf(address: number): string | null {
    let low = 0;
    let high = this.ranges.length - 1;
    let found = -1;
    while (low <= high) {
      const middle = (low + high) >> 1;
      if (this.ranges[middle]!.start <= address) {
        found = middle;
        low = middle + 1;
      } else high = middle - 1;
    }
    // Code freed by the GC leaves its range to newer code: of the ranges that hold the address
    // (they start at or before it, and few are that close), the one made last names it.
    let newest: CodeRange | null = null;
    for (let i = found; i >= 0 && i > found - 256; i--) {
      const range = this.ranges[i]!;
      if (address >= range.start && address < range.end && (!newest || range.order > newest.order))
        newest = range;
    }
    return newest?.name ?? null;
  }
}
