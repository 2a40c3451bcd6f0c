// convrag web chat. Every piece of server or document text is inserted with textContent (answers
// through the DOM-building Markdown renderer), never as HTML, so a document containing <script>
// shows as text. Answers stream: tokens appear as the model writes them, then the stored turn
// (citations, decisions) replaces the draft.
"use strict";

// opening: the conversation being created, so a question sent meanwhile waits for it instead of failing
const state = { conversation: null, turns: [], documentsOf: null, replacing: null, opening: null, streaming: null };
const $ = (id) => document.getElementById(id);

function el(tag, text, cls) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  if (cls) node.className = cls;
  return node;
}

function button(text, onClick, cls = "small-button") {
  const b = el("button", text, cls); b.type = "button";
  b.addEventListener("click", onClick);
  return b;
}

function headers(json) {
  const h = {};
  const key = localStorage.getItem("convrag-key");
  if (key) h["Authorization"] = "Bearer " + key;
  if (json) h["Content-Type"] = "application/json";
  return h;
}

function errorMessage(data, response) {
  return (data && data.error && data.error.message) || (data && data.detail) || response.statusText || "request failed";
}

async function api(path, options = {}) {
  const init = { method: options.method || "GET", headers: headers(options.body !== undefined) };
  if (options.body !== undefined) init.body = JSON.stringify(options.body);
  const response = await fetch(path, init);
  if (response.status === 401) { $("key-box").hidden = false; }
  if (response.status === 204) return null;
  const data = await response.json().catch(() => ({}));
  if (!response.ok) throw new Error(errorMessage(data, response));
  return data;
}

// One message area for errors; every action clears it first, so nothing stale stays on screen.
function showError(error) { $("error").textContent = error ? String(error.message || error) : ""; }

async function action(work) {
  showError();
  try { await work(); } catch (error) { showError(error); }
}

function safeUrl(url) {
  if (!url) return null;
  if (url.startsWith("/api/")) return url;
  try { const u = new URL(url); return (u.protocol === "http:" || u.protocol === "https:") ? u.href : null; } catch { return null; }
}

function when(seconds) { return seconds ? new Date(seconds * 1000).toLocaleString() : ""; }

// collections -------------------------------------------------------------------------------
async function loadCollections() {
  const list = await api("/api/collections");
  const ticked = new Set(chosenCollections());  // the list is redrawn after every upload: keep the user's ticks
  const ul = $("collections"); ul.replaceChildren();
  const target = $("upload-target"); const chosen = target.value; target.replaceChildren();
  for (const c of list) {
    const li = el("li"); const label = el("label");
    const box = el("input"); box.type = "checkbox"; box.value = c.name; box.className = "collection-choice";
    box.checked = ticked.has(c.name);
    label.append(box, " " + c.name + " ", el("small", `(${counted(c.documents, "doc")}, ${counted(c.passages, "passage")}${c.indexing ? ", indexing" : ""})`));
    // a collection that cannot be read: said where it is chosen (an upload to it builds it again)
    if (c.problem) label.append(el("div", `cannot be searched: ${c.problem}`, "problem"));
    li.append(label, button("Documents", () => action(() => showDocuments(c.name, c.indexed))));
    ul.append(li);
    const option = el("option", c.name); option.value = c.name; target.append(option);
  }
  if (chosen) target.value = chosen;
  if (state.documentsOf && !list.some((c) => c.name === state.documentsOf)) $("documents-panel").hidden = true;
}

function chosenCollections() {
  return [...document.querySelectorAll(".collection-choice:checked")].map((b) => b.value);
}

function tickCollections(names) {
  for (const box of document.querySelectorAll(".collection-choice")) box.checked = names.includes(box.value);
}

// With a conversation open, the ticks start as its collections; a change is shown in its title and
// applied when the next question is asked in it. "New conversation" takes the ticks instead, and
// leaves the open one as it was; opening another conversation shows its own.
$("collections").addEventListener("change", (event) => {
  if (event.target.classList.contains("collection-choice") && state.conversation) showTitle(state.conversation);
});

function ticksChanged(conversation) {
  const chosen = chosenCollections();
  return chosen.length !== conversation.collections.length || chosen.some((c) => !conversation.collections.includes(c));
}

// Before a question: the conversation searches what is ticked, with the strategy chosen (one PATCH
// when either changed).
async function applyTicks(conversation) {
  const body = {};
  if (ticksChanged(conversation)) {
    body.collections = chosenCollections();
    if (!body.collections.length) throw new Error("tick at least one collection for this conversation to search");
  }
  if (strategyChanged(conversation)) body.strategy = $("strategy").value;
  if (!Object.keys(body).length) return;
  const changed = await api(`/api/conversations/${conversation.id}`, { method: "PATCH", body });
  conversation.collections = changed.collections; conversation.strategy = changed.strategy;
  showTitle(conversation);
}

