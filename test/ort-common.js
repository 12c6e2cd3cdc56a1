// ort-common.js: what the Node scripts driving ONNX Runtime in the tests
// share (ort-run.js, ort-dump.js, ort-qdq-check.js, ocr-eval.js,
// ort-compare-models.js): the npy dtype table (TYPES), the npy reader and
// writer, the mapping of tensor names to file names (percent-encoding every
// byte outside [A-Za-z0-9._-] as %HH), the sample directories of the npy
// data layout (DIR/SAMPLE/NAME.npy, see onnx-verify(1)) and session
// creation. onnxruntime-node (on NODE_PATH) is loaded only when a tensor or
// a session is asked for, so that reading saved outputs does not need it.
//
//	const common = require(path.join(__dirname, 'ort-common.js'));
'use strict';
const fs = require('fs');

/* npy dtype code: ONNX Runtime type, typed array, bytes per element. */
const TYPES = {
	'f4': ['float32', Float32Array, 4], 'f8': ['float64', Float64Array, 8],
	'f2': ['float16', Uint16Array, 2],
	'i1': ['int8', Int8Array, 1], 'u1': ['uint8', Uint8Array, 1],
	'i2': ['int16', Int16Array, 2], 'u2': ['uint16', Uint16Array, 2],
	'i4': ['int32', Int32Array, 4], 'u4': ['uint32', Uint32Array, 4],
	'i8': ['int64', BigInt64Array, 8], 'u8': ['uint64', BigUint64Array, 8],
	'b1': ['bool', Uint8Array, 1],
};

function ort() {
	return require('onnxruntime-node');
}

function fileName(name) {
	let out = '';
	for (const b of Buffer.from(name, 'utf8')) {
		const c = String.fromCharCode(b);
		out += /[A-Za-z0-9._-]/.test(c) ? c :
		    '%' + b.toString(16).toUpperCase().padStart(2, '0');
	}
	return out;
}

/* An npy file as { type, data, dims } (bool data as a Uint8Array). */
function readNpyData(file) {
	const buf = fs.readFileSync(file);
	if (buf.length < 10 || buf.toString('latin1', 0, 6) !== '\x93NUMPY')
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
	if (buf.length < start + n * t[2])
		throw new Error(`${file}: truncated`);
	const data = new t[1](n);
	new Uint8Array(data.buffer).set(buf.subarray(start, start + n * t[2]));
	return { type: t[0], data, dims };
}

/* An npy file as an ort.Tensor (bool data as an array of booleans). */
function readNpy(file) {
	const t = readNpyData(file);
	return new (ort().Tensor)(t.type, t.type === 'bool' ?
	    Array.from(t.data, v => v !== 0) : t.data, t.dims);
}

/* Written to FILE.tmp and renamed, so a reader never sees half a file. */
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
	const body = tensor.type === 'bool' ?
	    Buffer.from(Uint8Array.from(tensor.data, v => v ? 1 : 0)) :
	    Buffer.from(tensor.data.buffer, tensor.data.byteOffset,
	    tensor.data.byteLength);
	const tmp = file + '.tmp';
	fs.writeFileSync(tmp, Buffer.concat([head, Buffer.from(hdr, 'latin1'),
	    body]));
	fs.renameSync(tmp, file);
}

function naturalCompare(a, b) {
	return a.localeCompare(b, 'en', { numeric: true });
}

/* The sample directories of DIR in natural order; none is an error. */
function sampleDirs(dir) {
	const samples = fs.readdirSync(dir, { withFileTypes: true })
	    .filter(d => d.isDirectory() && !d.name.startsWith('.'))
	    .map(d => d.name).sort(naturalCompare);
	if (samples.length === 0)
		throw new Error(`${dir}: no sample directories`);
	return samples;
}

/*
 * A session on THREADS intra-op threads, one inter-op thread, nodes run in
 * order; EXTRA adds session options (graphOptimizationLevel...).
 */
function createSession(model, threads, extra) {
	return ort().InferenceSession.create(model, {
		intraOpNumThreads: threads, interOpNumThreads: 1,
		executionMode: 'sequential', ...extra,
	});
}

module.exports = {
	TYPES, ort, fileName, readNpyData, readNpy, writeNpy, naturalCompare,
	sampleDirs, createSession,
};
