// The static site's engine: Pyodide (pyodide/, vendored at build time) with the trainsteps wheel (wheels/), answering
// the page's requests with the Python `trainsteps web` runs (trainsteps.web.inprocess -> web/routes.py). Nothing is
// fetched from anywhere but this site's own folder.
import {loadPyodide} from "./pyodide/pyodide.mjs";

const here = (path) => new URL(path, import.meta.url).href;
const began = performance.now();
const say = (stage, detail = {}) => postMessage({kind: "progress", stage, at: Math.round(performance.now() - began), ...detail});

async function fetchWheels() {
  const manifest = await (await fetch(here("./wheels/manifest.json"), {cache: "no-cache"})).json();
  return Promise.all(manifest.wheels.map(async (w) => {
    const answer = await fetch(here(`./wheels/${w.file}?v=${w.sha256.slice(0, 12)}`));  // a new build is a new URL
    if (!answer.ok) throw new Error(`wheels/${w.file}: HTTP ${answer.status}`);
    return answer.arrayBuffer();
  }));
}

async function boot() {
  say("runtime");
  const wheels = fetchWheels();  // downloaded while the runtime starts
  wheels.catch(() => {});  // a failed download is reported where it is awaited, not as an unhandled rejection
  const py = await loadPyodide({indexURL: here("./pyodide/")});
  say("wheels");
  const site = py.runPython("import sysconfig; sysconfig.get_paths()['purelib']");
  for (const buffer of await wheels) py.unpackArchive(buffer, "wheel", {extractDir: site});
  say("engine");
  const inprocess = py.pyimport("trainsteps.web.inprocess");
  inprocess.use_browser_limits();
  const answer = inprocess.answer;
  answer("GET", "/api/meta");  // imports the route modules now, not on the first request
  say("ready", {ms: Math.round(performance.now() - began)});
  return answer;
}

const engine = boot();
engine.catch((err) => say("failed", {detail: String(err && err.message || err)}));

self.onmessage = async (event) => {
  const {id, method, path, query, body} = event.data;
  try {
    const answer = await engine;
    const result = answer(method, path, query || "", body || "");
    const [status, text] = result.toJs();
    result.destroy();
    postMessage({kind: "answer", id, status, text});
  } catch (err) {
    postMessage({kind: "answer", id, status: 0, text: JSON.stringify({error: String(err && err.message || err)})});
  }
};