// strategies --------------------------------------------------------------------------------
// The choice works as the ticks do: it starts as the open conversation's strategy, a change is shown
// in the title and applied by the next question; "New conversation" takes it. Only the strategies
// the server lists can be chosen (the server refuses any other).
async function loadStrategies() {
  const offered = await api("/api/strategies");
  const select = $("strategy"); select.replaceChildren();
  for (const s of offered.strategies) {
    const option = el("option", s.name + (s.needs_llm ? " (calls the model)" : "")); option.value = s.name;
    option.title = s.description; option.dataset.about = s.description;
    select.append(option);
  }
  chooseStrategy(state.conversation ? state.conversation.strategy : offered.default);
}

// A conversation whose strategy the server no longer offers shows it, marked, rather than another.
function chooseStrategy(name) {
  const select = $("strategy");
  for (const stale of select.querySelectorAll("option[disabled]")) if (stale.value !== name) stale.remove();
  if (![...select.options].some((o) => o.value === name)) {
    const option = el("option", `${name} (no longer offered)`); option.value = name; option.disabled = true;
    option.dataset.about = "This conversation's strategy is not offered by the server any more: choose another to go on.";
    select.append(option);
  }
  select.value = name;
  showStrategy();
}

function showStrategy() {
  const option = $("strategy").selectedOptions[0];
  const about = option ? option.dataset.about || "" : "";
  $("strategy-about").textContent = about.charAt(0).toUpperCase() + about.slice(1);
}

function strategyChanged(conversation) {
  return Boolean($("strategy").value) && $("strategy").value !== conversation.strategy;
}

$("strategy").addEventListener("change", () => {
  showStrategy();
  if (state.conversation) showTitle(state.conversation);
});

$("create-collection").addEventListener("submit", (event) => {
  event.preventDefault();
  action(async () => {
    const name = $("collection-name").value.trim();
    $("collection-status").textContent = "";
    const created = await api("/api/collections", { method: "POST", body: { name } });
    // a collection `convrag index` made (into the same Milvus, or the folder it builds in) is taken on as it is
    if (created.taken_on) {
      $("collection-status").textContent = `${name}: taken on as convrag index made it (${counted(created.documents, "document")}, ` +
        `${counted(created.passages, "passage")}, ${created.embedding_model}); uploads add to it`;
    }
    $("collection-name").value = "";
    await loadCollections();
    $("upload-target").value = name;
  });
});

// onRefused, where given, takes the files of an upload the server refused every one of (else an error shows).
function send(method, url, form, onDone, onRefused) {
  const xhr = new XMLHttpRequest();
  const bar = $("upload-progress"); bar.hidden = false; bar.value = 0;
  xhr.upload.onprogress = (e) => { if (e.lengthComputable) { bar.value = (50 * e.loaded) / e.total; } };
  xhr.onload = () => {
    let data = {}; try { data = JSON.parse(xhr.responseText); } catch { /* not JSON */ }
    const refused = Array.isArray(data.errors) && data.errors.length && data.errors.every((e) => e.file) ? data.errors : null;
    if (xhr.status !== 202 && onRefused && refused) { bar.hidden = true; onRefused(refused); return; }
    if (xhr.status !== 202) { showError(errorMessage(data, { statusText: xhr.statusText })); bar.hidden = true; return; }
    uploadRun.refused.push(...(data.refused || []));
    $("upload-status").textContent = "indexing…";
    pollJob(data.id, onDone);
  };
  xhr.onerror = () => showError("upload failed");
  xhr.open(method, url);
  for (const [k, v] of Object.entries(headers(false))) xhr.setRequestHeader(k, v);
  xhr.send(form);
}

// What an upload left out, said beside its result when its job is done.
let uploadNote = "";

// The files the server left out of an upload, each with its reason where few ("docs/empty.txt (empty file)").
function refusedNote(refused) {
  if (!refused.length) return "";
  const why = (r) => r.code.replace(/^not_a_(\w+)$/, (_, kind) => `not a .${kind} file`).replace(/_/g, " ");
  const sorted = [...refused].sort((a, b) => (a.file < b.file ? -1 : 1));
  return `; not uploaded, cannot be indexed: ${sorted.length <= 5 ? sorted.map((r) => `${r.file} (${why(r)})`).join(", ") : named(sorted.map((r) => r.file))}`;
}

// Names for a note: all of them when few, else counted by type (a folder's hundred pictures).
function named(names) {
  if (names.length <= 5) return names.join(", ");
  const kinds = {};
  for (const n of names) { const dot = n.lastIndexOf("."); const kind = dot > n.lastIndexOf("/") ? n.slice(dot).toLowerCase() : "(no suffix)"; kinds[kind] = (kinds[kind] || 0) + 1; }
  return `${names.length} files (${Object.entries(kinds).map(([k, n]) => `${k} ${n}`).join(", ")})`;
}

