// ort-run.js: run a model with ONNX Runtime on the samples of a data
// directory in the npy layout (DIR/SAMPLE/NAME.npy, see onnx-verify(1)) and
// save its outputs in the same layout, so that onnx-verify can compare
// against ONNX Runtime.
//
//	node test/ort-run.js [--out OUTDIR] [--threads N] [--repeat N] MODEL DIR
//
// Outputs go beside the inputs (DIR/SAMPLE/OUTPUT.npy) unless --out is
// given. Tensor names map to file names by percent-encoding every byte
// outside [A-Za-z0-9._-] as %HH (npy and name helpers: ort-common.js).
// --threads sets ONNX Runtime's intra-op threads (default 2, as
// onnx-verify); --repeat N runs the first sample N more times after a
// warm-up and prints "ort: median MS ms per inference, cpu CPU_MS ms" on
// stdout (CPU_MS: the process's user and system time, median). Needs
// onnxruntime-node on NODE_PATH (helpers.bash: ort_node).
'use strict';
const fs = require('fs');
const path = require('path');
const { fileName, readNpy, writeNpy, sampleDirs, createSession } =
    require(path.join(__dirname, 'ort-common.js'));

async function main() {
	const args = process.argv.slice(2);
	let out = null, threads = 2, repeat = 0;
	const pos = [];
	for (let i = 0; i < args.length; i++) {
		if (args[i] === '--out')
			out = args[++i];
		else if (args[i] === '--threads')
			threads = Number(args[++i]);
		else if (args[i] === '--repeat')
			repeat = Number(args[++i]);
		else
			pos.push(args[i]);
	}
	if (pos.length !== 2) {
		process.stderr.write('usage: node ort-run.js [--out OUTDIR] ' +
		    '[--threads N] [--repeat N] MODEL DIR\n');
		process.exit(2);
	}
	const [model, dir] = pos;
	out = out || dir;
	const session = await createSession(model, threads);
	const samples = sampleDirs(dir);
	let first = null;
	for (const s of samples) {
		const feeds = {};
		for (const name of session.inputNames)
			feeds[name] = readNpy(path.join(dir, s, fileName(name) + '.npy'));
		first = first || feeds;
		const res = await session.run(feeds);
		fs.mkdirSync(path.join(out, s), { recursive: true });
		for (const name of session.outputNames)
			writeNpy(path.join(out, s, fileName(name) + '.npy'), res[name]);
	}
	if (repeat > 0) {
		const times = [], cpus = [];
		await session.run(first);
		for (let i = 0; i < repeat; i++) {
			const t0 = process.hrtime.bigint();
			const c0 = process.cpuUsage();
			await session.run(first);
			const c = process.cpuUsage(c0);
			times.push(Number(process.hrtime.bigint() - t0) / 1e6);
			cpus.push((c.user + c.system) / 1e3);
		}
		times.sort((a, b) => a - b);
		cpus.sort((a, b) => a - b);
		const mid = Math.floor(times.length / 2);
		console.log(`ort: median ${times[mid].toFixed(2)} ms per ` +
		    `inference, cpu ${cpus[mid].toFixed(2)} ms`);
	}
}

main().catch(e => {
	process.stderr.write(`ort-run: ${e.message}\n`);
	process.exit(1);
});
