// The static site's engine, started once at build time: Pyodide boots in Node, the wheels are installed, the page's
// routes are imported and each one answers a first request, then the interpreter's memory is saved. The page's worker
// starts from that memory (loadPyodide's _loadSnapshot) instead of initialising Python and importing trainsteps again,
// which is most of a first visit's time. Run by tools/build_site.py:
//
//     node tools/site_snapshot.mjs SITE_FOLDER OUTPUT_FILE
//
// SITE_FOLDER is the folder being built (its pyodide/ and wheels/); OUTPUT_FILE gets the raw snapshot.
import fs from "node:fs";
import path from "node:path";
import {pathToFileURL} from "node:url";

const [site, output] = process.argv.slice(2);
const runtime = path.join(site, "pyodide") + path.sep;
const {loadPyodide} = await import(pathToFileURL(path.join(runtime, "pyodide.mjs")).href);
const manifest = JSON.parse(fs.readFileSync(path.join(site, "wheels", "manifest.json"), "utf8"));

// Settings the warm-up asks with: seed 001 (the page's first link) on each GET route, and small texts on the POST ones,
// so the modules every tab needs are imported now. Answers are not kept (the cache is emptied before the snapshot).
const SEED = "num_examples=1047&per_device_train_batch_size=10&gradient_accumulation_steps=8&num_train_epochs=300&transformers=4.49.0";
const WARM = [
  ["GET", "/api/meta", "", ""],
  ["GET", "/api/plan", SEED, ""],
  ["GET", "/api/compare", SEED, ""],
  ["GET", "/api/plan", "framework=megatron&train_tokens=32017905665&seq_length=2048&global_batch_size=1024&micro_batch_size=4&world_size=64&train_iters=15000", ""],
  ["GET", "/api/solve", "streaming=true&num_examples=1047&epochs=3&per_device_train_batch_size=10&gradient_accumulation_steps=8", ""],
  ["POST", "/api/explain", "", JSON.stringify({text: "  1%|          | 10/3900 [00:20<2:10:00,  2.00s/it]\n", settings: {}})],
];

const py = await loadPyodide({indexURL: runtime, _makeSnapshot: true, env: {}});
// The wheels are imported from where the page's worker puts them (worker.js WHEELS): as zips on sys.path, so a page
// that starts from this memory only writes the same files back instead of unpacking them.
const WHEELS = "/lib/trainsteps-wheels";
py.FS.mkdirTree(WHEELS);
for (const wheel of manifest.wheels) py.FS.writeFile(`${WHEELS}/${wheel.file}`, new Uint8Array(fs.readFileSync(path.join(site, "wheels", wheel.file))));
py.runPython(`import sys; sys.path[:0] = ${JSON.stringify(manifest.wheels.map((w) => `${WHEELS}/${w.file}`))}`);
const inprocess = py.pyimport("trainsteps.web.inprocess");
for (const [method, route, query, body] of WARM) {
  const [status] = inprocess.answer(method, route, query, body).toJs();
  if (status >= 500) throw new Error(`${method} ${route} answered ${status} while warming the engine`);
}
// Nothing of this machine in the saved memory: the Node script's path that Pyodide copies into the environment.
py.runPython("import os; os.environ.pop('_', None); from trainsteps.web import inprocess; inprocess._cache.clear()");
fs.writeFileSync(output, py.makeMemorySnapshot());