// Files of the types convrag reads are uploaded; the others (a folder's pictures and spreadsheets,
// dropped with its documents) are named and left out, as `convrag index` does with a folder: one
// of them made the server refuse the whole upload. Each file goes with its path inside a folder
// uploaded whole ("guides/index.md"), so that the many index.md of a documentation folder stay
// apart: the server refused an upload that named one file twice. Files that one request cannot
// carry (the server's limits, /api/upload-limits) go in parts, each indexed before the next is sent:
// a folder of more than 50 MB of documents was refused whole. A file the server's checks refuse (an
// empty file, a picture named .pdf) is left out and named, and the rest goes on: one such file
// refused its whole part, and a part that failed stopped the parts after it.
function uploadFiles(entries) {
  const name = $("upload-target").value;
  if (!name || !entries.length) { showError("choose a collection and files"); return; }
  const types = $("upload-files").accept.split(",");
  const typed = entries.filter(({ path }) => types.some((t) => path.toLowerCase().endsWith(t)));
  const left = entries.filter((e) => !typed.includes(e)).map(({ path }) => path);
  // a file's bytes in the request: its own, and its part's boundary and headers, which name its path
  const sent = ({ file, path }) => file.size + 256 + 3 * path.length;
  const room = uploadLimits.max_upload_bytes - 256;
  const kept = typed.filter((entry) => sent(entry) <= room);
  const large = typed.filter((e) => !kept.includes(e)).map(({ path }) => path);
  const most = uploadLimits.max_upload_bytes;
  uploadNote = (left.length ? `; not uploaded, not a type convrag reads: ${named(left)}` : "")
    + (large.length ? `; not uploaded, larger than one upload may be (${most >= 1e6 ? `${Math.floor(most / 1e6)} MB` : `${Math.floor(most / 1e3)} KB`}): ${named(large)}` : "");
  if (!kept.length) {
    showError(large.length ? `nothing to upload: ${uploadNote.slice(2)}` : `nothing to upload: convrag reads ${types.join(" ")} files, not ${named(left)}`);
    return;
  }
  const parts = [[]];
  let bytes = 0;
  for (const entry of kept) {
    const size = sent(entry);
    if (parts.at(-1).length && (parts.at(-1).length >= uploadLimits.max_upload_files || bytes + size > room)) { parts.push([]); bytes = 0; }
    parts.at(-1).push(entry);
    bytes += size;
  }
  uploadRun = newRun(parts.length);
  const sendPart = (index) => {
    uploadRun.part = index + 1;
    const form = new FormData();
    for (const { file, path } of parts[index]) form.append("files", file, path);
    const next = () => (index + 1 < parts.length ? sendPart(index + 1) : refreshDocuments(name));
    // a part of nothing but refused files, in a folder sent in parts: named, and the next part goes
    const skipPart = (refused) => {
      uploadRun.refused.push(...refused);
      if (index + 1 < parts.length) { sendPart(index + 1); return; }
      $("upload-status").textContent = partsIndexed() + endRun();
      refreshDocuments(name);
    };
    send("POST", `/api/collections/${encodeURIComponent(name)}/documents?skip_refused=true`, form, next,
      parts.length > 1 ? skipPart : undefined);
  };
  sendPart(0);
}

// The server's upload limits, read when the page opens (its defaults until then).
let uploadLimits = { max_upload_files: 2000, max_upload_bytes: 50_000_000 };
api("/api/upload-limits").then((limits) => { uploadLimits = limits; }, () => { /* an older server: the defaults */ });
// An upload sent in parts: which part is on its way, of how many, the files indexed so far, the parts
// that failed, and the files the server refused.
const newRun = (parts = 1) => ({ part: 1, parts, indexed: 0, failed: 0, refused: [] });
let uploadRun = newRun();
// What an upload sent in parts has done so far.
const partsIndexed = () => `indexed ${uploadRun.indexed} file(s) in ${uploadRun.part} of ${uploadRun.parts} uploads`
  + (uploadRun.failed ? ` (${uploadRun.failed} failed)` : "");
// The end of an upload: what it left out, said; the next starts afresh.
function endRun() {
  const note = uploadNote + refusedNote(uploadRun.refused);
  uploadNote = ""; uploadRun = newRun();
  return note;
}

// A picked or dropped file with its path: inside the folder it came with, else its name.
const withPath = (file, path) => ({ file, path: path || file.webkitRelativePath || file.name });

