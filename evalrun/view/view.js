"use strict";
/* evalrun view's page: the runs list, a run, two runs compared. Routes live in the URL's hash:
     #/                      the runs (filterable, newest first; tick two to compare them)
     #/run/RUN[?case=ID]     a run, drawn by the report's renderer (report.js); ?case= opens that case
     #/compare/A/B           what `evalrun compare A B` reports, drawn by the same renderer
   Cases come from the server 100 at a time (server.py); a run in progress is polled and redrawn as it grows. */
(()=>{
const {esc,fmt}=Evalrun;
const app=document.getElementById('app'),nav=document.getElementById('nav');
const POLL_MS=1500;
let timer=null,route=0;
const enc=encodeURIComponent;

function api(path){return fetch(path,{headers:{Accept:'application/json'}}).then(async r=>{
 const d=await r.json().catch(()=>({error:`the server answered ${r.status} ${r.statusText}`}));
 if(!r.ok)throw d;return d;});}
function qs(o){return Object.entries(o).filter(([,v])=>v!==''&&v!=null&&v!==false).map(([k,v])=>enc(k)+'='+enc(v===true?1:v)).join('&');}
function remote(base,extra,n){const guard=p=>p.catch(e=>{if(n===route)problem('This page cannot be shown',e);return new Promise(()=>{});});
 return {page:f=>guard(api(`${base}/cases?`+qs({...extra,...f}))),detail:k=>guard(api(`${base}/cases/${enc(k)}?`+qs(extra)))};}
function problem(title,e){app.innerHTML=`<div class="problem" id="problem"><h1>${esc(title)}</h1><p>${esc(e.error||e)}</p>${e.hint?`<p class="muted">hint: ${esc(e.hint)}</p>`:''}<p><a href="#/">← all runs</a></p></div>`;}
function setNav(h){nav.innerHTML='<b>evalrun view</b><span class="sep">·</span>'+h;}
function when(iso){if(!iso)return '–';const d=new Date(iso);if(isNaN(d))return esc(iso);
 const p=n=>String(n).padStart(2,'0');return `${d.getFullYear()}-${p(d.getMonth()+1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;}
function statusBadge(s){s=String(s??'');return `<span class="st ${esc(s.split(' ')[0])}">${esc(s.toUpperCase())}</span>`;}
// a history row may be forged or shared: numbers are checked, every other field goes through esc()
const isNum=x=>typeof x==='number'&&isFinite(x);
function count(x){return isNum(x)?esc(String(x)):'–';}
function duration(s){return !isNum(s)?'–':s<120?fmt(Math.round(s*10)/10)+' s':Math.round(s/60)+' min';}
function list(x){return Array.isArray(x)?x.map(v=>String(v??'')):[];}

// ------------------------------------------------------------------ the runs list
function runsPage(n){
 setNav('<span>runs</span>');document.title='evalrun view';
 let runs=[],picked=[];
 app.innerHTML=`<section class="runs"><h1>Runs</h1><div class="meta" id="runs-folder"></div>
<div class="filters"><input id="runs-q" type="search" size="40" placeholder="filter: description, run, commit, grader, status…" aria-label="filter runs">
<select id="runs-st" aria-label="status filter"><option value="">all statuses</option><option>finished</option><option>running</option><option>interrupted</option><option>failed</option><option>died</option><option>not in history</option></select>
<select id="runs-cfg" aria-label="config filter"><option value="">all configs</option></select>
<button class="btn" id="runs-compare" type="button" disabled>compare the two ticked runs</button><span id="runs-count" class="muted"></span></div>
<table id="runs"><thead><tr><th></th><th>started</th><th>run</th><th>description</th><th>config</th><th>status</th><th>pass rate</th><th class="num">pass</th><th class="num">fail</th><th class="num">error</th><th>graders</th><th>git commit</th><th class="num">duration</th></tr></thead><tbody id="runs-rows"></tbody></table></section>`;
 const $=id=>document.getElementById(id);
 function configs(){const sel=$('runs-cfg'),was=sel.value,names=[...new Set(runs.map(r=>r.config||''))].filter(Boolean).sort();
  sel.innerHTML='<option value="">all configs</option>'+names.map(c=>`<option${c===was?' selected':''}>${esc(c)}</option>`).join('');}
 function draw(){const q=$('runs-q').value.toLowerCase(),st=$('runs-st').value,cfg=$('runs-cfg').value;
  const shown=runs.filter(r=>(!st||r.status===st)&&(!cfg||(r.config||'')===cfg)&&(!q||[r.id,r.description,r.config,r.status,r.git_commit,r.results_file,list(r.graders).join(' '),when(r.started_at)].join(' ').toLowerCase().includes(q)));
  $('runs-rows').innerHTML=shown.map(r=>{const rate=r.pass_rate;
   return `<tr class="run" data-id="${esc(r.id)}"><td><input type="checkbox" class="pick" aria-label="pick ${esc(r.id)} to compare"${picked.includes(r.id)?' checked':''}></td><td>${when(r.started_at)}</td><td><a href="#/run/${esc(enc(r.id))}">${esc(r.id)}</a></td><td class="desc">${esc(r.description||'')}</td><td><code>${esc(r.config||'–')}</code></td><td>${statusBadge(r.status)}${r.problem?` <span class="st fail">${esc(r.problem)}</span>`:''}</td>`
   +`<td>${r.reading?'<span class="muted">reading…</span>':!isNum(rate)?'–':`<span class="rate"><i style="width:${Math.max(0,Math.min(100,rate))}%"></i></span>${fmt(rate)}%`}</td><td class="num">${count(r.passed)}</td><td class="num">${count(r.failed)}</td><td class="num">${count(r.errors)}</td>`
   +`<td>${esc(list(r.graders).join(', ')||'–')}</td><td><code>${esc(r.git_commit||'–')}</code></td><td class="num">${duration(r.duration_s)}</td></tr>`;}).join('')
   ||`<tr><td colspan="13" class="muted">${runs.length?'no run matches the filter':'no run recorded here yet: run <code>evalrun eval</code> in this folder'}</td></tr>`;
  $('runs-count').textContent=`${shown.length} of ${runs.length} runs`;
  $('runs-compare').disabled=picked.length!==2;}
 function load(){api('/api/runs').then(d=>{if(n!==route)return;runs=d.runs;$('runs-folder').textContent=d.folder;configs();draw();
   if(runs.some(r=>r.live||r.reading))timer=setTimeout(load,POLL_MS);},e=>{if(n===route)problem('The runs cannot be listed',e);});}
 $('runs-q').addEventListener('input',draw);$('runs-st').addEventListener('change',draw);$('runs-cfg').addEventListener('change',draw);
 $('runs-rows').addEventListener('change',e=>{if(!e.target.classList.contains('pick'))return;const id=e.target.closest('tr').dataset.id;
  picked=picked.filter(x=>x!==id);if(e.target.checked)picked.push(id);if(picked.length>2)picked.shift();draw();});
 $('runs-compare').addEventListener('click',()=>{const order=runs.map(r=>r.id);  // baseline A: the older run
  const [b,a]=picked.slice().sort((x,y)=>order.indexOf(x)-order.indexOf(y));location.hash=`#/compare/${enc(a)}/${enc(b)}`;});
 load();}

// ------------------------------------------------------------------ one run
function calibration(c){  // what `evalrun calibrate` measured on this run, and where its thresholds came from
 if(!c||(!c.agreement.length&&!c.threshold_sources.length))return '';
 const f=x=>x==null?'–':Number(x).toFixed(2),ci=x=>x?` [${f(x[0])}, ${f(x[1])}]`:'';
 const rows=c.agreement.map(m=>`<li><b>${esc(m.metric)}</b> graded by ${esc(m.grader)}: ${m.n} labels (${m.n_human_pass} pass, ${m.n_human_fail} fail)`
  +(m.note?` · ${esc(m.note)}`:` · balanced accuracy ${f(m.balanced_accuracy)}${ci(m.balanced_accuracy_ci)} · kappa ${f(m.kappa)}${ci(m.kappa_ci)} · AUROC ${f(m.auroc)}${ci(m.auroc_ci)} · suggested threshold ${m.suggested_yaml_threshold==null?'–':Number(m.suggested_yaml_threshold).toFixed(4)} (out-of-fold balanced accuracy ${f(m.oof_balanced_accuracy)})`)+'</li>').join('');
 const src=c.threshold_sources.map(s=>`<li><b>${esc(s.metric)}</b> threshold ${Number(s.threshold).toFixed(4)} from ${esc(s.file)} (${s.n} labels, out-of-fold balanced accuracy ${f(s.oof_balanced_accuracy)}, grader ${esc(s.grader)})</li>`).join('');
 return `<section class="banner" id="calibration">${rows?`<b>Agreement with your labels</b> (${esc(c.labels&&c.labels.file||'')})<ul>${rows}</ul>`:''}${src?`<b>Thresholds from a calibration</b><ul>${src}</ul>`:''}</section>`;}
function runPage(n,id,caseId){
 setNav(`<a href="#/">← all runs</a><span class="sep">·</span><span>run <b>${esc(id)}</b></span>`);
 app.innerHTML='<p class="muted" style="padding:24px">reading the results file…</p>';
 const base=`/api/runs/${enc(id)}`;
 api(base).then(D=>{if(n!==route)return;
  app.innerHTML=`<div id="banner"></div>${calibration(D.view.calibration)}<div id="report"></div>`;
  const view=Evalrun.mount(document.getElementById('report'),D,remote(base,{},n),{openKey:caseId,debounce:200});
  let version=D.view.version,status=D.view.status;
  function chrome(D){const v=D.view,p=v.problems;
   setNav(`<a href="#/">← all runs</a><span class="sep">·</span><span>run <b>${esc(id)}</b></span> ${statusBadge(v.status)}${v.live?' <span class="live" id="live">updating as cases finish…</span>':''}${v.git_commit?`<span class="sep">·</span><span>git <code>${esc(v.git_commit)}</code></span>`:''}<span class="sep">·</span><label>compare with <select id="other" aria-label="run to compare with"></select></label> <button class="btn" id="go" type="button">compare</button>`);
   document.getElementById('banner').innerHTML=p.bad_lines||p.cut_line?`<div class="banner" id="file-problem">${p.bad_lines?`${p.bad_lines} line${p.bad_lines>1?'s':''} of ${esc(D.meta.results_file)} ${p.bad_lines>1?'are':'is'} not a result record (line ${p.first_bad_lines.join(', ')}${p.bad_lines>p.first_bad_lines.length?', …':''}) and ${p.bad_lines>1?'are':'is'} left out. `:''}${p.cut_line?`Line ${p.cut_line} is cut off and left out.`:''}</div>`:'';
   api('/api/runs').then(d=>{if(n!==route)return;const sel=document.getElementById('other');if(!sel)return;
    const others=d.runs.filter(r=>r.id!==id),at=d.runs.findIndex(r=>r.id===id);
    const older=d.runs.slice(at+1).find(r=>!r.problem);
    sel.innerHTML=others.map(r=>`<option value="${esc(r.id)}"${older&&r.id===older.id?' selected':''}>${esc(r.id)}${r.description?' · '+esc(r.description):''}</option>`).join('');
    document.getElementById('go').disabled=!others.length;
    document.getElementById('go').onclick=()=>{const o=sel.value,i=d.runs.findIndex(r=>r.id===o);
     location.hash=i>at?`#/compare/${enc(o)}/${enc(id)}`:`#/compare/${enc(id)}/${enc(o)}`;};});}
  chrome(D);
  function poll(){timer=setTimeout(()=>api(base).then(D2=>{if(n!==route)return;
    if(D2.view.version!==version||D2.view.status!==status){version=D2.view.version;status=D2.view.status;view.update(D2);chrome(D2);}
    if(D2.view.live)poll();},e=>{if(n===route)problem('This run cannot be shown',e);}),POLL_MS);}
  if(D.view.live)poll();
 },e=>{if(n===route)problem(`Run ${id} cannot be shown`,e);});}

// ------------------------------------------------------------------ two runs compared
function comparePage(n,a,b){
 const link=r=>`<a href="#/run/${esc(enc(r))}">${esc(r)}</a>`;
 setNav(`<a href="#/">← all runs</a><span class="sep">·</span><span>compare A ${link(a)} → B ${link(b)}</span><span class="sep">·</span><a href="#/compare/${esc(enc(b))}/${esc(enc(a))}" id="swap">swap A and B</a>`);
 app.innerHTML='<p class="muted" style="padding:24px">comparing…</p>';
 const extra={a,b};
 api('/api/compare?'+qs(extra)).then(D=>{if(n!==route)return;
  app.innerHTML=`<details class="text"><summary class="muted">as <code>evalrun compare ${esc(a)} ${esc(b)}</code> prints it</summary><pre id="compare-text">${esc(D.text)}</pre></details><div id="report"></div>`;
  Evalrun.mount(document.getElementById('report'),D,remote('/api/compare',extra,n),{debounce:200,
   caseLink:(side,caseId)=>`#/run/${enc(side==='a'?a:b)}?case=${enc(caseId)}`});
 },e=>{if(n===route)problem(`${a} and ${b} cannot be compared`,e);});}

function go(){clearTimeout(timer);const n=++route;
 const [path,search]=location.hash.replace(/^#/,'').split('?');
 const parts=path.split('/').filter(Boolean).map(decodeURIComponent),params=new URLSearchParams(search||'');
 if(parts[0]==='run'&&parts.length===2)runPage(n,parts[1],params.get('case'));
 else if(parts[0]==='compare'&&parts.length===3)comparePage(n,parts[1],parts[2]);
 else runsPage(n);
 window.scrollTo(0,0);}
window.addEventListener('hashchange',go);
go();
})();
