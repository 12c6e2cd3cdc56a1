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
// names by percent-encoding every byte outside [A-Za-z0-9._-] as %HH (npy
// and name helpers: ort-common.js). Needs onnxruntime-node on NODE_PATH
// (helpers.bash: ort_node).
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const { execFileSync } = require('child_process');
const { fileName, readNpy, writeNpy, createSession } =
    require(path.join(__dirname, 'ort-common.js'));

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
		const session = await createSession(all, 1, {
			graphOptimizationLevel: 'disabled', logSeverityLevel: 3,
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