$("upload").addEventListener("submit", (event) => {
  event.preventDefault(); showError();
  uploadFiles([...$("upload-files").files].map((f) => withPath(f)));
});
// A page or a file read from the web into the chosen collection, with the pages under it when ticked:
// the server fetches them in a job, polled as an upload's is.
$("from-web").addEventListener("submit", async (event) => {
  event.preventDefault(); showError();
  const name = $("upload-target").value;
  if (!name) { showError("create a collection first"); return; }
  // an intranet's token or cookie, as "Name: value": sent to the site alone, held by the server for the job, never stored
  const header = $("web-header").value.trim();
  let job;
  try {
    job = await api(`/api/collections/${encodeURIComponent(name)}/web`,
      // a section read again mirrors the site: its pages no longer there go (the server keeps them after a partial crawl)
      { method: "POST", body: { url: $("web-address").value.trim(), crawl: $("web-crawl").checked, replace: $("web-crawl").checked,
                                headers: header ? [header] : [] } });
  } catch (error) { showError(error); return; }
  const bar = $("upload-progress"); bar.hidden = false; bar.value = 50;
  $("upload-status").textContent = "fetching…";
  pollJob(job.id, () => refreshDocuments(name));
});
$("pick-folder").addEventListener("click", () => $("upload-folder").click());
$("upload-folder").addEventListener("change", () => {
  showError();
  const files = [...$("upload-folder").files].filter((f) => !f.webkitRelativePath.split("/").some((part) => part.startsWith(".")));
  $("upload-folder").value = "";
  if (!files.length) { showError("nothing to upload: the folder holds no files"); return; }
  uploadFiles(files.map((f) => withPath(f)));
});

// The files under dropped folders and beside them, each with its path. A folder is walked as
// `convrag index` walks one: its subfolders too, hidden ones (.git) and hidden files left out. A
// folder dropped on the page had come as one nameless file, "not a type convrag reads".
async function walkEntries(entries) {
  const found = [];
  async function walk(entry, folder) {
    if (entry.name.startsWith(".")) return;
    if (entry.isFile) {
      found.push(withPath(await new Promise((done, fail) => entry.file(done, fail)), folder + entry.name));
    } else if (entry.isDirectory) {
      const reader = entry.createReader();
      for (;;) {  // a folder's entries come a batch at a time (100 in Chromium) until an empty one
        const batch = await new Promise((done, fail) => reader.readEntries(done, fail));
        if (!batch.length) break;
        for (const child of batch) await walk(child, `${folder}${entry.name}/`);
      }
    }
  }
  for (const entry of entries) await walk(entry, "");
  return found;
}
window.walkEntries = walkEntries;  // for the page's tests, which cannot drop a real folder

// Files dropped anywhere on the page go to the collection chosen under "Upload to"; without this
// the browser opened a dropped PDF in place of the chat.
document.addEventListener("dragover", (event) => {
  if (!event.dataTransfer || !event.dataTransfer.types.includes("Files")) return;
  event.preventDefault();
  document.body.classList.add("dropping");
});
document.addEventListener("dragleave", (event) => { if (!event.relatedTarget) document.body.classList.remove("dropping"); });
document.addEventListener("drop", (event) => {
  if (!event.dataTransfer || !event.dataTransfer.files.length) return;
  event.preventDefault(); showError();
  document.body.classList.remove("dropping");
  // the entries must be taken while the event lasts; the browser empties the drop after it
  const entries = [...event.dataTransfer.items].map((item) => item.webkitGetAsEntry && item.webkitGetAsEntry());
  if (!entries.some((entry) => entry && entry.isDirectory)) { uploadFiles([...event.dataTransfer.files].map((f) => withPath(f))); return; }
  walkEntries(entries.filter(Boolean)).then(
    (found) => (found.length ? uploadFiles(found) : showError("nothing to upload: the dropped folder holds no files")),
    (error) => showError(`the dropped folder could not be read: ${error.message || error}`));
});

async function pollJob(id, onDone) {
  const bar = $("upload-progress");
  let job;
  try { job = await api(`/api/jobs/${id}`); } catch (error) { showError(error); return; }
  const part = job.total ? job.done / job.total : 0;
  bar.value = 50 + 50 * (job.status === "succeeded" ? 1 : part);
  $("upload-status").textContent = `${job.status}: ${job.stage} ${job.total ? `${job.done}/${job.total}` : ""}`;
  if (job.status === "succeeded" || job.status === "failed") {
    if (job.status === "failed") showError(job.error);
    if (job.status === "succeeded") uploadRun.indexed += job.source !== "indexed" ? job.files.length : 0;
    else uploadRun.failed += 1;
    const more = uploadRun.part < uploadRun.parts;
    const what = job.source === "indexed" ? "brought in what convrag index built"
      : job.source === "web" ? `read ${job.files.length} page(s) from ${job.web.url}`
        + (job.remove.length ? `; removed ${job.remove.length} page(s) no longer there` : "") + (job.warning ? `; ${job.warning}` : "")
      : job.remove.length ? `removed ${job.remove.length} document(s)`
      : uploadRun.parts > 1 ? partsIndexed() : `indexed ${job.files.length} file(s)`;
    $("upload-status").textContent = (job.status === "succeeded" || uploadRun.parts > 1 ? what : "indexing failed")
      + (more ? "…" : endRun());
    await loadCollections();
    if (onDone) await onDone(job);
    return;
  }
  setTimeout(() => pollJob(id, onDone), 400);
}

