// A tiny Markdown renderer for the reports this service writes: headings, paragraphs, lists,
// block quotes, rules, **bold**, _italic_, `code`, [text](url) links and backslash escapes.
// A bare [n] becomes a link to the n-th source; the items of the "Sources" list get ids source-n.
"use strict";
(function () {
  function esc(s) {
    return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
  }
  function safeUrl(u) {
    return /^(https?:|mailto:|#)/i.test(u) ? u : "#";
  }
  function inline(text) {
    var out = "", i = 0, m;
    while (i < text.length) {
      var rest = text.slice(i);
      if (rest[0] === "\\" && rest.length > 1 && /[\\`*_\[\]()#+\-.!>~|{}<=]/.test(rest[1])) {
        out += esc(rest[1]); i += 2; continue;
      }
      if ((m = /^`([^`]*)`/.exec(rest))) { out += "<code>" + esc(m[1]) + "</code>"; i += m[0].length; continue; }
      if ((m = /^\[(\d+)\](?!\()/.exec(rest))) {
        out += '<a class="cite" href="#source-' + m[1] + '">[' + m[1] + "]</a>"; i += m[0].length; continue;
      }
      if ((m = /^\[([^\]]+)\]\(([^)\s]+)\)/.exec(rest))) {
        out += '<a href="' + esc(safeUrl(m[2])) + '" rel="noopener noreferrer">' + inline(m[1]) + "</a>";
        i += m[0].length; continue;
      }
      if ((m = /^\*\*([^*]+)\*\*/.exec(rest))) { out += "<strong>" + inline(m[1]) + "</strong>"; i += m[0].length; continue; }
      if ((m = /^_([^_]+)_(?![A-Za-z0-9])/.exec(rest)) && (i === 0 || !/[A-Za-z0-9]/.test(text[i - 1]))) {
        out += "<em>" + inline(m[1]) + "</em>"; i += m[0].length; continue;
      }
      out += esc(rest[0]); i += 1;
    }
    return out;
  }
  function render(md) {
    var lines = md.replace(/\r\n?/g, "\n").split("\n");
    var html = [], para = [], list = null, inSources = false;
    function flushPara() { if (para.length) { html.push("<p>" + inline(para.join(" ")) + "</p>"); para = []; } }
    function closeList() { if (list) { html.push("</" + list + ">"); list = null; } }
    function openList(kind) { if (list !== kind) { closeList(); html.push("<" + kind + ">"); list = kind; } }
    for (var k = 0; k < lines.length; k++) {
      var line = lines[k], m;
      if (!line.trim()) { flushPara(); closeList(); continue; }
      if ((m = /^(#{1,6})\s+(.*)$/.exec(line))) {
        flushPara(); closeList();
        var level = m[1].length;
        inSources = level === 2 && /^sources$/i.test(m[2].trim());
        html.push("<h" + level + ">" + inline(m[2]) + "</h" + level + ">");
        continue;
      }
      if (/^\s{0,3}([-*_])(\s*\1){2,}\s*$/.test(line)) { flushPara(); closeList(); html.push("<hr>"); continue; }
      if ((m = /^>\s?(.*)$/.exec(line))) { flushPara(); closeList(); html.push("<blockquote>" + inline(m[1]) + "</blockquote>"); continue; }
      if ((m = /^\s*[-*+]\s+(.*)$/.exec(line))) { flushPara(); openList("ul"); html.push("<li>" + inline(m[1]) + "</li>"); continue; }
      if ((m = /^\s*(\d+)[.)]\s+(.*)$/.exec(line))) {
        flushPara(); openList("ol");
        var id = inSources ? ' id="source-' + m[1] + '"' : "";
        html.push("<li value=\"" + m[1] + "\"" + id + ">" + inline(m[2]) + "</li>");
        continue;
      }
      closeList(); para.push(line.trim());
    }
    flushPara(); closeList();
    return html.join("\n");
  }
  window.renderMarkdown = render;
})();
