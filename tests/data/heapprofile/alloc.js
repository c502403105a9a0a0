globalThis.keep = [];
function leaf(n) { const a = []; for (let i = 0; i < n; i++) a.push({ i, s: 'x'.repeat(16) + i }); return a; }
function mid() { return leaf(2000); }
function outer() { for (let k = 0; k < 200; k++) keep.push(mid()); keep.push(new Array(100000).fill(1)); }
outer();
keep.push((() => new Uint8Array(1 << 20))());