// documents of one collection ---------------------------------------------------------------
async function showDocuments(name, indexed) {
  state.documentsOf = name;
  $("documents-panel").hidden = false;
  $("take-on-again").hidden = !indexed;  // `convrag index` has built a collection of this name
  $("documents-collection").textContent = name;
  await refreshDocuments(name);
}

async function refreshDocuments(name) {
  if (state.documentsOf !== name) return;
  const docs = await api(`/api/collections/${encodeURIComponent(name)}/documents`);
  const table = $("documents-table"); table.replaceChildren();
  if (!docs.length) { table.append(el("tr", "no documents yet")); return; }
  for (const d of docs) {
    const tr = el("tr");
    // a document of a collection taken on as `convrag index` made it has no file to download
    const link = el(d.uploaded ? "a" : "span", d.original);
    if (/^https?:\/\//i.test(d.original)) {  // a page read from the web: its link opens the page
      Object.assign(link, { href: d.original, target: "_blank", rel: "noopener noreferrer" });
    } else if (d.uploaded) link.href = `/api/collections/${encodeURIComponent(name)}/documents/${encodeURIComponent(d.doc_id)}/file`;
    else link.title = "indexed by convrag index: no uploaded file";
    const nameCell = el("td"); nameCell.append(link, el("span", ` ${d.passages} passages · ${when(d.added)}`, "when"));
    const actions = el("td");
    actions.append(
      button("Replace", () => { state.replacing = { name, doc: d.doc_id }; $("replace-file").click(); }),
      button("Delete", () => action(async () => {
        if (!confirm(`Delete ${d.original} from ${name}?`)) return;
        const job = await api(`/api/collections/${encodeURIComponent(name)}/documents/${encodeURIComponent(d.doc_id)}`, { method: "DELETE" });
        $("upload-status").textContent = "removing…"; $("upload-progress").hidden = false;
        pollJob(job.id, () => refreshDocuments(name));
      })),
    );
    tr.append(nameCell, actions); table.append(tr);
  }
}

$("replace-file").addEventListener("change", () => {
  showError();
  const file = $("replace-file").files[0]; const target = state.replacing;
  if (!file || !target) return;
  const form = new FormData(); form.append("file", file, file.name);
  send("PUT", `/api/collections/${encodeURIComponent(target.name)}/documents/${encodeURIComponent(target.doc)}`, form,
       () => refreshDocuments(target.name));
  $("replace-file").value = "";
});

$("take-on-again").addEventListener("click", () => action(async () => {
  const name = state.documentsOf;
  if (!name) return;
  const job = await api(`/api/collections/${encodeURIComponent(name)}/take-on`, { method: "POST" });
  $("upload-status").textContent = "bringing in what convrag index built…"; $("upload-progress").hidden = false;
  pollJob(job.id, () => refreshDocuments(name));
}));

$("delete-collection").addEventListener("click", () => action(async () => {
  const name = state.documentsOf;
  if (!name || !confirm(`Delete the collection ${name} and all its documents?`)) return;
  await api(`/api/collections/${encodeURIComponent(name)}`, { method: "DELETE" });
  state.documentsOf = null; $("documents-panel").hidden = true;
  await loadCollections();
}));

// conversations -----------------------------------------------------------------------------
async function loadConversations() {
  const list = await api("/api/conversations");
  const ul = $("conversations"); ul.replaceChildren();
  for (const c of list) {
    const li = el("li", `${c.title} (${c.turn_count})`);
    li.dataset.id = c.id; li.title = `updated ${when(c.updated)}`;
    if (state.conversation && state.conversation.id === c.id) li.className = "active";
    li.addEventListener("click", () => action(() => openConversation(c.id, true)));
    ul.append(li);
  }
}

// Show a conversation; `resumed`: the user opened it to go on, so the server reads its next prompt
// ahead while the question is typed (its prompt is no longer in the model's cache; after an answer
// the server reads ahead on its own)
async function openConversation(id, resumed = false) {
  const conversation = await api(`/api/conversations/${id}`);
  if (resumed) fetch(`/api/conversations/${id}/read-ahead`, { method: "POST", headers: headers(true), body: "{}" }).catch(() => {});
  state.conversation = conversation; state.turns = conversation.turns;
  tickCollections(conversation.collections);
  chooseStrategy(conversation.strategy);
  showTitle(conversation);
  $("chat-actions").hidden = false;
  renderMessages();
  await loadConversations();
}

