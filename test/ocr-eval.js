// ocr-eval.js: measure PaddleOCR models on a data directory in the npy
// layout (DIR/SAMPLE/x.npy, as scripts/make-ocr-data writes it): run each
// MODEL with ONNX Runtime (onnxruntime-node), or read the outputs another
// runtime saved (`onnx-verify --save-outputs OUTDIR`: give OUTDIR instead of
// a model), and print one row per model:
//
//	model         samples  accuracy  mean_ned  snr_db  ms
//	rec.onnx           200     93.50    0.0112       -  10.9
//	rec.qdq.onnx       200     92.00    0.0141   24.31   8.2
//
//	node test/ocr-eval.js [--task rec|cls|det|none] [--keys FILE]
//	    [--labels FILE] [--threads N] [--errors N] DIR MODEL|OUTDIR...
//
// --task rec (the default): greedy CTC decoding as PaddleOCR's
// CTCLabelDecode does it: the best class of each time step, repeats
// collapsed, blanks dropped; class 0 is the blank, class i the i-th line of
// the key file (--keys, default ppocr_keys_v1.txt beside the first model),
// and the class after the last key a space (use_space_char), so the v4
// recognizer's 6625 classes are 6623 keys + blank + space. A prediction is
// right when it equals the label with spaces removed from both (PaddleOCR's
// RecMetric, ignore_space); mean_ned is the mean of edit distance / the
// longer length, over code points.
// --task cls: the best class against the label (an integer per line).
// --task det: no labels; accuracy is the intersection over union of the
// text masks (probability > 0.3, PaddleOCR's DBPostProcess threshold)
// with the first model's, over all pixels of all samples.
// --task none: no labels, only snr_db.
// Labels come from DIR/labels.txt (or --labels), one line per sample in
// the natural order of the sample names. snr_db compares every output with
// the first model's, pooled over samples: 10 log10(sum ref^2 / sum
// (out - ref)^2). ms is the median time of one inference (ORT rows only).
// --errors N lists up to N wrong predictions per model on stderr.
// Exit 0, 1 on any error. Needs onnxruntime-node on NODE_PATH when a MODEL
// is given (helpers.bash: ort_node); npy and name helpers: ort-common.js.
'use strict';
const fs = require('fs');
const path = require('path');
const { fileName, readNpyData, readNpy, sampleDirs, createSession } =
    require(path.join(__dirname, 'ort-common.js'));

// Levenshtein distance over code points.
function editDistance(a, b) {
	let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
	for (let i = 1; i <= a.length; i++) {
		const cur = [i];
		for (let j = 1; j <= b.length; j++)
			cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1,
			    prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
		prev = cur;
	}
	return prev[b.length];
}

// Greedy CTC decoding of one [1, T, C] output into a string.
function ctcDecode(t, keys) {
	const [n, steps, classes] = t.dims.length === 3 ? t.dims : [0, 0, 0];
	if (n !== 1 || (classes !== keys.length + 2 && classes !== keys.length + 1))
		throw new Error(`output of shape ${t.dims.join('x')}: want ` +
		    `1xTx${keys.length + 2} (${keys.length} keys + blank + space)`);
	let out = '', last = -1;
	for (let s = 0; s < steps; s++) {
		const row = t.data.subarray(s * classes, (s + 1) * classes);
		let best = 0;
		for (let c = 1; c < classes; c++)
			if (row[c] > row[best])
				best = c;
		if (best !== last && best !== 0)
			out += best <= keys.length ? keys[best - 1] : ' ';
		last = best;
	}
	return out;
}

function argmax(t) {
	let best = 0;
	for (let i = 1; i < t.data.length; i++)
		if (t.data[i] > t.data[best])
			best = i;
	return String(best);
}

function usage() {
	process.stderr.write('usage: node ocr-eval.js [--task rec|cls|det|none] ' +
	    '[--keys FILE] [--labels FILE]\n' +
	    '           [--threads N] [--errors N] DIR MODEL|OUTDIR...\n');
	process.exit(2);
}

function parseArgs(argv) {
	const o = { task: 'rec', keys: null, labels: null, threads: 2,
	    errors: 0, pos: [] };
	for (let i = 0; i < argv.length; i++) {
		const a = argv[i];
		const val = () => {
			if (i + 1 >= argv.length)
				usage();
			return argv[++i];
		};
		if (a === '--task') {
			o.task = val();
			if (!['rec', 'cls', 'det', 'none'].includes(o.task))
				usage();
		} else if (a === '--keys')
			o.keys = val();
		else if (a === '--labels')
			o.labels = val();
		else if (a === '--threads')
			o.threads = Number(val());
		else if (a === '--errors')
			o.errors = Number(val());
		else if (a.startsWith('-') && a !== '-')
			usage();
		else
			o.pos.push(a);
	}
	if (o.pos.length < 2 || !(o.threads >= 1) || !(o.errors >= 0))
		usage();
	return o;
}

