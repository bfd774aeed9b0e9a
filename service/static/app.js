// Start a run, follow its events live (EventSource), draw the timeline, then show the report.
// ?run=ID in the address shows an existing run.
"use strict";
(function () {
  var $ = function (id) { return document.getElementById(id); };
  var state = { runId: null, events: [], source: null, timer: null };
  $("token").value = sessionStorage.getItem("deep-research-token") || "";

  function headers(extra) {
    var h = Object.assign({}, extra || {}), token = $("token").value.trim();
    sessionStorage.setItem("deep-research-token", token);
    if (token) h.Authorization = "Bearer " + token;
    return h;
  }
  function showError(text) { $("error").textContent = text || ""; }
  function setStatus(text) { $("status").textContent = text; }
  function describeError(body, status) {
    if (body && body.details) return body.error + ": " + body.details.map(function (d) { return d.field + " " + d.message; }).join("; ");
    return (body && body.error) || "HTTP " + status;
  }

  async function start(ev) {
    ev.preventDefault();
    showError("");
    $("submit").disabled = true;
    try {
      var res = await fetch("/runs", {
        method: "POST",
        headers: headers({ "Content-Type": "application/json" }),
        body: JSON.stringify({ query: $("query").value, mode: $("mode").value }),
      });
      var body = await res.json().catch(function () { return null; });
      if (!res.ok) {
        var wait = res.headers.get("Retry-After");
        showError(describeError(body, res.status) + (wait ? " (retry in " + wait + " s)" : ""));
        return;
      }
      if (body && body.status === "gated") { showError(body.reply); return; }  // the intent gate answered: no run
      watch(body.run_id);
    } catch (err) {
      showError(String(err));
    } finally {
      $("submit").disabled = false;
    }
  }

  function watch(runId) {
    if (state.source) state.source.close();
    state = { runId: runId, events: [], source: null, timer: null };
    history.replaceState(null, "", "?run=" + encodeURIComponent(runId));
    $("run").hidden = false;
    $("events").replaceChildren();
    $("report").replaceChildren();
    $("cancel").hidden = false;
    setStatus("Run " + runId + ": running");
    var token = $("token").value.trim();
    var url = "/runs/" + encodeURIComponent(runId) + "/events" + (token ? "?access_token=" + encodeURIComponent(token) : "");
    var source = new EventSource(url);
    state.source = source;
    source.onmessage = function (msg) { onEvent(JSON.parse(msg.data)); };
    source.addEventListener("end", function (msg) {
      source.close();
      finish(runId, JSON.parse(msg.data).status);
    });
    state.timer = setInterval(function () { redraw(); }, 1000);
  }

  function onEvent(e) {
    state.events.push(e);
    $("event-count").textContent = String(state.events.length);
    var li = document.createElement("li");
    li.textContent = e.type + " " + JSON.stringify(e.payload);
    $("events").appendChild(li);
    var p = e.payload || {};
    if (e.type === "plan_ready") setStatus("Run " + state.runId + ": researching " + p.count + " sub-question(s)");
    if (e.type === "writing") setStatus("Run " + state.runId + ": writing the report");
    redraw();
  }

  function redraw() { window.drawTimeline($("timeline"), state.events, Date.now() / 1000); }

  async function finish(runId, status) {
    clearInterval(state.timer);
    redraw();
    $("cancel").hidden = true;
    setStatus("Run " + runId + ": " + status);
    // The service renders the report (tables, lists, code, citation links) and sanitizes it.
    var res = await fetch("/runs/" + encodeURIComponent(runId) + "/report/rendered", { headers: headers() });
    if (!res.ok) return;
    var body = await res.json();
    $("report").innerHTML = body.html;
    $("report").dataset.run = runId;
  }

  async function cancel() {
    if (!state.runId) return;
    $("cancel").disabled = true;
    var res = await fetch("/runs/" + encodeURIComponent(state.runId), { method: "DELETE", headers: headers() });
    $("cancel").disabled = false;
    if (!res.ok) showError(describeError(await res.json().catch(function () { return null; }), res.status));
  }

  $("start").addEventListener("submit", start);
  $("cancel").addEventListener("click", cancel);
  var existing = new URLSearchParams(location.search).get("run");
  if (existing) watch(existing);
})();