function showTitle(conversation) {
  let pending = ticksChanged(conversation) ? ` · next question searches: ${chosenCollections().join(", ") || "nothing ticked"}` : "";
  if (strategyChanged(conversation)) pending += ` · next question's strategy: ${$("strategy").value}`;
  $("chat-title").textContent = `${conversation.title} — ${conversation.collections.join(", ")} (${conversation.strategy})${pending}`;
}

function closeConversation() {
  state.conversation = null; state.turns = [];
  $("chat-title").textContent = "Choose collections, then ask a question.";
  $("chat-actions").hidden = true;
  renderMessages();
}

$("new-chat").addEventListener("click", () => action(async () => {
  const collections = chosenCollections();
  if (!collections.length) throw new Error("tick at least one collection");
  const strategy = $("strategy").value || undefined;  // none listed yet: the server's default
  state.opening = api("/api/conversations", { method: "POST", body: { collections, strategy } })
    .then(conversation => openConversation(conversation.id));
  try { await state.opening; } finally { state.opening = null; }
}));

$("rename-chat").addEventListener("click", () => action(async () => {
  const title = prompt("New title", state.conversation.title);
  if (!title || !title.trim()) return;
  await api(`/api/conversations/${state.conversation.id}`, { method: "PATCH", body: { title: title.trim() } });
  await openConversation(state.conversation.id);
}));

$("delete-chat").addEventListener("click", () => action(async () => {
  if (!confirm(`Delete the conversation "${state.conversation.title}"?`)) return;
  await api(`/api/conversations/${state.conversation.id}`, { method: "DELETE" });
  closeConversation();
  await loadConversations();
}));

async function download(format) {
  const response = await fetch(`/api/conversations/${state.conversation.id}/export?format=${format}`, { headers: headers(false) });
  if (!response.ok) throw new Error(errorMessage(await response.json().catch(() => ({})), response));
  const url = URL.createObjectURL(await response.blob());
  const a = el("a"); a.href = url; a.download = `conversation-${state.conversation.id}.${format === "json" ? "json" : "md"}`;
  document.body.append(a); a.click(); a.remove(); URL.revokeObjectURL(url);
}
$("export-md").addEventListener("click", () => action(() => download("markdown")));
$("export-json").addEventListener("click", () => action(() => download("json")));

function citationRenderer(turn) {
  const byNumber = new Map(turn.citations.map((c) => [c.number, c]));
  return (text, parent) => {
    for (const part of text.split(/(\[\d{1,3}\])/)) {
      const m = part.match(/^\[(\d{1,3})\]$/);
      if (m && byNumber.has(Number(m[1]))) {
        const c = byNumber.get(Number(m[1]));
        const b = button(m[1], () => action(() => showPassage(c)), "cite" + (c.inferred ? " inferred" : ""));
        b.title = `${c.title} (${c.collection})${c.inferred ? " — matched by wording, not cited by the model" : ""}`;
        parent.append(b);
      } else if (part) {
        parent.append(document.createTextNode(part));
      }
    }
  };
}

// The collections a turn meant to search but could not (damaged, failed, timed out), name -> why.
function unsearched(turn) {
  return ((turn.trace || {}).search || {}).failures || {};
}

function answerNode(turn, index) {
  const box = el("div", null, "msg assistant" + (turn.declined ? " declined" : ""));
  box.append(Markdown.render(turn.answer, citationRenderer(turn)));
  if (turn.citations.length) {
    box.append(el("div", "Sources: " + turn.citations.map((c) => `[${c.number}] ${c.title} (${c.collection})`).join("; "), "sources"));
  }
  const warning = ((turn.trace || {}).answer || {}).warning;  // beside the answer: it is about whether to trust it
  if (warning) box.append(el("div", "Caution: " + warning, "caution"));
  for (const [name, why] of Object.entries(unsearched(turn))) {  // a source the answer could not draw from
    box.append(el("div", `Caution: the collection ${name} could not be searched (${why})`, "caution"));
  }
  box.append(el("span", when(turn.created), "when"));
  box.append(button("Show decisions", () => showTrace(index), "trace-link"));
  if (index === state.turns.length - 1) box.append(button("Regenerate", () => ask(null), "trace-link regenerate"));
  // declined by the gate without a model call ("best cosine 0.37 < 0.45"): the answer the model writes with the gate off
  const details = ((turn.trace || {}).answer || {}).details || {};
  if (index === state.turns.length - 1 && details.declined_below !== undefined) {
    box.append(button("Answer anyway", () => ask(null, { decline_below: 0 }), "trace-link answer-anyway"));
  }
  return box;
}

function renderMessages() {
  const box = $("messages"); box.replaceChildren();
  state.turns.forEach((turn, i) => {
    const q = el("div", turn.question, "msg user"); q.append(el("span", when(turn.created), "when"));
    box.append(q, answerNode(turn, i));
  });
  box.scrollTop = box.scrollHeight;
}

