// A small, safe Markdown renderer for answers: it builds DOM nodes and sets only textContent and
// vetted attributes, never innerHTML, so model output (or a document quoted by it) cannot inject
// markup. Supported: paragraphs, headings, bullet and numbered lists (numbered from their first
// item's number), fenced code, inline code, **bold**, *italic*, and [links](https://...) to http(s)
// addresses. `plain(text, parent)` renders runs of ordinary text (the chat uses it to turn [n]
// citation markers into buttons).
"use strict";

const Markdown = (() => {
  const INLINE = /(`[^`]+`)|(\*\*[^*]+\*\*)|(\*[^*\s][^*]*\*)|((?<!\w)_[^_\s][^_]*_(?!\w))|(\[[^\]]+\]\((https?:\/\/[^\s)]+)\))/;

  // _emphasis_ only between word boundaries, as CommonMark reads it: "max_connections and min_idle_time"
  // (a cloud setting's names) rendered "connections and min" in italics, its underscores gone
  function defaultPlain(text, parent) { parent.append(document.createTextNode(text)); }

  function inline(text, parent, plain) {
    let rest = text;
    while (rest) {
      const m = rest.match(INLINE);
      if (!m) { plain(rest, parent); return; }
      if (m.index > 0) plain(rest.slice(0, m.index), parent);
      const token = m[0];
      let node;
      if (m[1]) { node = document.createElement("code"); node.textContent = token.slice(1, -1); }
      else if (m[2]) { node = document.createElement("strong"); inline(token.slice(2, -2), node, plain); }
      else if (m[3] || m[4]) { node = document.createElement("em"); inline(token.slice(1, -1), node, plain); }
      else {
        node = document.createElement("a");
        node.textContent = token.slice(1, token.indexOf("]("));
        node.href = m[6]; node.target = "_blank"; node.rel = "noopener noreferrer";
      }
      parent.append(node);
      rest = rest.slice(m.index + token.length);
    }
  }

  function render(text, plain = defaultPlain) {
    const out = document.createDocumentFragment();
    const lines = String(text || "").replace(/\r\n?/g, "\n").split("\n");
    let i = 0;
    while (i < lines.length) {
      const line = lines[i];
      if (!line.trim()) { i += 1; continue; }
      if (line.trim().startsWith("```")) {
        const pre = document.createElement("pre"); const code = document.createElement("code");
        const body = []; i += 1;
        while (i < lines.length && !lines[i].trim().startsWith("```")) { body.push(lines[i]); i += 1; }
        i += 1; code.textContent = body.join("\n"); pre.append(code); out.append(pre); continue;
      }
      const heading = line.match(/^(#{1,6})\s+(.*)$/);
      if (heading) {
        const h = document.createElement(heading[1].length <= 2 ? "h3" : "h4");
        inline(heading[2], h, plain); out.append(h); i += 1; continue;
      }
      const bullet = /^\s*[-*+]\s+/; const numbered = /^\s*\d{1,3}[.)]\s+/;
      if (bullet.test(line) || numbered.test(line)) {
        const kind = bullet.test(line) ? bullet : numbered;
        const list = document.createElement(kind === bullet ? "ul" : "ol");
        // a list numbered on from an earlier one ("1. Fill in the form" / a blank line or a sentence /
        // "2. Pay the fee", as a model writes steps) keeps its number: each <ol> began again at 1
        if (kind === numbered) list.start = parseInt(line.trim(), 10);
        while (i < lines.length && kind.test(lines[i])) {
          const li = document.createElement("li"); inline(lines[i].replace(kind, ""), li, plain); list.append(li); i += 1;
        }
        out.append(list); continue;
      }
      const p = document.createElement("p"); const body = [];
      while (i < lines.length && lines[i].trim() && !/^(#{1,6}\s|```|\s*[-*+]\s|\s*\d{1,3}[.)]\s)/.test(lines[i])) {
        body.push(lines[i]); i += 1;
      }
      inline(body.join("\n"), p, plain); out.append(p);
    }
    return out;
  }

  return { render };
})();
