// Sampling gaps that vary, for tests/cli/v8.bats: busy loops, where V8's sampler ticks
// every interval, between awaited sleeps, where the thread is idle and its ticks come
// late or far apart. A sample weighs the time up to the next one, so the weights must add
// up to the profile's span however uneven the gaps.
'use strict';
function spin(ms) {
	const end = Date.now() + ms;
	let x = 0;
	while (Date.now() < end)
		for (let i = 0; i < 1000; i++)
			x += Math.sqrt(x + i);
	return x;
}
const sleep = (ms) => new Promise((res) => setTimeout(res, ms));
async function main() {
	for (let i = 0; i < 4; i++) {
		spin(60);
		await sleep(120);
	}
}
main();