// Reads a text/event-stream response: calls onEvent(kind, data) for each event.
async function readEvents(response, onEvent) {
  const reader = response.body.getReader(); const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let cut;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, cut); buffer = buffer.slice(cut + 2);
      let kind = "message"; const data = [];
      for (const line of block.split("\n")) {
        if (line.startsWith("event: ")) kind = line.slice(7);
        else if (line.startsWith("data: ")) data.push(line.slice(6));
      }
      onEvent(kind, JSON.parse(data.join("\n")));
    }
  }
}

// Whether there is a conversation to ask in: one still being created is waited for (if creating it
// failed, its own handler shows why).
async function conversationReady() {
  if (state.opening && !(await state.opening.then(() => true, () => false))) return false;
  if (!state.conversation) showError("start a conversation first (tick collections, then New conversation)");
  return Boolean(state.conversation);
}

// Ask a question (or, with question null, regenerate the last answer, with `again` its options),
// streaming the answer.
async function ask(question, again = {}) {
  showError();
  $("send").disabled = true;  // from the start: a second click while the conversation is created would ask twice
  if (!(await conversationReady())) { $("send").disabled = false; return; }
  try { await applyTicks(state.conversation); } catch (error) { showError(error); $("send").disabled = false; return; }
  const box = $("messages");
  if (question === null) { box.lastChild && box.lastChild.remove(); } else { box.append(el("div", question, "msg user pending")); }
  const draft = el("div", "", "msg assistant streaming"); box.append(draft);
  const path = question === null ? "regenerate" : "messages";
  const body = question === null ? { ...again, stream: true } : { question, stream: true };
  try {
    state.streaming = state.conversation.id;  // what Stop stops, even if another conversation is opened meanwhile
    const response = await fetch(`/api/conversations/${state.streaming}/${path}`,
                                 { method: "POST", headers: headers(true), body: JSON.stringify(body) });
    if (response.status === 401) $("key-box").hidden = false;
    if (!response.ok) throw new Error(errorMessage(await response.json().catch(() => ({})), response));
    $("stop").disabled = false; $("stop").hidden = false;
    let failure = null; let stopped = false;
    await readEvents(response, (kind, data) => {
      if (kind === "token") {
        // followed while the reader is at the end; one who scrolled up to read an earlier answer is left there
        const following = box.scrollHeight - box.scrollTop - box.clientHeight < 40;
        draft.textContent += data.text;
        if (following) box.scrollTop = box.scrollHeight;
      }
      else if (kind === "error") failure = new Error(data.error.message);
      else if (kind === "stopped") stopped = true;
    });
    if (failure) throw failure;
    // a stopped answer is not stored: the question stays in the box, to edit or ask again
    if (question !== null && !stopped) $("question").value = "";
    await openConversation(state.conversation.id);
    if (stopped) showError("Stopped: the answer was not kept.");
  } catch (error) { renderMessages(); showError(error); }
  finally { $("send").disabled = false; $("stop").hidden = true; state.streaming = null; }
}

// Stop the answer being written: the server ends its stream with a "stopped" event.
$("stop").addEventListener("click", () => action(async () => {
  $("stop").disabled = true;
  if (!state.streaming) return;
  const response = await fetch(`/api/conversations/${state.streaming}/stop`, { method: "POST", headers: headers(true), body: "{}" });
  if (!response.ok) throw new Error(errorMessage(await response.json().catch(() => ({})), response));
}));

// Enter asks, as in other chats; Shift+Enter starts a new line, and an input method still composing
// text (Japanese, Chinese) keeps its Enter to confirm the text
$("question").addEventListener("keydown", (event) => {
  if (event.key !== "Enter" || event.shiftKey || event.isComposing) return;
  event.preventDefault();
  if (!$("send").disabled) $("ask").requestSubmit();
});

