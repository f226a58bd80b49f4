const DATA = JSON.parse(document.getElementById("board-data").textContent);
const C = JSON.parse(document.getElementById("board-colours").textContent);
const MARKS = ["X", "O"];
let rules = "wpi", line = [], ply = 0;         // the game: its moves, and how many are on the board
let rulesCore = null, worker = null, workerReady = null, searchId = 0, searching = null;
let analysing = false, engineSide = "", lines = [], lastReply = "";
window.engineLog = [];                         // every move the engine played, for the browser test
const $ = (id) => document.getElementById(id);

function cellText(m) { return Math.floor(m / 9) + " " + (m % 9); }
function xView(score, turn) { return turn === 0 ? score : -score; }
function say(text) { $("status").textContent = text; }
function showError(text) { const box = $("errors"); box.hidden = false; box.textContent = text; }

// -- the worker: the engine --------------------------------------------------------------
function startWorker() {
  const source = document.getElementById("core-script").textContent + document.getElementById("worker-script").textContent;
  worker = new Worker(URL.createObjectURL(new Blob([source], {type: "text/javascript"})));
  workerReady = new Promise((resolve) => {
    worker.onmessage = (event) => {
      const m = event.data;
      if (m.type === "ready") resolve();
      else if (m.type === "error") showError("The engine: " + m.text);
      else if (searching && m.id === searching.id) searching.onResult(m.result, m.done);
    };
  });
  worker.onerror = (event) => showError("The engine: " + event.message);
  worker.postMessage({type: "init", data: DATA});
}
function stopSearch() {               // a search cannot be interrupted: its worker is replaced
  if (!searching) return;
  searching = null;
  worker.terminate();
  startWorker();
}
async function search(limit, onResult) {
  stopSearch();
  const id = ++searchId;
  searching = {id, onResult};
  await workerReady;
  if (!searching || searching.id !== id) return;
  worker.postMessage({type: "search", id, rules, moves: line.slice(0, ply), limit});
}

// -- analysis and play -------------------------------------------------------------------
function gameOver() { return rulesCore.state().winner !== -1; }
function think() {                     // what the engine should do now, for the position shown
  const turn = ply % 2;
  lines = [];
  showLines();
  if (gameOver()) { stopSearch(); say("The game is over"); return; }
  if (engineSide === MARKS[turn] && ply === line.length) {
    const limit = $("limit-kind").value === "depth" ? {depth: Math.max(1, Math.round(Number($("limit-value").value)))}
                                                    : {seconds: Math.max(0.01, Number($("limit-value").value))};
    say("The engine thinks (" + ($("limit-kind").value === "depth" ? "depth " + limit.depth : limit.seconds + " s") + ")");
    const at = ply;
    search(limit, (result, done) => {
      lines.unshift(Object.assign({turn}, result));
      showLines();
      if (!done) return;
      searching = null;
      window.engineLog.push({moves: line.slice(0, at), rules, move: result.move, score: result.score,
                             depth: result.depth, nodes: result.nodes, pv: result.pv});
      lastReply = cellText(result.move) + ", " + scoreText(xView(result.score, turn)) + " at depth " + result.depth;
      if (ply === at) play(result.move);
    });
  } else if (analysing) {
    say("The engine analyses");
    search({depth: DATA.max_ply - 1}, (result, done) => {
      if (window.firstResultMs === undefined) window.firstResultMs = performance.now();  // since the page was asked for
      lines.unshift(Object.assign({turn}, result));
      showLines();
      if (done) { searching = null; say("Analysis done: depth " + result.depth + (result.proven ? ", proven" : "")); }
    });
  } else {
    stopSearch();
    say(engineSide ? "Your move" + (lastReply ? " (the engine played " + lastReply + ")" : "") : "");
  }
}
function showLines() {
  const body = $("lines");
  clear(body);
  for (const r of lines) {
    const row = el("tr");
    row.appendChild(el("td", {}, r.depth + (r.proven ? "*" : "")));
    row.appendChild(el("td", {class: "score"}, scoreText(xView(r.score, r.turn))));
    row.appendChild(el("td", {class: "pv"}, r.pv.length ? r.pv.map(cellText).join(", ") : cellText(r.move)));
    row.appendChild(el("td", {class: "nodes"}, r.nodes.toLocaleString("en")));
    row.appendChild(el("td", {}, r.elapsed.toFixed(2)));
    body.appendChild(row);
  }
  const best = lines[0];
  $("best").textContent = best ? "Best " + cellText(best.move) + ", " + scoreText(xView(best.score, best.turn)) +
    " (X's view, X's expected result " + Math.round(100 * expected(xView(best.score, best.turn))) + " %), depth " +
    best.depth : "";
  document.body.dataset.depth = best ? best.depth : 0;
  draw();
}

