// Reads a V8 .cpuprofile and ranks where the time went within a window: frames by self and total time.
import { fileURLToPath } from 'node:url';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

export interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface FrameShare {
  readonly frame: string;
  /** Share of the window's samples, 0…1. */
  readonly share: number;
}

export interface ProfileSummary {
  readonly samples: number;
  /** Where samples ended: the function running, by self time. */
  readonly self: FrameShare[];
  /** Self time summed by package (node_modules), by file of ours (src/), or by V8/Node category. */
  readonly areas: FrameShare[];
  /** Our own functions (src/) by total time, callees included. */
  readonly oursTotal: FrameShare[];
}

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

function location(url: string): string {
  const path = url.startsWith('file://') ? fileURLToPath(url) : url;
  return path.startsWith(ROOT) ? path.slice(ROOT.length) : path;
}

function frameName(node: ProfileNode): string {
  const { functionName, url, lineNumber } = node.callFrame;
  const where = location(url);
  return where
    ? `${functionName || '(anonymous)'} ${where}:${lineNumber + 1}`
    : functionName || '(anonymous)';
}

function areaOf(node: ProfileNode): string {
  const where = location(node.callFrame.url);
  if (!where) return node.callFrame.functionName || '(native)';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(where);
  if (pkg) return pkg[1]!;
  if (where.startsWith('src/')) return where;
  if (where.startsWith('node:')) return 'node: internals';
  return where;
}

function rank(counts: Map<string, number>, total: number, top: number): FrameShare[] {
  return [...counts]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([frame, n]) => ({ frame, share: n / total }));
}

/** Summarises the samples taken between `from` and `to` (µs, the profile's clock). */
export function summariseProfile(profile: CpuProfile, from: number, to: number, top = 20): ProfileSummary {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const self = new Map<string, number>();
  const areas = new Map<string, number>();
  const oursTotal = new Map<string, number>();
  let time = profile.startTime;
  let samples = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    time += profile.timeDeltas[i]!;
    if (time < from || time > to) continue;
    const node = byId.get(profile.samples[i]!)!;
    if (node.callFrame.functionName === '(idle)') continue;
    samples++;
    const name = frameName(node);
    self.set(name, (self.get(name) ?? 0) + 1);
    const area = areaOf(node);
    areas.set(area, (areas.get(area) ?? 0) + 1);
    const seen = new Set<string>();
    for (let id: number | undefined = node.id; id !== undefined; id = parent.get(id)) {
      const frame = byId.get(id)!;
      if (!location(frame.callFrame.url).startsWith('src/')) continue;
      const key = frameName(frame);
      if (seen.has(key)) continue;
      seen.add(key);
      oursTotal.set(key, (oursTotal.get(key) ?? 0) + 1);
    }
  }
  const total = Math.max(1, samples);
  return {
    samples,
    self: rank(self, total, top),
    areas: rank(areas, total, top),
    oursTotal: rank(oursTotal, total, top),
  };
}
