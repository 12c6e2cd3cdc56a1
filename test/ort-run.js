// ort-run.js: run a model with ONNX Runtime on the samples of a data
// directory in the npy layout (DIR/SAMPLE/NAME.npy, see onnx-verify(1)) and
// save its outputs in the same layout, so that onnx-verify can compare
// against ONNX Runtime.
//
//	node test/ort-run.js [--out OUTDIR] [--threads N] [--repeat N] MODEL DIR
//
// Outputs go beside the inputs (DIR/SAMPLE/OUTPUT.npy) unless --out is
// given. Tensor names map to file names by percent-encoding every byte
// outside [A-Za-z0-9._-] as %HH. --threads sets ONNX Runtime's intra-op
// threads (default 2, as onnx-verify); --repeat N runs the first sample N
// more times after a warm-up and prints "ort: median MS ms per inference"
// on stdout. Needs onnxruntime-node on NODE_PATH (helpers.bash: ort_node).
'use strict';
const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');

const TYPES = {
	'f4': ['float32', Float32Array, 4], 'f8': ['float64', Float64Array, 8],
	'f2': ['float16', Uint16Array, 2],
	'i1': ['int8', Int8Array, 1], 'u1': ['uint8', Uint8Array, 1],
	'i2': ['int16', Int16Array, 2], 'u2': ['uint16', Uint16Array, 2],
	'i4': ['int32', Int32Array, 4], 'u4': ['uint32', Uint32Array, 4],
	'i8': ['int64', BigInt64Array, 8], 'u8': ['uint64', BigUint64Array, 8],
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
	if (!descr || !shape || /'fortran_order':\s*True/.test(hdr))
		throw new Error(`${file}: unsupported npy header ${hdr}`);
	if (descr[1] === '>')
		throw new Error(`${file}: big-endian npy is not supported here`);
	const t = TYPES[descr[2]];
	if (!t)
		throw new Error(`${file}: unsupported dtype ${descr[2]}`);
	const dims = shape[1].split(',').map(s => s.trim()).filter(s => s)
	    .map(Number);
	const n = dims.reduce((a, b) => a * b, 1);
	const start = off + hlen;
	const bytes = buf.subarray(start, start + n * t[2]);
	const data = new t[1](n);
	new Uint8Array(data.buffer).set(bytes);
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
	head[7] = 0;
	head.writeUInt16LE(hdr.length, 8);
	let body;
	if (tensor.type === 'bool')
		body = Buffer.from(Uint8Array.from(tensor.data, v => v ? 1 : 0));
	else
		body = Buffer.from(tensor.data.buffer, tensor.data.byteOffset,
		    tensor.data.byteLength);
	const tmp = file + '.tmp';
	fs.writeFileSync(tmp, Buffer.concat([head, Buffer.from(hdr, 'latin1'),
	    body]));
	fs.renameSync(tmp, file);
}

function naturalCompare(a, b) {
	return a.localeCompare(b, 'en', { numeric: true });
}

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
	const session = await ort.InferenceSession.create(model, {
		intraOpNumThreads: threads, interOpNumThreads: 1,
		executionMode: 'sequential',
	});
	const samples = fs.readdirSync(dir, { withFileTypes: true })
	    .filter(d => d.isDirectory() && !d.name.startsWith('.'))
	    .map(d => d.name).sort(naturalCompare);
	if (samples.length === 0)
		throw new Error(`${dir}: no sample directories`);
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
		const times = [];
		await session.run(first);
		for (let i = 0; i < repeat; i++) {
			const t0 = process.hrtime.bigint();
			await session.run(first);
			times.push(Number(process.hrtime.bigint() - t0) / 1e6);
		}
		times.sort((a, b) => a - b);
		console.log(`ort: median ${times[Math.floor(times.length / 2)]
		    .toFixed(1)} ms per inference`);
	}
}

main().catch(e => {
	process.stderr.write(`ort-run: ${e.message}\n`);
	process.exit(1);
});