// -- the game line -------------------------------------------------------------------------
function setPly(k) {
  ply = Math.max(0, Math.min(line.length, k));
  rulesCore.setMoves(rules, line.slice(0, ply));
  showMoves();
  think();
}
function play(move) {                  // a move on the board shown: the line goes on from here
  if (!rulesCore.legal().includes(move)) return false;
  line = line.slice(0, ply);
  line.push(move);
  setPly(ply + 1);
  return true;
}
function load(newRules, moves) {       // a position: its moves from the empty board
  const core = rulesCore;
  const bad = core.setMoves(newRules, moves);
  if (bad >= 0) {
    showError("Move " + (bad + 1) + " (" + cellText(moves[bad]) + ") is not legal there; the position stops before it.");
    moves = moves.slice(0, bad);
  }
  rules = newRules;
  $("rules").value = rules;
  line = moves;
  setPly(line.length);
}
function parseMoves(text) {            // "4 4, 4 0" or "4440": board and spot digits, in pairs
  const digits = (text.match(/[0-9]/g) || []).map(Number);
  if (digits.some(d => d > 8)) throw new Error("boards and spots are 0 to 8");
  if (digits.length % 2) throw new Error("each move is a board and a spot: an odd number of digits");
  const moves = [];
  for (let i = 0; i < digits.length; i += 2) moves.push(9 * digits[i] + digits[i + 1]);
  return moves;
}
function showMoves() {
  const body = $("moves");
  clear(body);
  for (let i = 0; i < line.length; i++) {
    const row = el("tr", {"data-ply": i + 1, class: i + 1 === ply ? "current" : (i + 1 > ply ? "ahead" : "")});
    row.appendChild(el("td", {}, i + 1));
    row.appendChild(el("td", {class: "mark-" + MARKS[i % 2]}, MARKS[i % 2]));
    row.appendChild(el("td", {}, cellText(line[i])));
    row.onclick = () => setPly(i + 1);
    body.appendChild(row);
  }
  const current = body.querySelector("tr.current"), box = $("moves-box");
  if (current) box.scrollTop = current.offsetTop - box.clientHeight / 2;   // only its own list scrolls
  const s = rulesCore.state();
  const text = s.winner === 0 || s.winner === 1 ? MARKS[s.winner] + " wins" : s.winner === 2 ? "A draw"
    : MARKS[s.turn] + " to play in " + (s.forced >= 0 ? "board " + s.forced : "any open board");
  $("position-text").textContent = "Move " + ply + " of " + line.length + " \u00b7 " + text;
  $("position").value = line.slice(0, ply).map(cellText).join(", ");
  history.replaceState(null, "", "#rules=" + rules + "&moves=" + line.slice(0, ply).map(m => cellText(m).replace(" ", "")).join(""));
  document.body.dataset.ply = ply;
  document.body.dataset.over = s.winner === -1 ? "" : "1";
}
function draw() {
  const root = $("board");
  clear(root);
  const {cells, status} = rulesCore.cells();
  const s = rulesCore.state(), legal = new Set(rulesCore.legal());
  svg(root, "rect", {x: 0, y: 0, width: SIDE, height: SIDE, fill: "#fff"});
  for (let b = 0; b < 9; b++) for (let sp = 0; sp < 9; sp++) {
    const m = 9 * b + sp, [x, y] = cellXY(b, sp);
    const last = ply > 0 && line[ply - 1] === m;
    const rect = svg(root, "rect", {x: x + 1, y: y + 1, width: CELL - 2, height: CELL - 2,
                                    fill: last ? C.lastMove : legal.has(m) ? C.toPlay : "transparent",
                                    "fill-opacity": legal.has(m) ? 0.45 : 1,
                                    class: "cell" + (legal.has(m) ? " legal" : ""), "data-cell": m,
                                    "data-mark": cells[m] ? MARKS[cells[m] - 1] : ""});
    svg(rect, "title", {}, "board " + b + ", spot " + sp);
    rect.addEventListener("click", () => { if (engineSide !== MARKS[ply % 2]) play(m); });
  }
  drawLines(root);
  const inset = 0.24 * CELL;
  for (let m = 0; m < 81; m++) if (cells[m]) {
    const [x, y] = cellXY(Math.floor(m / 9), m % 9);
    drawMark(root, MARKS[cells[m] - 1], x + inset, y + inset, CELL - 2 * inset, 4,
             status[Math.floor(m / 9)] === 1 || status[Math.floor(m / 9)] === 2 ? 0.35 : 1, "mark");
  }
  for (let b = 0; b < 9; b++) drawBoardResult(root, b, ".XO="[status[b]]);
  if (s.winner === -1 && s.forced >= 0) drawForced(root, s.forced);
  drawSpotNumbers(root);
  const best = lines[0];
  if (best && s.winner === -1) {
    const [x, y] = cellXY(Math.floor(best.move / 9), best.move % 9);
    svg(root, "circle", {cx: x + CELL / 2, cy: y + CELL / 2, r: CELL / 2 - 7, fill: "none", stroke: C.suggestion,
                         "stroke-width": 4, "stroke-dasharray": "5 3", class: "engine-best"});
  }
}

