// A small program for `node --prof`: JavaScript frames of its own (named, anonymous,
// nested), builtins (Math), C++ (JSON, allocation) and a library (the console's write).
function leaf(n) {
  let s = 0;
  for (let i = 0; i < n; i++) s += Math.sqrt(i) * Math.sin(i);
  return s;
}
function mid(n) { return leaf(n) + leaf(n / 2); }
const run = function () {
  let t = 0;
  for (let k = 0; k < 40; k++) t += mid(20000);
  return t;
};
const parts = [];
for (let r = 0; r < 10; r++) {
  run();
  parts.push(JSON.stringify({ r, a: new Array(2000).fill(r) }));
}
console.log(parts.length);
