// nn-cases.js: run the cases nn-cases.py wrote with ONNX Runtime, one
// thread: for each DIR, read DIR/inputs.json and the raw inputs it names,
// run DIR/model.onnx, write DIR/out_K.bin and DIR/outputs.json (or
// DIR/ort-error.txt when ONNX Runtime refuses the case).
//
//	node test/tools/nn-cases.js DIR...
//
// Needs onnxruntime-node on NODE_PATH (helpers.bash: ort_node).
'use strict';
const fs = require('fs');
const ort = require('onnxruntime-node');

const TYPES = {
	float32: Float32Array, uint8: Uint8Array, int8: Int8Array,
	int16: Int16Array, uint16: Uint16Array, int32: Int32Array,
	int64: BigInt64Array, float64: Float64Array,
};

async function run(dir) {
	const s = await ort.InferenceSession.create(dir + '/model.onnx',
	    { intraOpNumThreads: 1, logSeverityLevel: 3 });
	const feeds = {};
	for (const t of JSON.parse(fs.readFileSync(dir + '/inputs.json'))) {
		const buf = fs.readFileSync(dir + '/' + t.file);
		const T = TYPES[t.dtype];
		const copy = new Uint8Array(buf).buffer;
		feeds[t.name] = new ort.Tensor(t.dtype, new T(copy), t.dims);
	}
	const out = await s.run(feeds);
	const meta = s.outputNames.map((name, i) => {
		const o = out[name];
		fs.writeFileSync(dir + '/out_' + i + '.bin', Buffer.from(
		    o.data.buffer, o.data.byteOffset, o.data.byteLength));
		return { name: name, dtype: o.type, dims: o.dims };
	});
	fs.writeFileSync(dir + '/outputs.json', JSON.stringify(meta));
}

(async () => {
	for (const dir of process.argv.slice(2)) {
		try {
			await run(dir);
		} catch (e) {
			fs.writeFileSync(dir + '/ort-error.txt', String(e));
		}
	}
})();
