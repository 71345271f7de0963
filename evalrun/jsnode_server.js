// evalrun's Node.js process (evalrun/jsnode.py): one JSON request per stdin line, one JSON reply per stdout line.
const readline = require('readline');
const util = require('util');
// user code must not write to stdout: that is the reply channel
for (const k of ['log', 'info', 'debug', 'warn']) console[k] = (...a) => process.stderr.write(util.format(...a) + '\n');
const path = require('path');
const cache = new Map();
function findLastSemi(code) {
  let sq = false, dq = false, tq = false, last = -1;
  for (let i = 0; i < code.length; i++) {
    const c = code[i];
    let bs = 0; for (let j = i - 1; j >= 0 && code[j] === '\\'; j--) bs++;
    if (bs % 2 === 0) {
      if (c === "'" && !dq && !tq) sq = !sq;
      else if (c === '"' && !sq && !tq) dq = !dq;
      else if (c === '`' && !sq && !dq) tq = !tq;
    }
    if (c === ';' && !sq && !dq && !tq) last = i;
  }
  return last;
}
function body(code) {
  code = code.trimEnd();
  if (code.includes('\n')) return code;
  const t = code.trim().replace(/;+\s*$/, '');
  if (/^(const|let|var)\s/.test(t)) {
    const i = findLastSemi(t);
    if (i !== -1) { const e = t.slice(i + 1).trim(); if (e) return t.slice(0, i + 1) + ' return ' + e; }
    return t;
  }
  return 'return ' + t;
}
async function importFile(file) {
  // CommonJS through require; ES modules (.mjs, or `type: module` packages) through import()
  if (!file.endsWith('.mjs')) {
    try { return require(file); } catch (e) { if (!e || e.code !== 'ERR_REQUIRE_ESM') throw e; }
  }
  const mod = await import(require('url').pathToFileURL(file).href);
  return mod && mod.default !== undefined && Object.keys(mod).length === 1 ? mod.default : mod;
}
const providers = new Map();
async function provider(req) {
  // promptfoo's file://provider.js: `new (module.exports | default)(options)`, then callApi(prompt, context)
  const key = req.provider + '\u0000' + JSON.stringify(req.options || {});
  if (!providers.has(key)) {
    providers.set(key, (async () => {
      const mod = await importFile(req.provider);
      const Cls = mod && typeof mod === 'object' && typeof mod.default === 'function' ? mod.default : mod;
      if (typeof Cls === 'function') {
        const inst = new Cls(req.options || {});
        if (inst && typeof inst.callApi === 'function') return inst;
      } else if (Cls && typeof Cls.callApi === 'function') {
        return Cls;
      }
      throw new Error(`${req.provider} does not export a provider class with a callApi(prompt, context) method`);
    })());
  }
  let inst;
  try { inst = await providers.get(key); } catch (e) { providers.delete(key); throw e; }
  if (req.describe) return { id: typeof inst.id === 'function' ? inst.id() : (inst.id || null) };
  return inst.callApi(req.prompt, req.context || {});
}
async function load(req) {
  const params = req.params || ['output', 'context'];
  const key = req.code + '\u0000' + (req.base_dir || '') + '\u0000' + params.join(',');
  if (cache.has(key)) return cache.get(key);
  let fn;
  if (req.code.startsWith('file://')) {
    let ref = req.code.slice(7), name;
    const m = ref.match(/^(.*\.(?:c|m)?[jt]s):([A-Za-z_$][\w$]*)$/);
    if (m) { ref = m[1]; name = m[2]; }
    const mod = await importFile(path.resolve(req.base_dir || '.', ref));
    fn = name ? mod[name] : (typeof mod === 'function' ? mod : mod.default);
    if (typeof fn !== 'function') throw new Error(`${req.code} does not export a function`);
  } else {
    fn = new Function(...params, body(req.code));
  }
  cache.set(key, fn);
  return fn;
}
const rl = readline.createInterface({ input: process.stdin });
rl.on('line', async (line) => {
  let req;
  try { req = JSON.parse(line); } catch (e) { return; }
  if (req.env) {  // the caller's environment changed since the last request: user code reads process.env
    for (const k of Object.keys(process.env)) if (!(k in req.env)) delete process.env[k];
    Object.assign(process.env, req.env);
  }
  const reply = (o) => process.stdout.write(JSON.stringify(Object.assign({ id: req.id, evalrun: 1 }, o)) + '\n');
  try {
    if (req.check) { new Function('output', 'context', body(req.code)); reply({ ok: true, result: null }); return; }
    if (req.exports) { await load(req); reply({ ok: true, result: null }); return; }
    const result = req.provider ? await provider(req)
      : await (await load(req))(...req.args);
    const special = typeof result === 'number' && !isFinite(result) ? String(result) : undefined;
    reply({ ok: true, result: result === undefined ? null : result, type: typeof result, special });
  } catch (e) {
    reply({ ok: false, error: (e && e.name ? e.name + ': ' : '') + (e && e.message ? e.message : String(e)) });
  }
});
