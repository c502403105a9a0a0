// Two threads for tests/cli/chrome.bats: the main one and a worker, each busy 40 ms, each
// profiled by node (--cpu-prof with the cpu_profiler trace category) into the trace.
'use strict';
const { Worker, isMainThread } = require('worker_threads');
function spin(ms) { const end = Date.now() + ms; let x = 0; while (Date.now() < end) x += Math.sqrt(x + 1); return x; }
function work() { return spin(40); }
if (isMainThread) { new Worker(__filename); work(); } else { work(); }