// -- start ---------------------------------------------------------------------------------
document.addEventListener("keydown", event => {
  const tag = event.target && event.target.tagName;
  if (tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA" || event.altKey || event.ctrlKey || event.metaKey) return;
  const actions = {ArrowLeft: () => setPly(ply - 1), ArrowRight: () => setPly(ply + 1),
                   Home: () => setPly(0), End: () => setPly(line.length)};
  if (actions[event.key]) { event.preventDefault(); actions[event.key](); }
});
async function start() {
  $("board").setAttribute("viewBox", "0 0 " + SIDE + " " + SIDE);
  $("limit-value").value = DATA.default_seconds;
  $("evaluation").textContent = DATA.evaluation;
  rulesCore = await Core.create(DATA, 0);      // the rules: a core without a table
  startWorker();
  $("first").onclick = () => setPly(0);
  $("back").onclick = () => setPly(ply - 1);
  $("forward").onclick = () => setPly(ply + 1);
  $("last").onclick = () => setPly(line.length);
  $("analyse").onclick = () => { analysing = !analysing; $("analyse").textContent = analysing ? "Stop" : "Analyse"; think(); };
  $("side").onchange = () => { engineSide = $("side").value; think(); };
  $("limit-kind").onchange = () => { $("limit-value").value = $("limit-kind").value === "depth" ? 8 : DATA.default_seconds; };
  $("new").onclick = () => { $("errors").hidden = true; load($("rules").value, []); };
  $("rules").onchange = () => load($("rules").value, line.slice(0, ply));
  $("load").onclick = () => {
    $("errors").hidden = true;
    try { load($("rules").value, parseMoves($("position").value)); } catch (error) { showError(String(error.message)); }
  };
  const hash = new URLSearchParams(location.hash.slice(1));
  let moves = [];
  try { moves = parseMoves(hash.get("moves") || ""); } catch (error) { showError("The link's moves: " + error.message); }
  load(hash.get("rules") === "codingame" ? "codingame" : "wpi", moves);
  if (hash.get("analyse") === "1") $("analyse").click();
  document.body.dataset.ready = "1";
}
start().catch(error => showError("The page could not start: " + error.message));
