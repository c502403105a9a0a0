// Reads a file with one of speedscope's own importers, the code of its npm package's
// bundle (dist/release/speedscope-*.js), and prints what speedscope made of it, every
// profile (thread) merged: a line "#total\tW" (the profiles' total weights summed), then
// one line per stack with self weight, "FRAME;FRAME;... W", root first, frames by their
// names only, weights rounded to 3 decimals, lines sorted. A bare array of events that
// ends open is closed first, as speedscope's loader does.
// usage: node speedscope_read.mjs BUNDLE KIND FILE
// KIND: trace (the Trace Event Format importer, for a file of spans), speedscope (the
// importer of speedscope's own files), v8log (the importer of the JSON that
// `node --prof-process --preprocess` makes of a --prof log).
// The bundle is run as speedscope_import.mjs runs it; the importers are taken by name from
// the lines that call them (the name of what each logs before it imports).
import fs from 'node:fs';
import vm from 'node:vm';

const [bundlePath, kind, file] = process.argv.slice(2);
const src = fs.readFileSync(bundlePath, 'utf8');
const cut = src.lastIndexOf('console.log(`speedscope v');
const pick = {
  trace: [/Importing as Trace Event Format profile"\),(\w+)\(r\)/, (f) => f],
  speedscope: [/Importing as speedscope json file"\),(\w+)\(r\)/, (f) => f],
  v8log: [/Importing as --prof-process v8 log"\),(\w+)\((\w+)\(r\)\)/, null],
}[kind];
const m = pick && pick[0].exec(src);
if (cut < 0 || !m) {
  console.error('speedscope_read: no such kind, or the bundle is not laid out as expected');
  process.exit(2);
}
const inert = () => new Proxy(function () {}, {
  get: (t, k) => (k === Symbol.toPrimitive ? () => '' : inert()),
  apply: () => inert(),
  construct: () => inert(),
});
const ctx = {
  console: { log() {}, warn() {}, error: console.error, info() {} },
  setTimeout, clearTimeout, TextDecoder, TextEncoder, URL,
  navigator: { userAgent: 'node', platform: 'linux' },
  window: inert(), document: inert(), localStorage: inert(), location: { hash: '', search: '' },
  Blob: function () {},
};
ctx.globalThis = ctx;
ctx.self = ctx;
vm.createContext(ctx);
const expose = kind === 'v8log' ? `(x)=>${m[1]}(${m[2]}(x))` : m[1];
try {
  vm.runInContext(src.slice(0, cut) + `globalThis.__import=${expose};})();`, ctx);
} catch (e) {
  console.error(`speedscope_read: ${bundlePath}: ${e.message}`);
  process.exit(1);
}
let group;
try {
  // as speedscope's loader parses a file: a bare array may end open (no "]")
  let text = fs.readFileSync(file, 'utf8').trim();
  if (text[0] === '[') {
    text = text.replace(/,\s*$/, '');
    if (text[text.length - 1] !== ']') text += ']';
  }
  group = ctx.__import(JSON.parse(text));
} catch (e) {
  console.error(`speedscope_read: ${file}: ${e.message}`);
  process.exit(1);
}
const weights = new Map();
let total = 0;
for (const p of group.profiles) {
  total += p.getTotalWeight();
  const walk = (node, path) => {
    for (const c of node.children) {
      const here = path.concat(c.frame.name.replace(/[;\n]/g, ':'));
      const key = here.join(';');
      if (c.getSelfWeight() > 0) weights.set(key, (weights.get(key) || 0) + c.getSelfWeight());
      walk(c, here);
    }
  };
  walk(p.getGroupedCalltreeRoot(), []);
}
const out = [...weights].map(([k, w]) => `${k} ${w.toFixed(3)}`).sort();
process.stdout.write(`#total\t${total.toFixed(3)}\n` + out.map((l) => l + '\n').join(''));
