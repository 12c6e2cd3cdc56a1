// ort-dump.js: run a model with ONNX Runtime, graph optimizations disabled,
// on one sample and save every tensor a node produces, for the node-by-node
// checker test/tools/onnxq-teacher.c.
//
//	node test/ort-dump.js MODEL SAMPLEDIR OUTDIR
//
// SAMPLEDIR holds the graph inputs as NAME.npy (the npy layout of
// onnx-verify(1)). A copy of MODEL that lists every node output as a graph
// output is made with Debian's python3-onnx (ONNX Runtime then computes
// exactly the graph as written, nothing fused or folded); the inputs and
// every output are written to OUTDIR/NAME.npy. Tensor names map to file
// names by percent-encoding every byte outside [A-Za-z0-9._-] as %HH.
// Needs onnxruntime-node on NODE_PATH (helpers.bash: ort_node).
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const { execFileSync } = require('child_process');
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

/* Every node output becomes a graph output (typeless: ORT infers it). */
const EXPOSE = `
import sys, onnx
m = onnx.load(sys.argv[1])
g = m.graph
have = set(o.name for o in g.output)
for n in g.node:
    for o in n.output:
        if o and o not in have:
            have.add(o)
            g.output.append(onnx.ValueInfoProto(name=o))
onnx.save(m, sys.argv[2])
`;

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
	head[7] = 0;
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
	if (args.length !== 3) {
		process.stderr.write('usage: node ort-dump.js MODEL SAMPLEDIR ' +
		    'OUTDIR\n');
		process.exit(2);
	}
	const [model, sample, out] = args;
	const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ort-dump-'));
	const all = path.join(tmp, 'all.onnx');
	try {
		execFileSync('/usr/bin/python3', ['-c', EXPOSE, model, all],
		    { stdio: ['ignore', 'ignore', 'inherit'] });
		const session = await ort.InferenceSession.create(all, {
			graphOptimizationLevel: 'disabled', logSeverityLevel: 3,
			intraOpNumThreads: 1, interOpNumThreads: 1,
			executionMode: 'sequential',
		});
		fs.mkdirSync(out, { recursive: true });
		const feeds = {};
		for (const name of session.inputNames) {
			const f = path.join(sample, fileName(name) + '.npy');
			feeds[name] = readNpy(f);
			fs.copyFileSync(f, path.join(out, fileName(name) + '.npy'));
		}
		const res = await session.run(feeds);
		for (const name of session.outputNames)
			writeNpy(path.join(out, fileName(name) + '.npy'), res[name]);
	} finally {
		fs.rmSync(tmp, { recursive: true, force: true });
	}
}

main().catch(e => {
	process.stderr.write(`ort-dump: ${e.message}\n`);
	process.exit(1);
});
