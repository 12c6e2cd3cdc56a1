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
// every byte outside [A-Za-z0-9._-] as %HH. Needs onnxruntime-node on
// NODE_PATH (helpers.bash: ort_node).
'use strict';
const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');

const TYPES = {
	'f4': ['float32', Float32Array, 4], 'f8': ['float64', Float64Array, 8],
	'i1': ['int8', Int8Array, 1], 'u1': ['uint8', Uint8Array, 1],
	'i2': ['int16', Int16Array, 2], 'u2': ['uint16', Uint16Array, 2],
	'i4': ['int32', Int32Array, 4], 'i8': ['int64', BigInt64Array, 8],
	'b1': ['bool', Uint8Array, 1],
};

function fileName(name) {
	let out = '';
	for (const b of Buffer.from(name, 'utf8')) {
		const c = String.fromCharCode(b);
		out += /[A-Za-z0-9._-]/.test(c) ? c :
		    '%' + b.toString(16).toUpperCase().padStart(2, '0');
	}
	return out;
}

function readNpy(file) {
	const buf = fs.readFileSync(file);
	if (buf.toString('latin1', 0, 6) !== '\x93NUMPY')
		throw new Error(`${file}: not an npy file`);
	const major = buf[6];
	const hlen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
	const off = major === 1 ? 10 : 12;
	const hdr = buf.toString('latin1', off, off + hlen);
	const descr = /'descr':\s*'([<>|=])(\w\d+)'/.exec(hdr);
	const shape = /'shape':\s*\(([^)]*)\)/.exec(hdr);
	if (!descr || !shape || /'fortran_order':\s*True/.test(hdr) ||
	    descr[1] === '>')
		throw new Error(`${file}: unsupported npy header ${hdr}`);
	const t = TYPES[descr[2]];
	if (!t)
		throw new Error(`${file}: unsupported dtype ${descr[2]}`);
	const dims = shape[1].split(',').map(s => s.trim()).filter(s => s)
	    .map(Number);
	const n = dims.reduce((a, b) => a * b, 1);
	const start = off + hlen;
	const data = new t[1](n);
	new Uint8Array(data.buffer).set(buf.subarray(start, start + n * t[2]));
	return new ort.Tensor(t[0], t[0] === 'bool' ?
	    Array.from(data, v => v !== 0) : data, dims);
}

function writeNpy(file, tensor) {
	const code = Object.keys(TYPES).find(k => TYPES[k][0] === tensor.type);
	if (!code)
		throw new Error(`${file}: cannot save ${tensor.type}`);
	const order = TYPES[code][2] === 1 ? '|' : '<';
	const dims = tensor.dims;
	const shape = dims.length === 1 ? `(${dims[0]},)` :
	    `(${dims.join(', ')})`;
	let hdr = `{'descr': '${order}${code}', 'fortran_order': False, ` +
	    `'shape': ${shape}, }`;
	const total = Math.ceil((10 + hdr.length + 1) / 64) * 64;
	hdr = hdr.padEnd(total - 10 - 1, ' ') + '\n';
	const head = Buffer.alloc(10);
	head.write('\x93NUMPY', 0, 'latin1');
	head[6] = 1;
	head.writeUInt16LE(hdr.length, 8);
	const body = tensor.type === 'bool' ?
	    Buffer.from(Uint8Array.from(tensor.data, v => v ? 1 : 0)) :
	    Buffer.from(tensor.data.buffer, tensor.data.byteOffset,
	    tensor.data.byteLength);
	fs.writeFileSync(file, Buffer.concat([head, Buffer.from(hdr, 'latin1'),
	    body]));
}

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
	const session = await ort.InferenceSession.create(model, {
		graphOptimizationLevel: 'disabled',
		intraOpNumThreads: threads, interOpNumThreads: 1,
		executionMode: 'sequential',
	});
	const samples = fs.readdirSync(dir, { withFileTypes: true })
	    .filter(d => d.isDirectory() && !d.name.startsWith('.'))
	    .map(d => d.name).sort((a, b) =>
	    a.localeCompare(b, 'en', { numeric: true }));
	if (samples.length === 0)
		throw new Error(`${dir}: no sample directories`);
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
