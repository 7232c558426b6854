// Re-renders a results file as Markdown (e.g. after changing the report), without running anything.
// Run: node bench/render.ts bench/results/<date>.json [--write]   (--write: into BENCHMARKS.md)
import { readFileSync } from 'node:fs';
import { renderResults, writeBenchmarksMd } from './lib/markdown.ts';
import type { Results } from './lib/results.ts';

const [file, flag] = process.argv.slice(2);
if (!file) throw new Error('usage: node bench/render.ts <results.json> [--write]');
const section = renderResults(JSON.parse(readFileSync(file, 'utf8')) as Results);
console.log(section);
if (flag === '--write') writeBenchmarksMd(section);
