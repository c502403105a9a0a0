// Imports a callgrind file with speedscope's own callgrind importer (the code of its npm
// package's bundle, dist/release/speedscope-*.js) and prints its first profile (the first
// event) as stacks with self weights, "FRAME;FRAME;... WEIGHT", root first, frames labelled
// as tach-decode's collapsed output labels them (basename:function:line).
// usage: node speedscope_callgrind.mjs BUNDLE FILE
// The bundle is run as tests/cli/speedscope_import.mjs runs it (up to the statement that
// renders the app, in a bare VM context); the importer is the function the bundle calls
// where it says "Importing as Callgrind profile", its module's lazy setup run first.
import fs from 'node:fs';
import vm from 'node:vm';

const [bundlePath, file] = process.argv.slice(2);
const src = fs.readFileSync(bundlePath, 'utf8');
const cut = src.lastIndexOf('console.log(`speedscope v');
const m = /Importing as Callgrind profile"\),(\w+)\(\w+,\w+\)/.exec(src);
// its module is initialised lazily (the bundler's wrapper right after the importer)
const init = m && new RegExp(`function ${m[1]}\\(\\w+,\\w+\\)\\{return new \\w+\\(\\w+,\\w+\\)\\.parse\\(\\)\\}var [\\w,]*?(\\w+)=\\w+\\(\\(\\)=>`).exec(src);
if (cut < 0 || !m || !init) {
  console.error('speedscope_callgrind: this speedscope bundle is not laid out as expected');
  process.exit(2);
}
const inert = () => new Proxy(function () {}, {
  get: (t, k) => (k === Symbol.toPrimitive ? () => '' : inert()),
  apply: () => inert(),
  construct: () => inert(),
});
const ctx = {
  console: { log() {}, warn() {}, error: console.error },
  setTimeout, clearTimeout, TextDecoder, TextEncoder, URL,
  navigator: { userAgent: 'node', platform: 'linux' },
  window: inert(), document: inert(), localStorage: inert(), location: { hash: '', search: '' },
  Blob: function () {},
};
ctx.globalThis = ctx;
ctx.self = ctx;
vm.createContext(ctx);
vm.runInContext(src.slice(0, cut) + `globalThis.__init=${init[1]};globalThis.__import=${m[1]};})();`, ctx);
ctx.__init();
const text = fs.readFileSync(file, 'utf8');
const source = { splitLines: () => text.split('\n'), firstChunk: () => text.slice(0, 4096) };
const group = ctx.__import(source, 'callgrind.out');
const label = (f) => `${(f.file || '').split('/').pop()}:${f.name}:${f.line == null ? 0 : f.line}`
  .replace(/;/g, ':');
const out = [];
const walk = (node, path) => {
  for (const c of node.children) {
    const here = path.concat(label(c.frame));
    if (c.getSelfWeight() > 0) out.push(`${here.join(';')} ${c.getSelfWeight()}`);
    walk(c, here);
  }
};
walk(group.profiles[0].getGroupedCalltreeRoot(), []);
process.stdout.write(out.sort().join('\n') + '\n');
