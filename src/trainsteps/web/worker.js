// The static site's engine: Pyodide (pyodide/, vendored at build time) with the trainsteps wheel (wheels/), answering
// the page's requests with the Python `trainsteps web` runs (trainsteps.web.inprocess -> web/routes.py). Nothing is
// fetched from anywhere but this site's own folder.
import {loadPyodide} from "./pyodide/pyodide.mjs";

const here = (path) => new URL(path, import.meta.url).href;
const began = performance.now();
const say = (stage, detail = {}) => postMessage({kind: "progress", stage, at: Math.round(performance.now() - began), ...detail});
const WHEELS = "/lib/trainsteps-wheels";  // the same folder as tools/site_snapshot.mjs
const versioned = (entry) => here(`./${entry.file}?v=${entry.sha256.slice(0, 12)}`);  // a new build is a new URL

async function download(url) {
  const answer = await fetch(url);
  if (!answer.ok) throw new Error(`${new URL(url).pathname}: HTTP ${answer.status}`);
  return answer;
}

// The engine's memory saved at build time (tools/site_snapshot.mjs): Python initialised and trainsteps imported, so
// starting is copying it in. Gzipped on disk (31 MB -> 7 MB), unpacked here as it arrives.
async function snapshotBytes(entry) {
  const answer = await download(versioned(entry));
  return new Uint8Array(await new Response(answer.body.pipeThrough(new DecompressionStream("gzip"))).arrayBuffer());
}

async function start(manifest) {
  const options = {indexURL: here("./pyodide/")};
  if (manifest.snapshot && typeof DecompressionStream === "function") {
    const saved = snapshotBytes(manifest.snapshot);
    saved.catch(() => {});  // loadPyodide awaits it late: a failed download is handled below, not reported as unhandled
    try {
      return [await loadPyodide({...options, _loadSnapshot: saved}), "snapshot"];
    } catch (err) {  // a browser that cannot take the saved memory starts Python the long way
      say("runtime", {snapshot: String(err && err.message || err)});
    }
  }
  return [await loadPyodide(options), "start"];
}

async function boot() {
  say("runtime");
  const manifest = await (await download(here("./wheels/manifest.json"))).json();
  const wheels = Promise.all(manifest.wheels.map(async (w) => (await download(versioned({...w, file: `wheels/${w.file}`}))).arrayBuffer()));
  wheels.catch(() => {});  // a failed download is reported where it is awaited, not as an unhandled rejection
  const [py, started] = await start(manifest);
  say("wheels");
  // The wheels are imported as zips on sys.path (pure Python), from where tools/site_snapshot.mjs put them: after a
  // snapshot its memory has the modules imported and the zips' directories read, and the files system starts empty,
  // so the same files are written back for the modules imported later.
  py.FS.mkdirTree(WHEELS);
  const paths = manifest.wheels.map((w) => `${WHEELS}/${w.file}`);
  (await wheels).forEach((buffer, i) => py.FS.writeFile(paths[i], new Uint8Array(buffer)));
  if (started !== "snapshot") py.runPython(`import sys; sys.path[:0] = ${JSON.stringify(paths)}`);
  say("engine");
  const inprocess = py.pyimport("trainsteps.web.inprocess");
  inprocess.use_browser_limits();
  const answer = inprocess.answer;
  answer("GET", "/api/meta");  // imports the route modules now, not on the first request
  say("ready", {ms: Math.round(performance.now() - began), started});
  return {answer, py, logs: inprocess.LOG_FOLDER};
}

const engine = boot();
engine.catch((err) => say("failed", {detail: String(err && err.message || err)}));

// A slice of a log file the page reads with File.slice: appended to the engine's LOG_FOLDER under the file's name.
function writeSlice(py, folder, {name, offset, bytes}) {
  if (!name || name.includes("/") || name === "." || name === "..") throw new Error(`not a file name: ${name}`);
  py.FS.mkdirTree(folder);
  if (offset === 0) for (const old of py.FS.readdir(folder)) if (old !== "." && old !== "..") py.FS.unlink(`${folder}/${old}`);  // one log at a time
  const stream = py.FS.open(`${folder}/${name}`, offset === 0 ? "w" : "a");
  try { py.FS.write(stream, new Uint8Array(bytes), 0, bytes.byteLength); } finally { py.FS.close(stream); }
}

self.onmessage = async (event) => {
  const {id, kind, method, path, query, body} = event.data;
  try {
    const {answer, py, logs} = await engine;
    if (kind === "write") {
      writeSlice(py, logs, event.data);
      postMessage({kind: "answer", id, status: 200, text: "{}"});
      return;
    }
    const result = answer(method, path, query || "", body || "");
    const [status, text] = result.toJs();
    result.destroy();
    postMessage({kind: "answer", id, status, text});
  } catch (err) {
    postMessage({kind: "answer", id, status: 0, text: JSON.stringify({error: String(err && err.message || err)})});
  }
};
