/** Top self times of a `.cpuprofile` (bench/profile.ts): `npx tsx bench/profile-top.ts <file> [n]`. */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
const [file, n = '25'] = process.argv.slice(2);
if (!file) throw new Error('usage: profile-top.ts <file.cpuprofile> [n]');
const profile = JSON.parse(readFileSync(file, 'utf8')) as {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
};
const self = new Map<number, number>();
for (const [i, id] of profile.samples.entries())
  self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
const byNode = new Map(profile.nodes.map((node) => [node.id, node]));
const parent = new Map<number, number>();
for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
const total = [...self.values()].reduce((a, b) => a + b, 0);
const label = (node: ProfileNode) =>
  `${node.callFrame.functionName || '(anonymous)'} ${node.callFrame.url.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*?\/(lib|bench|test)\//, '$1/')}:${node.callFrame.lineNumber + 1}`;
const selfBy = new Map<string, number>();
for (const [id, us] of self) {
  const node = byNode.get(id);
  if (node) selfBy.set(label(node), (selfBy.get(label(node)) ?? 0) + us);
}
// Inclusive time by our own frames (a frame counted once per sample).
const inclusive = new Map<string, number>();
for (const [i, id] of profile.samples.entries()) {
  const seen = new Set<string>();
  for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
    const node = byNode.get(cur);
    if (!node) break;
    const l = label(node);
    if (seen.has(l)) continue;
    seen.add(l);
    inclusive.set(l, (inclusive.get(l) ?? 0) + (profile.timeDeltas[i] ?? 0));
  }
}
const pct = (us: number) => `${((100 * us) / total).toFixed(1)} %`;
console.log('self:');
for (const [l, us] of [...selfBy].sort((a, b) => b[1] - a[1]).slice(0, Number(n)))
  console.log(pct(us).padStart(7), l);
console.log('inclusive (lib/ and selected packages):');
for (const [l, us] of [...inclusive]
  .filter(([l]) => /lib\/runtime|logger|metrics|middy|p-limit|zod/.test(l))
  .sort((a, b) => b[1] - a[1])
  .slice(0, Number(n)))
  console.log(pct(us).padStart(7), l);
