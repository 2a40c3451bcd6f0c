// convrag web chat. Every piece of server or document text is inserted with textContent, never
// as HTML, so a document containing <script> shows as text.
"use strict";

const state = { conversation: null, turns: [] };
const $ = (id) => document.getElementById(id);

function el(tag, text, cls) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  if (cls) node.className = cls;
  return node;
}

function headers(json) {
  const h = {};
  const key = localStorage.getItem("convrag-key");
  if (key) h["Authorization"] = "Bearer " + key;
  if (json) h["Content-Type"] = "application/json";
  return h;
}

async function api(path, options = {}) {
  const init = { method: options.method || "GET", headers: headers(options.body !== undefined) };
  if (options.body !== undefined) init.body = JSON.stringify(options.body);
  const response = await fetch(path, init);
  if (response.status === 401) { $("key-box").hidden = false; }
  if (response.status === 204) return null;
  const data = await response.json().catch(() => ({}));
  if (!response.ok) throw new Error((data.error && data.error.message) || data.detail || response.statusText);
  return data;
}

function showError(error) { $("error").textContent = error ? String(error.message || error) : ""; }

function safeUrl(url) {
  if (!url) return null;
  if (url.startsWith("/api/")) return url;
  try { const u = new URL(url); return (u.protocol === "http:" || u.protocol === "https:") ? u.href : null; } catch { return null; }
}

// collections -------------------------------------------------------------------------------
async function loadCollections() {
  const list = await api("/api/collections");
  const ul = $("collections"); ul.replaceChildren();
  const target = $("upload-target"); const chosen = target.value; target.replaceChildren();
  for (const c of list) {
    const li = el("li"); const label = el("label");
    const box = el("input"); box.type = "checkbox"; box.value = c.name; box.className = "collection-choice";
    label.append(box, " " + c.name + " ", el("small", `(${c.documents} docs, ${c.passages} passages${c.indexing ? ", indexing" : ""})`));
    li.append(label); ul.append(li);
    const option = el("option", c.name); option.value = c.name; target.append(option);
  }
  if (chosen) target.value = chosen;
}

function chosenCollections() {
  return [...document.querySelectorAll(".collection-choice:checked")].map((b) => b.value);
}

$("create-collection").addEventListener("submit", async (event) => {
  event.preventDefault(); showError();
  try {
    const name = $("collection-name").value.trim();
    await api("/api/collections", { method: "POST", body: { name } });
    $("collection-name").value = "";
    await loadCollections();
    $("upload-target").value = name;
  } catch (error) { showError(error); }
});

$("upload").addEventListener("submit", (event) => {
  event.preventDefault(); showError();
  const files = $("upload-files").files; const name = $("upload-target").value;
  if (!name || !files.length) { showError("choose a collection and files"); return; }
  const form = new FormData();
  for (const f of files) form.append("files", f, f.name);
  const xhr = new XMLHttpRequest();
  const bar = $("upload-progress"); bar.hidden = false; bar.value = 0;
  xhr.upload.onprogress = (e) => { if (e.lengthComputable) { bar.value = (50 * e.loaded) / e.total; } };
  xhr.onload = () => {
    let data = {}; try { data = JSON.parse(xhr.responseText); } catch { /* not JSON */ }
    if (xhr.status !== 202) { showError((data.error && data.error.message) || xhr.statusText); bar.hidden = true; return; }
    $("upload-status").textContent = "indexing…";
    pollJob(data.id);
  };
  xhr.onerror = () => showError("upload failed");
  xhr.open("POST", `/api/collections/${encodeURIComponent(name)}/documents`);
  for (const [k, v] of Object.entries(headers(false))) xhr.setRequestHeader(k, v);
  xhr.send(form);
});

