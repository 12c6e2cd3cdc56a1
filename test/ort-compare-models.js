// ort-compare-models.js: run two ONNX models with ONNX Runtime on the same
// random float input and print, per output of the first model,
//	NAME<TAB>max_abs_diff<TAB>max_rel_diff
// where max_rel_diff is max|a-b| / max|a|; then "max_rel_diff X" over all.
// Used by test/model.bats (prep must not change what a model computes).
//
//	node test/ort-compare-models.js A.onnx B.onnx NAME=1x3x48x192... [--seed N]
//
// Every model input needs a NAME=SHAPE argument. Sessions keep ONNX
// Runtime's default options. Needs onnxruntime-node on NODE_PATH
// (helpers.bash: ort_node), loaded through ort-common.js.
'use strict';
const path = require('path');
const ort = require(path.join(__dirname, 'ort-common.js')).ort();

function rng(seed) {
	let s = seed >>> 0;
	return () => {
		s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
		return s / 4294967296;
	};
}

async function main() {
	const args = process.argv.slice(2);
	const models = [], shapes = {};
	let seed = 1;
	for (let i = 0; i < args.length; i++) {
		if (args[i] === '--seed')
			seed = Number(args[++i]);
		else if (args[i].includes('='))
			shapes[args[i].split('=')[0]] =
			    args[i].split('=')[1].split('x').map(Number);
		else
			models.push(args[i]);
	}
	if (models.length !== 2)
		throw new Error('usage: ort-compare-models.js A B NAME=SHAPE...');
	const a = await ort.InferenceSession.create(models[0]);
	const b = await ort.InferenceSession.create(models[1]);
	const rand = rng(seed), feeds = {};
	for (const name of a.inputNames) {
		const shape = shapes[name];
		if (!shape)
			throw new Error(`input ${name}: give its shape as ${name}=AxB`);
		const n = shape.reduce((x, y) => x * y, 1);
		const data = new Float32Array(n);
		for (let i = 0; i < n; i++)
			data[i] = rand() * 2 - 1;
		feeds[name] = new ort.Tensor('float32', data, shape);
	}
	const ra = await a.run(feeds), rb = await b.run(feeds);
	let worst = 0;
	for (const name of a.outputNames) {
		const x = ra[name].data, y = rb[name].data;
		if (!y || x.length !== y.length)
			throw new Error(`output ${name}: missing or size differs`);
		let diff = 0, mag = 0;
		for (let i = 0; i < x.length; i++) {
			diff = Math.max(diff, Math.abs(x[i] - y[i]));
			mag = Math.max(mag, Math.abs(x[i]));
		}
		const rel = mag > 0 ? diff / mag : diff;
		worst = Math.max(worst, rel);
		console.log(`${name}\t${diff}\t${rel}`);
	}
	console.log(`max_rel_diff ${worst}`);
}

main().catch((err) => {
	console.error(`ort-compare-models: ${err.message}`);
	process.exit(1);
});