$("ask").addEventListener("submit", (event) => {
  event.preventDefault();
  const question = $("question").value.trim();
  if (question) ask(question);
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

// "1 passage", "2 passages"
function counted(n, word) {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

function row(table, cells, cls) {
  const tr = el("tr", null, cls);
  for (const c of cells) tr.append(el("td", c));
  table.append(tr);
}

// the request parameters the model's endpoint refuses, which the call was sent without
function sentWithout(call) {
  return call.sent_without && call.sent_without.length ? `, sent without ${call.sent_without.join(", ")} (the endpoint refuses them)` : "";
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
  if (t.social) row(facts, ["social turn", `${t.social.kind}: replied without a search or a model call`]);
  if (t.routing) row(facts, ["collections searched", `${t.routing.kept.join(", ")} (scores ${Object.entries(t.routing.scores).map(([n, v]) => `${n} ${Number(v).toFixed(2)}`).join(", ")})`]);
  const search = t.search || {};
  if (search.seconds) row(facts, ["search time", Object.entries(search.seconds).map(([n, v]) => `${n} ${(Number(v) * 1000).toFixed(0)} ms`).join(", ") || "-"]);
  for (const [name, why] of Object.entries(unsearched(turn))) row(facts, [`not searched: ${name}`, why], "dropped");
  for (const extra of (s.details && s.details.fused_with) || []) row(facts, ["fused with", extra]);
  if (t.empty_collections && t.empty_collections.length) row(facts, ["empty collections", t.empty_collections.join(", ")]);
  body.append(facts);
  if (s.context && s.context.length) {
    body.append(el("h3", "Context the strategy selected"));
    body.append(el("pre", s.context.map((c) => JSON.stringify(c)).join("\n")));
  }
  for (const f of s.fallbacks || []) body.append(el("div", `fallback at ${f.stage}: ${f.reason} ${f.rejected ? "(" + f.rejected + ")" : ""}`));
  for (const call of s.calls || []) {
    body.append(el("h3", `LLM call: ${call.purpose} (${call.stage}), ${call.prompt_tokens} prompt tokens, ${call.latency_s.toFixed(2)} s${call.cached ? ", cached" : ""}${sentWithout(call)}`));
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
    body.append(el("h3", `Answer: ${call.prompt_tokens} prompt tokens, ${Number(call.latency_s).toFixed(2)} s${call.cached ? ", cached" : ""}${sentWithout(call)}`));
    body.append(el("pre", "asked: " + call.messages.map((m) => m.content).join("\n---\n") + "\n\nanswered: " + call.answer));
  }
  for (const key of ["fallback", "warning", "inferred_citations", "repointed_citations", "invalid_citations"]) {
    if (answer[key] !== undefined) body.append(el("div", `answer ${key.replace("_", " ")}: ${JSON.stringify(answer[key])}`));
  }
  const details = answer.details || {};
  // a turn the gate declined said "best cosine 0.37 < 0.45" and not where that floor is set
  if (details.declined_below !== undefined) body.append(el("div", "the floor is the server's decline_below setting (or its pipeline's): lower it if the passages kept hold the answer"));
  if (details.compression) {
    const c = details.compression;
    const withBefore = c.relevance_in_context === undefined ? "" : `, ${Number(c.relevance_in_context).toFixed(2)} with the question before it`;
    const under = c.relevance_heading ? ` read under "${c.relevance_heading}"` : "";
    body.append(el("div", `answer prompt: ${c.kept_sentences.reduce((a, b) => a + b, 0)} of ${c.total_sentences.reduce((a, b) => a + b, 0)} passage sentences (relevance ${Number(c.relevance).toFixed(2)}${under}${withBefore})`));
  }
  if (details.grounding !== undefined) body.append(el("div", `answer grounding in the passages: ${Number(details.grounding).toFixed(2)}`));
  for (const sentence of details.declined_in_part || []) body.append(el("div", `declined in part, the rest answered: ${sentence}`));
  if (details.grouped_citations) body.append(el("div", `numbers cited together, each made a marker: ${details.grouped_citations.join(", ")}`));
  if (details.repeat) body.append(el("div", "the answer repeats an earlier answer word for word"));
  if (details.repeat_retry) body.append(el("div", `the first answer repeated an earlier answer (${details.repeat_retry.first.answer}): written again, sampled (seed ${details.repeat_retry.sampling.seed})${details.repeat_retry.again ? "; it repeated again, and stands" : ""}`));
  if (details.echo_retry) body.append(el("div", `the first answer repeated the question word for word (${details.echo_retry.first.answer}): written again, sampled (seed ${details.echo_retry.sampling.seed})`));
  if (details.steering) {
    const s = details.steering;
    const doubt = s.first_choice_p === undefined || s.first_choice_p === null ? "" : `; the model's doubt (decline sentence first): ${Number(s.first_choice_p).toFixed(2)}${s.first_choice_forced ? ", declined on it" : ""}`;
    const refused = s.citation_refused ? ` (${s.citation_refused} written on without a number after the opener)` : "";
    body.append(el("div", `steered decoding: ${s.citation_nudges ?? 0} sentence(s) made to cite${refused}${doubt}`));
  }
  body.append(el("h3", "Timings (s)"));
  const timings = el("table");
  for (const [k, v] of Object.entries(t.timings_s || {})) row(timings, [k, Number(v).toFixed(3)]);
  body.append(timings);
}

$("save-key").addEventListener("click", () => action(async () => {
  localStorage.setItem("convrag-key", $("api-key").value);
  $("key-box").hidden = true;
  await start();
}));

async function start() {
  await action(async () => { await loadCollections(); await loadStrategies(); await loadConversations(); });
}
start();
