// ort-load-many.js: load pairs of models in ONNX Runtime (default session,
// default optimization level), an fp32 model and a model written from it,
// one pair per line of LIST ("NAME FP32 OURS"), in one process. Prints
// "NAME: ERROR" for each pair whose fp32 model loads but ours does not, and
// exits 1 when there is any; a pair ORT cannot load in fp32 either says
// nothing of our writer and is counted apart.
//
//	node test/ort-load-many.js LIST
'use strict';
const fs = require('fs');
const path = require('path');
const { createSession } = require(path.join(__dirname, 'ort-common.js'));

async function loads(model) {
	try {
		await createSession(model, 1);
		return null;
	} catch (e) {
		return String(e.message).split('\n')[0];
	}
}

async function main() {
	if (process.argv.length !== 3) {
		process.stderr.write('usage: node ort-load-many.js LIST\n');
		process.exit(2);
	}
	const lines = fs.readFileSync(process.argv[2], 'utf8').split('\n')
	    .filter((l) => l.trim() !== '');
	let bad = 0, loaded = 0, fp32bad = 0;
	for (const line of lines) {
		const [name, fp32, ours] = line.split(' ');
		if (await loads(fp32) !== null) {
			fp32bad++;
			continue;
		}
		const err = await loads(ours);
		if (err === null) {
			loaded++;
		} else {
			bad++;
			console.log(name + ': ' + err);
		}
	}
	console.log(`loaded ${loaded}, refused ${bad}, fp32 refused ${fp32bad}`);
	process.exit(bad ? 1 : 0);
}
main();
