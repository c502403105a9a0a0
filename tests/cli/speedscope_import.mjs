// Imports a speedscope JSON file with speedscope's own importer, the code of its npm
// package's bundle (dist/release/speedscope-*.js), and prints what speedscope made of it:
// per profile a header line "#\tNAME\tUNIT\tTOTAL_WEIGHT\tSAMPLES" (SAMPLES: speedscope's
// own sample list, after it merges consecutive identical stacks), then one line per stack
// with self weight, "NAME\tFRAME;FRAME;... WEIGHT", root first, frames labelled as
// tach-decode's collapsed output labels them (basename:function:line).
// usage: node speedscope_import.mjs [--as=KIND | --any] BUNDLE FILE [FILE...]
// --as=stackprof or --as=haskell: the file is a Ruby stackprof dump or a GHC -pj profile,
// imported by speedscope's importer for that format (the one its file-type dispatch calls
// for such a JSON file) instead of the one for its own files.
// With --any, FILE is imported as speedscope's app imports a file dropped on it, whatever
// its format (Chrome traces, .cpuprofile files of either form): by its name and contents,
// through the importer's importProfileGroupFromText; its console lines go to stderr.
// With several FILEs (one Node and one bundle for them all), what is printed for FILE goes
// to FILE.imp.txt instead, a file the importer refuses is named on stderr, and the exit
// status is 1 when any was refused.
//
// The bundle is a browser script whose last statement renders the app: it is run in a
// bare VM context up to that statement, with inert stand-ins for the browser objects its
// module setup touches, and the function its importer calls for a file with speedscope's
// $schema is taken by name from the importer's own code.
import fs from 'node:fs';
import vm from 'node:vm';

const args = process.argv.slice(2);
const kinds = { stackprof: 'stackprof profile', haskell: 'Haskell GHC JSON Profile' };
const any = args[0] === '--any';
if (any)
  args.shift();
const kind = !any && args[0] && args[0].startsWith('--as=') ? kinds[args.shift().slice(5)] : null;
if (kind === undefined) {
  console.error('speedscope_import: --as takes stackprof or haskell');
  process.exit(2);
}
const [bundlePath, ...files] = args;
const src = fs.readFileSync(bundlePath, 'utf8');
const cut = src.lastIndexOf('console.log(`speedscope v');
// --any: the importer module, which the app loads lazily (its init function, then its
// exports object, whose importProfileGroupFromText the app calls); --as: the dispatch's
// call for the kind, "F(r)", or "G(F(r))" where G makes a profile group.
const m = any ? /Promise\.resolve\(\)\.then\(\(\)=>\((\w+)\(\),(\w+)\)\)/.exec(src)
  : kind ? new RegExp(`Importing as ${kind}"\\),((?:\\w+\\()*?\\w+)\\(r\\)(\\)*)`).exec(src)
  : /Importing as speedscope json file"\),(\w+)\(r\)/.exec(src);
if (cut < 0 || !m) {
  console.error('speedscope_import: this speedscope bundle is not laid out as expected');
  process.exit(2);
}
const inert = () => new Proxy(function () {}, {
  get: (t, k) => (k === Symbol.toPrimitive ? () => '' : inert()),
  apply: () => inert(),
  construct: () => inert(),
});
const toStderr = (...a) => process.stderr.write(a.join(' ') + '\n');
const ctx = {
  console: { ...console, log: toStderr, warn: toStderr, info: toStderr },
  setTimeout, clearTimeout, TextDecoder, TextEncoder, URL,
  navigator: { userAgent: 'node', platform: 'linux' },
  window: inert(), document: inert(), localStorage: inert(), location: { hash: '', search: '' },
  Blob: function () {},
};
ctx.globalThis = ctx;
ctx.self = ctx;
vm.createContext(ctx);
// Errors are reported by message only: a stack trace would print the bundle's one line.
try {
  const imp = any ? `(n,t)=>(${m[1]}(),${m[2]}).importProfileGroupFromText(n,t)`
    : kind ? `(r)=>${m[1]}(r)${m[2] || ''}` : m[1];
  vm.runInContext(src.slice(0, cut) + `globalThis.__import=${imp};})();`, ctx);
} catch (e) {
  console.error(`speedscope_import: ${bundlePath}: ${e.message}`);
  process.exit(1);
}
const label = (f) => {
  const base = (f.file || '').split('/').pop();
  const line = f.line == null ? 0 : f.line;
  const text = f.file === '~' && line === 0 ? f.name : `${base}:${f.name}:${line}`;
  return text.replace(/;/g, ':').replace(/[\x00-\x1f\x7f]/g, '?');
};
const describe = (group) => {
const out = [];
for (const p of group.profiles) {
  const name = p.getName();
  out.push(`#\t${name}\t${p.getWeightUnit()}\t${p.getTotalWeight()}\t${p.samples.length}`);
  const walk = (node, path) => {
    for (const c of node.children) {
      const here = path.concat(label(c.frame));
      if (c.getSelfWeight() > 0) out.push(`${name}\t${here.join(';')} ${c.getSelfWeight()}`);
      walk(c, here);
    }
  };
  walk(p.getGroupedCalltreeRoot(), []);
}
return out.join('\n') + '\n';
};
let failed = false;
for (const file of files) {
  let text;
  try {
    const body = fs.readFileSync(file, 'utf8');
    const group = any ? await ctx.__import(file.split('/').pop(), body) : ctx.__import(JSON.parse(body));
    if (!group) throw new Error('not imported');
    text = describe(group);
  } catch (e) {
    console.error(`speedscope_import: ${file}: ${e.message}`);
    failed = true;
    continue;
  }
  if (files.length === 1) process.stdout.write(text);
  else fs.writeFileSync(`${file}.imp.txt`, text);
}
process.exit(failed ? 1 : 0);
