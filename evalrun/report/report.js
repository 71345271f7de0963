"use strict";
/* The report's rendering, one source for the self-contained HTML report (template.html), the compare page
   (`evalrun compare -o diff.html`) and `evalrun view` (evalrun/view/). Data shapes: evalrun/report/html.py.

     Evalrun.mount(root, D, source, opt)  draws the summary, matrix, charts and the paged, filtered case table
                                          of D (kind "run" or "diff") into root; returns {update(D)}
     Evalrun.localSource(D)               cases held in D.cases (the static pages)
   A source answers page(filters) -> {items: [{key, row}], matched, total, page, pages} and detail(key) -> the
   opened case, each either directly or as a Promise (evalrun view asks its server: view/index.py applies
   the same filters in Python). */
const Evalrun=(()=>{
const esc=s=>String(s??'').replace(/[&<>"']/g,c=>({'&':'&amp;','<':'&lt;','>':'&gt;','"':'&quot;',"'":'&#39;'}[c]));
const fmt=x=>x==null?'–':(+x).toFixed(3).replace(/\.?0+$/,'')||'0';
const pct=x=>x==null?'–':Math.round(100*x)+'%';
const PAGE=100;
const RUN_STATUS=['pass','fail','error'];
const DIFF_STATUS=['newly_failing','newly_passing','new_error','changed','noise','unchanged','added','removed'];
const colour=r=>r==null?'#999':`hsl(${Math.round(120*r)},55%,${38+Math.round(6*r)}%)`;
const when=(v,f)=>v&&typeof v.then==='function'?v.then(f):f(v);
const cutText=(p,n)=>p.length>n?p.slice(0,n-1)+'…':p;
function card(v,l,c){return `<div class="card ${c||''}"><b>${esc(v)}</b><span>${esc(l)}</span></div>`;}
function stBadge(s){return `<span class="st ${esc(s)}">${esc(String(s).replace('_',' ').toUpperCase())}</span>`;}
function highlight(text,spans){if(!spans||!spans.length)return esc(text);
 const sp=spans.slice().sort((a,b)=>a[0]-b[0]);let h='',at=0;
 for(const [s,e] of sp){if(s<at)continue;h+=esc(text.slice(at,s))+'<mark>'+esc(text.slice(s,e))+'</mark>';at=e;}
 return h+esc(text.slice(at));}
function assertionHtml(a){
 let h=`<div class="asr ${a.status}">${stBadge(a.status)} <b>${esc(a.type)}</b>${a.metric?` <span class="muted">metric ${esc(a.metric)}</span>`:''} · score <b>${fmt(a.score)}</b>${a.lower_is_better?' <span class="muted">(lower is better)</span>':''} · threshold ${fmt(a.threshold)} · weight ${fmt(a.weight)}${a.grader?' · grader '+esc(a.grader):''}<div>${esc(a.reason)}</div>`;
 if(a.claims&&a.claims.length){h+='<table class="claims"><tr><th>claim</th><th>verdict</th><th>reason</th><th>chunks</th></tr>';
  for(const c of a.claims)h+=`<tr><td>${esc(c.text)}</td><td class="v-${esc(c.verdict)}">${esc(c.verdict)}${c.counted?' (counted)':''}</td><td>${esc(c.reason)}</td><td>${(c.chunks||[]).map(k=>'#'+(k+1)).join(' ')}</td></tr>`;
  h+='</table>';}
 if(a.chunks&&a.chunks.length){h+='<ol class="chunks">';
  for(const c of a.chunks)h+=`<li>${highlight(c.text,c.spans)}${c.relevant===true?' <span class="up">relevant</span>':c.relevant===false?' <span class="muted">irrelevant</span>':''}${c.level?` <span class="muted">${esc(c.level)}${c.reason?': '+esc(c.reason):''}</span>`:''}</li>`;
  h+='</ol>';}
 if(a.missing&&a.missing.length)h+=`<div class="muted">missing: ${esc(a.missing.join('; '))}</div>`;
 for(const c of a.children||[])h+=assertionHtml(c);
 return h+'</div>';}
function runDetail(d){let h='';
 if(d.error)h+=`<h4>Error</h4><pre>${esc(d.error)}</pre>`;
 h+=`<h4>Prompt (rendered)</h4><pre>${esc(d.prompt)}</pre><h4>Output</h4><pre>${esc(d.output)}</pre>`;
 h+=`<h4>Assertions</h4>`+(d.assertions.length?d.assertions.map(assertionHtml).join(''):'<div class="muted">none</div>');
 h+=`<details><summary class="muted">vars · case ${esc(d.id)} · repeat ${esc(d.repeat)} · ${fmt(d.latency_ms)} ms</summary><pre>${esc(d.vars)}</pre></details>`;
 return h;}
function sideText(s){if(!s)return '–';return s.runs>1?`${s.passed}/${s.runs} passed [${pct(s.pass_rate_ci[0])}–${pct(s.pass_rate_ci[1])}]`:s.status;}
function diffDetail(d,link){let h='';
 if(link){const l=[['a','A'],['b','B']].filter(([s])=>d['id_'+s]!=null).map(([s,n])=>`<a class="caselink" href="${esc(link(s,d['id_'+s]))}">open this case in run ${n}</a>`);
  if(l.length)h+=`<div class="links">${l.join(' · ')}</div>`;}
 h+=`<h4>A → B</h4><pre>A: ${esc(sideText(d.a))}${d.a&&d.a.score!=null?' · score '+fmt(d.a.score):''}\nB: ${esc(sideText(d.b))}${d.b&&d.b.score!=null?' · score '+fmt(d.b.score):''}${d.b&&d.b.error?'\nB error: '+esc(d.b.error):''}</pre>`;
 if(d.vars_changed)h+='<div class="muted">matched by position: this case\'s vars were edited</div>';
 if(d.metric_deltas.length){h+='<h4>Assertion scores</h4><table class="claims"><tr><th>assertion</th><th>A</th><th>B</th><th>Δ</th><th></th></tr>';
  for(const m of d.metric_deltas)h+=`<tr><td>${esc(m.name)}</td><td class="num">${fmt(m.a)}</td><td class="num">${fmt(m.b)}</td><td class="num ${(m.lower_is_better?-m.delta:m.delta)<0?'down':(m.lower_is_better?-m.delta:m.delta)>0?'up':''}">${m.delta>0?'+':''}${fmt(m.delta)}${m.lower_is_better?' <span class="muted">(lower is better)</span>':''}</td><td>${m.regressed?stBadge('newly_failing').replace('NEWLY FAILING','REGRESSED'):''}</td></tr>`;
  h+='</table>';}
 if(d.claim_flips.length){h+='<h4>Claims that flipped</h4><table class="claims"><tr><th>assertion</th><th>claim</th><th>A</th><th>B</th></tr>';
  for(const f of d.claim_flips)h+=`<tr><td>${esc(f.assertion)}</td><td>${esc(f.claim)}</td><td class="v-${esc(f.a)}">${esc(f.a)}</td><td class="v-${esc(f.b)}">${esc(f.b)}</td></tr>`;
  h+='</table>';}
 if(d.output_a!=null)h+=`<h4>Output A</h4><pre>${esc(d.output_a)}</pre>`;
 if(d.output_b!=null)h+=`<h4>Output B</h4><pre>${esc(d.output_b)}</pre>`;
 if(d.prompt_b!=null)h+=`<h4>Prompt B (rendered)</h4><pre>${esc(d.prompt_b)}</pre>`;
 return h;}

const SKELETON=`<header><h1 id="title">evalrun report</h1><div class="meta" id="meta"></div><div class="cards" id="cards"></div><div id="statusbar"></div></header>
<main>
<section id="matrix-section"><h2 id="matrix-title">Pass rate by provider × prompt</h2><p class="muted" id="matrix-hint">Click a cell to show its cases.</p><table id="matrix"></table></section>
<section id="notes-section" hidden><h2>Prompt changes</h2><ul class="notes" id="notes"></ul></section>
<section><h2 id="charts-title">Score distributions</h2><div class="charts" id="charts"></div></section>
<section><h2 id="table-title">Cases</h2>
<div class="filters" id="filters">
<input id="q" type="search" placeholder="filter: text in test, output, reason…" size="34" aria-label="text filter">
<select id="st" aria-label="status filter"></select>
<select id="pv" aria-label="provider filter"></select>
<select id="pr" aria-label="prompt filter"></select>
<label id="flaky-box" hidden><input type="checkbox" id="fl"> flaky only</label>
<button class="btn" id="clear" type="button">clear filters</button>
<span id="count" class="muted"></span></div>
<table id="cases"><thead id="head"></thead><tbody id="rows"></tbody></table>
<div id="pager"><button class="btn" id="prev" type="button">← previous</button><span id="page"></span><button class="btn" id="next" type="button">next →</button></div>
<p class="muted">Click a row to open it: the rendered prompt, the output and every assertion with its reason; for graded assertions the claims with their verdicts and the chunks they came from, the supporting sentence highlighted.</p>
</section></main>`;

/* Filters, the one definition the page uses (the view's server mirrors it: view/index.py). A row is
   run:  [index, test label, provider #, prompt #, status 0/1/2, score, output snippet, reason snippet, flaky]
   diff: [label, provider #, prompt #, kind, regression 0/1, A status, B status, A score, B score, score delta];
   the text filter looks at the test label, output and reason (run) or the label, kind and statuses (diff). */
function rowText(diff,r){return (diff?[r[0],r[3],r[5],r[6]]:[r[1],r[6],r[7]]).join(' ').toLowerCase();}
function keep(diff,r,f,text){
 if(diff){if(f.st==='regression'?!r[4]:(f.st!==''&&r[3]!==DIFF_STATUS[+f.st]))return false;if(f.pv!==''&&r[1]!==+f.pv)return false;if(f.pr!==''&&r[2]!==+f.pr)return false;}
 else{if(f.st!==''&&r[4]!==+f.st)return false;if(f.pv!==''&&r[2]!==+f.pv)return false;if(f.pr!==''&&r[3]!==+f.pr)return false;if(f.fl&&!r[8])return false;}
 return !f.q||text.includes(f.q.toLowerCase());}

function localSource(D){
 const C=D.cases,diff=D.kind==='diff';
 if(!diff)for(const c of C)c[0][6]=String(c[1].output??'').slice(0,160);  // the snippet is not stored twice
 const text=C.map(c=>rowText(diff,c[0]));
 return {page(f){const shown=[];for(let i=0;i<C.length;i++)if(keep(diff,C[i][0],f,text[i]))shown.push(i);
   const pages=Math.max(1,Math.ceil(shown.length/PAGE)),page=Math.max(0,Math.min(f.page,pages-1));
   return {items:shown.slice(page*PAGE,page*PAGE+PAGE).map(i=>({key:i,row:C[i][0]})),matched:shown.length,total:C.length,page,pages};},
  detail(key){return C[key][1];}};}

/* opt.caseLink(side, caseId) -> href: diff rows link to their case in run A / B (evalrun view);
   opt.openKey: the case to open once the first page is drawn; opt.debounce: ms to wait on typed filters. */
function mount(root,D,source,opt={}){
 root.innerHTML=SKELETON;
 const $=id=>root.querySelector('#'+id);
 const DIFF=D.kind==='diff';const STATUS=DIFF?DIFF_STATUS:RUN_STATUS;
 const f={q:'',st:'',pv:'',pr:'',fl:false,page:0};
 let seq=0,opened=new Set(),openKey=opt.openKey,timer=null;
 function head(){const S=D.summary;
  if(DIFF){
   document.title='evalrun compare';$('title').textContent=`evalrun compare: ${D.a.label} → ${D.b.label}`;
   $('meta').textContent=`tolerance ${D.tolerance} · ${S.matched} cases matched, ${S.added} added, ${S.removed} removed`;
   $('cards').innerHTML=card(S.regressions,'regressions',S.regressions?'fail':'pass')+card(S.newly_failing,'newly failing','fail')+card(S.newly_passing,'newly passing','pass')+card(S.new_error,'new errors','error')+card(S.score_regressed,'score regressions')+card(S.claim_flips,'claim flips')+card(S.noise,'within noise');
   $('matrix-title').textContent='Pass rate A → B by provider × prompt';
   $('charts-title').textContent='Mean score change per assertion';
   $('charts').innerHTML=D.metric_svg?`<figure>${D.metric_svg}</figure>`:'<span class="muted">no scores</span>';
   const notes=D.prompts.filter(p=>p.text_changed||!p.a||!p.b);
   $('notes-section').hidden=!notes.length;$('notes').innerHTML=notes.map(p=>`<li>${p.text_changed?'text changed':!p.a?'only in B':'only in A'}: ${p.a?'A '+esc(p.a.label):''}${p.a&&p.b?' → ':''}${p.b?'B '+esc(p.b.label):''}</li>`).join('');
  }else{
   document.title=D.meta.description||'evalrun report';$('title').textContent=D.meta.description||'evalrun report';
   $('meta').textContent=[D.meta.run_id?'run '+D.meta.run_id:'',S.started_at,S.duration_s==null?'':S.duration_s+' s','graded by '+((S.graders||[]).join(', ')||'no graded assertions'),(D.meta.config_files||[]).join(', ')].filter(Boolean).join(' · ');
   let c=card(S.total,'cases')+card(S.passed,'passed','pass')+card(S.failed,'failed','fail')+card(S.errors,'errors','error')+card(S.pass_rate==null?'n/a':S.pass_rate+'%','pass rate');
   if(S.repeats)c+=card(S.repeats.flaky_count,`flaky of ${S.repeats.groups} (×${S.repeats.repeat})`);
   c+=card(S.tokens.provider.total+S.tokens.grader.total,'tokens');if(S.cost.total)c+=card('$'+S.cost.total.toFixed(4),'cost');
   $('cards').innerHTML=c;$('statusbar').innerHTML=D.status_svg;
   $('charts').innerHTML=(D.case_svg?`<figure><figcaption><b>case score</b></figcaption>${D.case_svg}</figure>`:'')+D.metrics.map(m=>`<figure><figcaption><b>${esc(m.name)}</b> · mean ${fmt(m.mean)}${m.lower_is_better?' (lower is better)':''} · ${m.passed} passed</figcaption>${m.svg||'<span class="muted">no scores</span>'}</figure>`).join('');
  }
  let h='<tr><th>provider \\ prompt</th>'+D.prompts_list.map(p=>`<th class="prompt">${esc(cutText(p,120))}</th>`).join('')+'</tr>';
  D.providers.forEach((pv,i)=>{h+=`<tr><th>${esc(pv)}</th>`;
   D.prompts_list.forEach((_,j)=>{const m=D.matrix[i][j];
    if(!m){h+='<td class="cell muted">–</td>';return;}
    if(DIFF){const d=m.pass_rate_delta;h+=`<td class="cell"><button data-p="${i}" data-q="${j}" style="background:${d==null?'#999':d<0?'var(--fail)':d>0?'var(--pass)':'#607d8b'}" title="${m.newly_failing} newly failing, ${m.newly_passing} newly passing, ${m.new_error} new errors">${pct(m.pass_rate_a)} → ${pct(m.pass_rate_b)}${m.prompt_text_changed?' ✎':''}</button></td>`;}
    else{const n=m[0]+m[1]+m[2],r=n?m[0]/n:null;h+=`<td class="cell"><button data-p="${i}" data-q="${j}" style="background:${colour(r)}" title="${m[0]} passed, ${m[1]} failed, ${m[2]} errors">${pct(r)} <small>(${m[0]}/${n})</small></button></td>`;}});
   h+='</tr>';});
  $('matrix').innerHTML=h;
  // the provider and prompt lists grow (and may be renumbered) while a run is in progress (evalrun view)
  for(const [id,list,n,all] of [['pv',D.providers,0,'all providers'],['pr',D.prompts_list,60,'all prompts']]){
   const sel=$(id),was=f[id]===''?null:sel.options[sel.selectedIndex].dataset.name;
   if(sel.options.length&&[...sel.options].slice(1).map(o=>o.dataset.name).join('\n')===list.join('\n'))continue;
   sel.innerHTML=`<option value="">${all}</option>`+list.map((p,i)=>`<option value="${i}" data-name="${esc(p)}">${esc(n?cutText(p,n):p)}</option>`).join('');
   if(was!=null){const i=list.indexOf(was);sel.value=f[id]=i<0?'':String(i);}}
  $('flaky-box').hidden=DIFF||!S.repeats;}
 $('st').innerHTML='<option value="">all</option>'+(DIFF?'<option value="regression">regressions</option>':'')+STATUS.map((s,i)=>`<option value="${i}">${s.replace('_',' ')}</option>`).join('');
 $('head').innerHTML=DIFF?'<tr><th></th><th>case</th><th>provider / prompt</th><th>change</th><th>A</th><th>B</th><th class="num">score A</th><th class="num">score B</th><th class="num">Δ</th></tr>'
  :'<tr><th></th><th>#</th><th>test</th><th>provider / prompt</th><th>status</th><th class="num">score</th><th>output</th><th>reason</th></tr>';
 function rowHtml(r){const prompt=D.prompts_list[DIFF?r[2]:r[3]]??'';
  if(DIFF)return `<td><span class="tog">▸</span></td><td>${esc(r[0])}</td><td>${esc(D.providers[r[1]])}<br><span class="muted">${esc(prompt)}</span></td><td>${stBadge(r[3])}${r[4]?' <span class="st fail">REGRESSION</span>':''}</td><td>${esc(r[5])}</td><td>${esc(r[6])}</td><td class="num">${fmt(r[7])}</td><td class="num">${fmt(r[8])}</td><td class="num ${r[9]<0?'down':r[9]>0?'up':''}">${r[9]==null?'–':(r[9]>0?'+':'')+fmt(r[9])}</td>`;
  return `<td><span class="tog">▸</span></td><td>${esc(r[0])}</td><td>${esc(r[1])}${r[8]?'<span class="flaky">flaky</span>':''}</td><td>${esc(D.providers[r[2]])}<br><span class="muted">${esc(cutText(prompt,80))}</span></td><td>${stBadge(STATUS[r[4]])}</td><td class="num">${fmt(r[5])}${r[9]?`<div class="failed">✗ ${esc(r[9])}</div>`:''}</td><td class="out">${esc(r[6])}</td><td>${esc(r[7])}</td>`;}
 function query(){const n=++seq,ask={...f};if(openKey!=null)ask.at=openKey;
  when(source.page(ask),r=>{if(n===seq)draw(r);});}
 function draw(r){f.page=r.page;const rows=$('rows');rows.textContent='';
  for(const it of r.items){const tr=document.createElement('tr');tr.className='case';tr.title='click to open';tr.setAttribute('aria-expanded','false');
   tr.dataset.key=JSON.stringify(it.key);tr.innerHTML=rowHtml(it.row);rows.append(tr);}
  if(!r.items.length)rows.innerHTML=`<tr><td colspan="9" class="muted">no case matches the filters</td></tr>`;
  $('count').textContent=`${r.matched} of ${r.total} ${DIFF?'changed cases':'cases'}`;
  $('page').textContent=`page ${r.page+1} of ${r.pages}`;$('prev').disabled=r.page===0;$('next').disabled=r.page>=r.pages-1;
  const want=openKey!=null?new Set([JSON.stringify(openKey)]):opened;opened=new Set();
  for(const tr of rows.querySelectorAll('tr.case'))if(want.has(tr.dataset.key)){toggle(tr);if(openKey!=null)tr.scrollIntoView();}
  openKey=null;}
 function toggle(tr){const nx=tr.nextElementSibling;
  if(nx&&nx.classList.contains('detrow')){nx.remove();opened.delete(tr.dataset.key);tr.classList.remove('open');tr.setAttribute('aria-expanded','false');tr.querySelector('.tog').textContent='▸';return;}
  const d=document.createElement('tr');d.className='detrow';opened.add(tr.dataset.key);tr.after(d);tr.classList.add('open');tr.setAttribute('aria-expanded','true');tr.querySelector('.tog').textContent='▾';
  d.innerHTML='<td colspan="9" class="det muted">loading…</td>';
  when(source.detail(JSON.parse(tr.dataset.key)),c=>{d.innerHTML=`<td colspan="9" class="det">${DIFF?diffDetail(c,opt.caseLink):runDetail(c)}</td>`;});}
 function apply(){f.page=0;query();}
 $('rows').addEventListener('click',e=>{const tr=e.target.closest('tr.case');if(tr&&!e.target.closest('a'))toggle(tr);});
 $('matrix').addEventListener('click',e=>{const b=e.target.closest('button');if(!b)return;$('pv').value=f.pv=b.dataset.p;$('pr').value=f.pr=b.dataset.q;apply();$('cases').scrollIntoView();});
 $('q').addEventListener('input',()=>{f.q=$('q').value;clearTimeout(timer);if(opt.debounce)timer=setTimeout(apply,opt.debounce);else apply();});
 for(const id of ['st','pv','pr'])$(id).addEventListener('change',()=>{f[id]=$(id).value;apply();});
 $('fl').addEventListener('change',()=>{f.fl=$('fl').checked;apply();});
 $('clear').addEventListener('click',()=>{for(const id of ['q','st','pv','pr'])$(id).value=f[id]='';$('fl').checked=f.fl=false;apply();});
 $('prev').addEventListener('click',()=>{f.page--;query();});$('next').addEventListener('click',()=>{f.page++;query();});
 head();query();
 return {update(D2){D=D2;head();query();},filters:f};}
return {mount,localSource,esc,fmt,pct,card,stBadge,when};
})();