async function main() {
	const o = parseArgs(process.argv.slice(2));
	const [dir, ...what] = o.pos;
	const samples = sampleDirs(dir);

	let labels = null, keys = null;
	if (o.task === 'rec' || o.task === 'cls') {
		const lf = o.labels || path.join(dir, 'labels.txt');
		labels = fs.readFileSync(lf, 'utf8').split('\n');
		if (labels[labels.length - 1] === '')
			labels.pop();
		if (labels.length !== samples.length)
			throw new Error(`${lf}: ${labels.length} labels for ` +
			    `${samples.length} samples`);
	}
	if (o.task === 'rec') {
		const model = what.find(w => !fs.statSync(w).isDirectory());
		const kf = o.keys || (model &&
		    path.join(path.dirname(model), 'ppocr_keys_v1.txt'));
		if (!kf)
			throw new Error('--keys is needed without a model');
		keys = fs.readFileSync(kf, 'utf8').split('\n');
		if (keys[keys.length - 1] === '')
			keys.pop();
		// Code points, so that a key is one element.
		keys = keys.map(k => k.replace(/\r$/, ''));
	}

	const rows = [];
	for (const w of what) {
		const row = { name: w, saved: fs.statSync(w).isDirectory(),
		    right: 0, ned: 0, n: 0, signal: 0, noise: 0, times: [],
		    inter: 0, union: 0,
		    wrong: [] };
		if (!row.saved)
			row.session = await createSession(w, o.threads);
		rows.push(row);
	}
	const first = rows.find(r => r.session);
	let outNames = first ? first.session.outputNames : null;
	if (!outNames) {
		const d = path.join(what[0], samples[0]);
		outNames = fs.readdirSync(d).filter(f => f.endsWith('.npy'))
		    .sort().map(f => decodeURIComponent(f.slice(0, -4)));
		if (outNames.length === 0)
			throw new Error(`${d}: no .npy outputs`);
	}

	for (let k = 0; k < samples.length; k++) {
		const s = samples[k];
		let ref = null;
		for (const r of rows) {
			let outs;
			if (r.saved) {
				outs = outNames.map(n => readNpyData(path.join(r.name,
				    s, fileName(n) + '.npy')));
			} else {
				const feeds = {};
				for (const n of r.session.inputNames)
					feeds[n] = readNpy(path.join(dir, s,
					    fileName(n) + '.npy'));
				if (k === 0)
					await r.session.run(feeds);	/* warm-up */
				const t0 = process.hrtime.bigint();
				const res = await r.session.run(feeds);
				r.times.push(Number(process.hrtime.bigint() - t0) / 1e6);
				outs = outNames.map(n => {
					if (!res[n])
						throw new Error(`${r.name}: no output ${n}`);
					return res[n];
				});
			}
			r.n++;
			if (ref === null) {
				ref = outs;
			} else {
				for (let i = 0; i < outs.length; i++) {
					const a = ref[i].data, b = outs[i].data;
					if (a.length !== b.length)
						throw new Error(`${r.name}: ${s}: output ` +
						    `${outNames[i]} has ${b.length} elements, ` +
						    `not ${a.length}`);
					for (let j = 0; j < a.length; j++) {
						const d = b[j] - a[j];
						r.signal += a[j] * a[j];
						/* NaN against a number is all noise */
						r.noise += Number.isNaN(d) &&
						    !(Number.isNaN(a[j]) && Number.isNaN(b[j])) ?
						    Infinity : d * d;
					}
				}
			}
			if (o.task === 'det') {
				const a = ref[0].data, b = outs[0].data;
				for (let j = 0; j < a.length; j++) {
					const x = a[j] > 0.3, y = b[j] > 0.3;
					r.inter += x && y;
					r.union += x || y;
				}
			}
			if (o.task === 'none' || o.task === 'det')
				continue;
			const pred = o.task === 'rec' ? ctcDecode(outs[0], keys) :
			    argmax(outs[0]);
			const want = labels[k];
			const p = Array.from(pred.replace(/ /g, ''));
			const l = Array.from(want.replace(/ /g, ''));
			if (p.join('') === l.join(''))
				r.right++;
			else if (r.wrong.length < o.errors)
				r.wrong.push(`${s}: ${JSON.stringify(want)} -> ` +
				    `${JSON.stringify(pred)}`);
			const m = Math.max(p.length, l.length);
			r.ned += m ? editDistance(p, l) / m : 0;
		}
	}

	const table = [['model', 'samples', 'accuracy', 'mean_ned', 'snr_db',
	    'ms']];
	rows.forEach((r, i) => {
		const med = r.times.slice().sort((a, b) => a - b)[
		    Math.floor(r.times.length / 2)];
		let snr = '-';
		if (i > 0)
			snr = r.noise === 0 ? 'inf' :
			    r.signal === 0 || r.noise === Infinity ? '-inf' :
			    (10 * Math.log10(r.signal / r.noise)).toFixed(2);
		let acc = (100 * r.right / r.n).toFixed(2);
		if (o.task === 'none' || (o.task === 'det' && i === 0))
			acc = '-';
		else if (o.task === 'det')
			acc = r.union ? (100 * r.inter / r.union).toFixed(2) : '100.00';
		table.push([path.basename(r.name), String(r.n), acc,
		    o.task !== 'rec' ? '-' : (r.ned / r.n).toFixed(4), snr,
		    med === undefined ? '-' : med.toFixed(1)]);
	});
	const width = table[0].map((_, c) =>
	    Math.max(...table.map(row => row[c].length)));
	for (const row of table)
		console.log(row.map((v, c) => c === 0 ? v.padEnd(width[c]) :
		    v.padStart(width[c])).join('  '));
	for (const r of rows)
		for (const w of r.wrong)
			process.stderr.write(`${path.basename(r.name)}: ${w}\n`);
}

main().catch(e => {
	process.stderr.write(`ocr-eval: ${e.message}\n`);
	process.exit(1);
});
