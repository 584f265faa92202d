// The dashboard's charts (src/serve/ui/page/charts.js) on a job's own numbers, under node with a minimal
// DOM: every finite input draws in bounded time with a bounded number of ticks (losses 1e17 and
// 1e17+16, epochs near 2^60, ±1e308), and a missing or non-finite value is a gap in its line.
// Run by ctest with a timeout: before the fix the tick loop never ended (1e17 + 5 === 1e17).
'use strict';
const fs = require('fs');
const path = require('path');
const vm = require('vm');
const assert = require('assert');

class Node {
  constructor(tag, text) {
    this.tag = tag;
    this.attrs = {};
    this.children = [];
    this.text = text;
  }
  setAttribute(k, v) { this.attrs[k] = String(v); }
  getAttribute(k) { return this.attrs[k]; }
  append(...c) { this.children.push(...c); }
  replaceChildren(...c) { this.children = c; }
  all(tag) { return this.children.flatMap((c) => (c.tag === tag ? [c] : []).concat(c.all ? c.all(tag) : [])); }
}
const document = {
  createElement: (t) => new Node(t),
  createElementNS: (_, t) => new Node(t),
  createTextNode: (t) => new Node('#text', t),
};
const window = {};
const context = vm.createContext({window, document, Node, console});
const ui = process.argv[2];
for (const f of ['dom.js', 'charts.js']) vm.runInContext(fs.readFileSync(path.join(ui, f), 'utf8'), context, {filename: f});
const {Chart} = window.BA;

function draw(series, kind) {
  const c = new Chart('t', kind);
  const t0 = Date.now();
  c.update(series);
  const ms = Date.now() - t0;
  assert.ok(ms < 2000, `drawing took ${ms} ms`);
  const ticks = c.svg.all('text').filter((t) => t.attrs.class === 'tick');
  assert.ok(ticks.length <= 30, `${ticks.length} tick labels`);
  for (const n of ['polyline', 'circle', 'rect', 'line', 'text'].flatMap((t) => c.svg.all(t)))
    for (const [k, v] of Object.entries(n.attrs)) assert.ok(!/NaN|Infinity/.test(v), `${n.tag} ${k}=${v}`);
  return c;
}

const cases = {
  'losses 1e17 and 1e17+16': [{name: 'loss', points: [[1, 1e17], [2, 1e17 + 16]]}],
  'one loss of 1e17': [{name: 'loss', points: [[1, 1e17], [2, 1e17]]}],
  'epochs near 2^60': [{name: 'loss', points: [[2 ** 60, 1], [2 ** 60 + 256, 2], [2 ** 60 + 512, 3]]}],
  'one epoch at 2^60': [{name: 'loss', points: [[2 ** 60, 1]]}],
  'epochs 0 and 2^62': [{name: 'loss', points: [[0, 1], [2 ** 62, 2]]}],
  '±1e308': [{name: 'loss', points: [[1, -1e308], [2, 1e308]]}],
  'tiny': [{name: 'loss', points: [[1, 5e-324], [2, 1e-323]]}],
  'nothing finite': [{name: 'loss', points: [[1, NaN], [2, Infinity]]}],
};
for (const [what, series] of Object.entries(cases)) {
  for (const kind of ['line', 'bar']) {
    try {
      draw(series, kind);
    } catch (e) {
      throw new Error(`${what} (${kind}): ${e.message}`);
    }
  }
  console.log('drawn: ' + what);
}

// A missing (NaN) or infinite value splits the line: two runs, no segment across the gap.
const gap = draw([{name: 'loss', points: [[1, 1], [2, 2], [3, NaN], [4, 3], [5, Infinity], [6, -Infinity], [7, 5]]}]);
const lines = gap.svg.all('polyline');
assert.strictEqual(lines.length, 3, 'three runs around two gaps');
assert.deepStrictEqual(lines.map((l) => l.attrs.points.split(' ').length), [2, 1, 1]);
assert.strictEqual(gap.svg.all('circle').length, 4, 'a dot per finite point');
console.log('gaps: ok');
console.log('PASS');
