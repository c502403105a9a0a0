// Known hot functions for tests/cli/v8.bats: each spins for at least 150 ms of wall time,
// so that a sampler at any interval catches it however busy the machine is, on the stack
// it is called from: main > middle > leafA, main > middle > leafB, main > other > leafB.
'use strict';
function spin(ms) {
	const end = Date.now() + ms;
	let x = 0;
	while (Date.now() < end)
		for (let i = 0; i < 1000; i++)
			x += Math.sqrt(x + i);
	return x;
}
function leafA() { return spin(150); }
function leafB() { return spin(150); }
function middle() { return leafA() + leafB(); }
function other() { return leafB(); }
function main() { return middle() + other(); }
main();