async function pollJob(id) {
  const bar = $("upload-progress");
  const job = await api(`/api/jobs/${id}`);
  const part = job.total ? job.done / job.total : 0;
  bar.value = 50 + 50 * (job.status === "succeeded" ? 1 : part);
  $("upload-status").textContent = `${job.status}: ${job.stage} ${job.total ? `${job.done}/${job.total}` : ""}`;
  if (job.status === "succeeded" || job.status === "failed") {
    if (job.status === "failed") showError(job.error);
    $("upload-status").textContent = job.status === "succeeded" ? `indexed ${job.files.length} file(s)` : "indexing failed";
    await loadCollections();
    return;
  }
  setTimeout(() => pollJob(id), 400);
}

// conversations -----------------------------------------------------------------------------
async function loadConversations() {
  const list = await api("/api/conversations");
  const ul = $("conversations"); ul.replaceChildren();
  for (const c of list) {
    const li = el("li", `${c.title} (${c.turn_count})`);
    li.dataset.id = c.id;
    if (state.conversation && state.conversation.id === c.id) li.className = "active";
    li.addEventListener("click", () => openConversation(c.id));
    ul.append(li);
  }
}

async function openConversation(id) {
  const conversation = await api(`/api/conversations/${id}`);
  state.conversation = conversation; state.turns = conversation.turns;
  $("chat-header").textContent = `${conversation.title} — ${conversation.collections.join(", ")} (${conversation.strategy})`;
  renderMessages();
  await loadConversations();
}

$("new-chat").addEventListener("click", async () => {
  showError();
  const collections = chosenCollections();
  if (!collections.length) { showError("tick at least one collection"); return; }
  try {
    const conversation = await api("/api/conversations", { method: "POST", body: { collections } });
    await openConversation(conversation.id);
  } catch (error) { showError(error); }
});

function answerNode(turn, index) {
  const box = el("div", null, "msg assistant" + (turn.declined ? " declined" : ""));
  const byNumber = new Map(turn.citations.map((c) => [c.number, c]));
  const parts = turn.answer.split(/(\[\d{1,3}\])/);
  for (const part of parts) {
    const m = part.match(/^\[(\d{1,3})\]$/);
    if (m && byNumber.has(Number(m[1]))) {
      const c = byNumber.get(Number(m[1]));
      const b = el("button", m[1], "cite" + (c.inferred ? " inferred" : ""));
      b.type = "button"; b.title = `${c.title} (${c.collection})`;
      b.addEventListener("click", () => showPassage(c));
      box.append(b);
    } else {
      box.append(document.createTextNode(part));
    }
  }
  if (turn.citations.length) {
    box.append(el("div", "Sources: " + turn.citations.map((c) => `[${c.number}] ${c.title} (${c.collection})`).join("; "), "sources"));
  }
  const link = el("button", "Show decisions", "trace-link"); link.type = "button";
  link.addEventListener("click", () => showTrace(index));
  box.append(link);
  return box;
}

function renderMessages() {
  const box = $("messages"); box.replaceChildren();
  state.turns.forEach((turn, i) => {
    box.append(el("div", turn.question, "msg user"));
    box.append(answerNode(turn, i));
  });
  box.scrollTop = box.scrollHeight;
}

$("ask").addEventListener("submit", async (event) => {
  event.preventDefault(); showError();
  const question = $("question").value.trim();
  if (!question) return;
  if (!state.conversation) { showError("start a conversation first (tick collections, then New conversation)"); return; }
  $("send").disabled = true;
  $("messages").append(el("div", question, "msg user pending"));
  try {
    await api(`/api/conversations/${state.conversation.id}/messages`, { method: "POST", body: { question } });
    $("question").value = "";
    await openConversation(state.conversation.id);
  } catch (error) { showError(error); renderMessages(); }
  finally { $("send").disabled = false; }
});

