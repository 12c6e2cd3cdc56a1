// ort-qdq-check.js: run a (QDQ) model with ONNX Runtime, graph
// optimizations disabled so that every QuantizeLinear/DequantizeLinear runs
// as written, on the samples of a data directory in the npy layout
// (DIR/SAMPLE/NAME.npy, see onnx-verify(1)); save its outputs, and compare
// them with reference outputs.
//
//	node test/ort-qdq-check.js [--out OUTDIR] [--ref REFDIR] [--threads N]
//	    MODEL DIR
//
// Outputs go to OUTDIR/SAMPLE/OUTPUT.npy (default: beside the inputs), so
// that onnx-verify -d can compare our interpreter with ONNX Runtime. With
// --ref, prints per output "NAME<TAB>snr=DB<TAB>maxabs=X" comparing with
// REFDIR/SAMPLE/OUTPUT.npy over all samples (the SNR of onnx-verify(1):
// 10 log10(sum ref^2 / sum (out - ref)^2)), e.g. a QDQ model against the
// fp32 model's outputs. Tensor names map to file names by percent-encoding
// every byte outside [A-Za-z0-9._-] as %HH (npy and name helpers:
// ort-common.js). Needs onnxruntime-node on NODE_PATH (helpers.bash:
// ort_node).
'use strict';
const fs = require('fs');
const path = require('path');
const { fileName, readNpy, writeNpy, sampleDirs, createSession } =
    require(path.join(__dirname, 'ort-common.js'));

async function main() {
	const args = process.argv.slice(2);
	let out = null, ref = null, threads = 2;
	const pos = [];
	for (let i = 0; i < args.length; i++) {
		if (args[i] === '--out')
			out = args[++i];
		else if (args[i] === '--ref')
			ref = args[++i];
		else if (args[i] === '--threads')
			threads = Number(args[++i]);
		else
			pos.push(args[i]);
	}
	if (pos.length !== 2) {
		process.stderr.write('usage: node ort-qdq-check.js [--out OUTDIR] ' +
		    '[--ref REFDIR] [--threads N] MODEL DIR\n');
		process.exit(2);
	}
	const [model, dir] = pos;
	out = out || dir;
	const session = await createSession(model, threads,
	    { graphOptimizationLevel: 'disabled' });
	const samples = sampleDirs(dir);
	const sig = {}, noise = {}, maxabs = {};
	for (const s of samples) {
		const feeds = {};
		for (const name of session.inputNames)
			feeds[name] = readNpy(path.join(dir, s,
			    fileName(name) + '.npy'));
		const res = await session.run(feeds);
		fs.mkdirSync(path.join(out, s), { recursive: true });
		for (const name of session.outputNames) {
			writeNpy(path.join(out, s, fileName(name) + '.npy'),
			    res[name]);
			if (!ref)
				continue;
			const r = readNpy(path.join(ref, s,
			    fileName(name) + '.npy'));
			const a = res[name].data, b = r.data;
			if (a.length !== b.length)
				throw new Error(`${name}: ${a.length} values, ` +
				    `reference ${b.length}`);
			sig[name] = sig[name] || 0;
			noise[name] = noise[name] || 0;
			maxabs[name] = maxabs[name] || 0;
			for (let i = 0; i < a.length; i++) {
				const d = Number(a[i]) - Number(b[i]);
				sig[name] += Number(b[i]) * Number(b[i]);
				noise[name] += d * d;
				maxabs[name] = Math.max(maxabs[name], Math.abs(d));
			}
		}
	}
	if (ref)
		for (const name of session.outputNames) {
			const snr = noise[name] === 0 ? 'inf' :
			    (10 * Math.log10(sig[name] / noise[name])).toFixed(2);
			const m = maxabs[name] === 0 ? '0' :
			    maxabs[name].toPrecision(4);
			console.log(`${name}\tsnr=${snr}\tmaxabs=${m}`);
		}
}

main().catch(e => {
	process.stderr.write(`ort-qdq-check: ${e.message}\n`);
	process.exit(1);
});