// details -----------------------------------------------------------------------------------
async function showPassage(citation) {
  $("passage-panel").hidden = false;
  $("passage-meta").textContent = `[${citation.number}] ${citation.title} — collection ${citation.collection}, passage ${citation.passage_id}`;
  let text = citation.text;
  if (!text) {
    try { text = (await api(`/api/collections/${encodeURIComponent(citation.collection)}/passages/${encodeURIComponent(citation.passage_id)}`)).text; }
    catch (error) { text = String(error.message); }
  }
  $("passage-text").textContent = text;
  const link = $("passage-source"); const url = safeUrl(citation.url);
  if (url) { link.href = url; link.hidden = false; } else { link.removeAttribute("href"); link.hidden = true; }
}

function row(table, cells, cls) {
  const tr = el("tr", null, cls);
  for (const c of cells) tr.append(el("td", c));
  table.append(tr);
}

function showTrace(index) {
  const turn = state.turns[index]; const t = turn.trace || {}; const s = t.strategy || {};
  const body = $("trace-body"); body.replaceChildren();
  $("trace-panel").hidden = false;
  const facts = el("table");
  row(facts, ["question", s.original_query || turn.question]);
  row(facts, ["strategy", s.strategy || "-"]);
  row(facts, ["stage reached", s.stage || "-"]);
  row(facts, ["query used", s.final_query || "-"]);
  row(facts, ["no-op rewrite", s.noop ? "yes" : "no"]);
  if (t.fallback) row(facts, ["fallback", t.fallback]);
  if (t.empty_collections && t.empty_collections.length) row(facts, ["empty collections", t.empty_collections.join(", ")]);
  body.append(facts);
  if (s.context && s.context.length) {
    body.append(el("h3", "Context the strategy selected"));
    const pre = el("pre", s.context.map((c) => JSON.stringify(c)).join("\n")); body.append(pre);
  }
  for (const f of s.fallbacks || []) body.append(el("div", `fallback at ${f.stage}: ${f.reason} ${f.rejected ? "(" + f.rejected + ")" : ""}`));
  for (const call of s.calls || []) {
    body.append(el("h3", `LLM call: ${call.purpose} (${call.stage}), ${call.prompt_tokens} prompt tokens, ${call.latency_s.toFixed(2)} s${call.cached ? ", cached" : ""}`));
    body.append(el("pre", "asked: " + call.messages.map((m) => m.content).join("\n---\n") + "\n\nanswered: " + call.answer));
  }
  const merge = t.merge || {};
  body.append(el("h3", "Passages kept"));
  const kept = el("table");
  for (const r of merge.results || []) row(kept, [r.collection, r.title || r.passage_id, r.selection_reason]);
  body.append(kept);
  if ((merge.dropped || []).length) {
    body.append(el("h3", "Passages dropped"));
    const dropped = el("table");
    for (const d of merge.dropped) row(dropped, [d.collection, d.title || d.passage_id, `${d.reason}: ${d.detail}`], "dropped");
    body.append(dropped);
  }
  const answer = t.answer || {};
  if (answer.llm_call) {
    const call = answer.llm_call;
    body.append(el("h3", `Answer: ${call.prompt_tokens} prompt tokens, ${Number(call.latency_s).toFixed(2)} s${call.cached ? ", cached" : ""}`));
    body.append(el("pre", "asked: " + call.messages.map((m) => m.content).join("\n---\n") + "\n\nanswered: " + call.answer));
  }
  for (const key of ["fallback", "warning", "inferred_citations", "invalid_citations"]) {
    if (answer[key] !== undefined) body.append(el("div", `answer ${key.replace("_", " ")}: ${JSON.stringify(answer[key])}`));
  }
  body.append(el("h3", "Timings (s)"));
  const timings = el("table");
  for (const [k, v] of Object.entries(t.timings_s || {})) row(timings, [k, Number(v).toFixed(3)]);
  body.append(timings);
}

$("save-key").addEventListener("click", async () => {
  localStorage.setItem("convrag-key", $("api-key").value);
  $("key-box").hidden = true;
  await start();
});

async function start() {
  try { await loadCollections(); await loadConversations(); } catch (error) { showError(error); }
}
start();
