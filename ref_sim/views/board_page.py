"""The analysis board: our engine live in a web page, one self-contained HTML file.

    python -m ref_sim.board [-o board.html] [--moves "4 4, 4 0"] [--rules wpi|codingame]

The page carries the search core as WebAssembly (agent/data/core.wasm, the very file the agent
runs where no compiler built its C core), the fitted evaluation's tables and the Zobrist keys. It
runs the core in a Web Worker made from the page's own text, so it works opened from disk or from
any static host, with no server of ours. Set up a position by clicking moves or pasting them,
watch the engine's best move, score and principal variation grow depth by depth, play against it
at a time (or depth) per move, and step back and forth. ``uttt-replay`` writes one beside every
replay page and links each position to it (:func:`position_link`).

The worker mirrors agent.search.AlphaBeta.iterate around the core's root search (the aspiration
windows, the root's order, the principal variation from the table), and searches every position
with a fresh table: at a fixed depth its move, score, nodes and principal variation are the
Python search's (tests/test_board_page.py plays a game through the page and checks).
The rules the page draws with are the core's too (a second instance in the page), so it holds no
other copy of them.
"""

from __future__ import annotations

import argparse
import base64
import json
import struct
import sys
from html import escape
from pathlib import Path

from agent import core_wasm
from agent.eval_fitted import DEFAULT_DATA, load_data
from agent.rules import WPI, ZOBRIST_CELL, ZOBRIST_FORCED
from agent.search import ASPIRATION_GROWTH, MAX_PLY, PROVEN_SCORE, WIN_SCORE, Features
from agent.rules import IllegalMoveError, InvalidMoveError, Move, Position
from agent.cli_common import OneLineParser
from ref_sim.cli_common import entry_point, prog
from ref_sim.views.replay_page import COLOURS, ERRORS_SCRIPT, SHARED_SCRIPT

MODULE = "ref_sim.board"

#: The page's table: 2^20 slots of 16 bytes, 16 MiB of the browser's memory.
TT_SLOTS = 1 << 20
#: Seconds per move when the engine plays, until the user says otherwise.
DEFAULT_SECONDS = 1.0


def page_data() -> dict:
    """What the page's script needs, as JSON: the module, the evaluation, the keys, the constants."""
    fitted = load_data(DEFAULT_DATA)
    tables = struct.pack(f"<{3 * core_wasm.PATTERNS}i", *fitted["chance"], *fitted["mover"], *fitted["waiter"])
    w = fitted["weights"]
    return {
        "wasm": base64.b64encode(core_wasm.WASM_PATH.read_bytes()).decode("ascii"),
        "wasm_version": core_wasm.WASM_VERSION,
        "fitted": base64.b64encode(tables).decode("ascii"),
        "weights": [fitted["scale"], w["line"], w["board"], w["tempo"], w["free_move"]],
        "evaluation": Path(DEFAULT_DATA).name,
        "zobrist": [str(key) for key in (*ZOBRIST_CELL[0], *ZOBRIST_CELL[1], *ZOBRIST_FORCED)],
        "features": {name: getattr(Features(), name) for name in Features.names()},
        "aspiration_growth": ASPIRATION_GROWTH, "max_ply": MAX_PLY, "tt_slots": TT_SLOTS,
        "win_score": WIN_SCORE, "proven_score": PROVEN_SCORE, "score_per_logit": fitted["score_per_logit"],
        "default_seconds": DEFAULT_SECONDS,
    }


def position_link(page: str, rules: str, moves) -> str:
    """``page`` opened on the position after ``moves`` (cells 0-80, board * 9 + spot) under
    ``rules``: ``board.html#rules=wpi&moves=4440`` (each move its board and spot digits)."""
    return f"{page}#rules={rules}&moves={''.join(f'{m // 9}{m % 9}' for m in moves)}"


# The core as the page drives it (agent/core_wasm.c's calls), shared by the page and the worker.
CORE_SCRIPT = r"""
"use strict";
const BUFFER = {MOVES: 0, INTS: 1, CAN_WIN: 2, ZOBRIST: 3, FITTED: 4, POSITION: 7, CELLS: 8};
function bytesOf(base64) {
  const text = atob(base64), bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
  return bytes;
}
class Core {                         // one instance of the module: a position, a table, a search
  static async create(data, slots) {
    let exports = null;
    const imports = {
      wasi_snapshot_preview1: {clock_time_get: (id, precision, at) => {
        new DataView(exports.memory.buffer).setBigUint64(at, BigInt(Math.round(performance.now() * 1e6)), true);
        return 0;
      }},
      env: {poll: () => 0, memo: () => 0},  // nothing stops a search from outside; no classic memo
    };
    const {instance} = await WebAssembly.instantiate(bytesOf(data.wasm), imports);
    exports = instance.exports;
    const core = new Core(exports, data);
    if (exports.uttt_version() !== data.wasm_version) throw new Error("the page's core is of another version");
    core.view(BUFFER.ZOBRIST, BigUint64Array, 172).set(data.zobrist.map(BigInt));
    exports.uttt_fill_can_win();
    if (exports.uttt_init(slots) !== 0) throw new Error("no memory for the engine's table");
    const f = data.features;
    exports.uttt_set_features(f.lmr, f.age, f.solve);
    core.view(BUFFER.FITTED, Int32Array, 3 * 19683).set(new Int32Array(bytesOf(data.fitted).buffer));
    if (exports.uttt_set_fitted(...data.weights.map(BigInt)) !== 0) throw new Error("the evaluation was refused");
    return core;
  }
  constructor(exports, data) { this.x = exports; this.data = data; }
  view(kind, Type, count) {          // made anew each time: memory growth replaces the buffer
    return new Type(this.x.memory.buffer, this.x.uttt_buffer(kind), count);
  }
  ints(count) { return Array.from(this.view(BUFFER.INTS, Int32Array, count)); }
  // The position after ``moves`` (cells) under ``rules``: the index of the first illegal move, or -1.
  setMoves(rules, moves) {
    this.view(BUFFER.POSITION, Uint16Array, 27).fill(0);
    const code = this.x.uttt_set_position(-1, 0, -1, BigInt.asIntN(64, BigInt(this.data.zobrist[162])), 0,
                                          rules === "wpi" ? 1 : 0);
    if (code !== 0) throw new Error("the empty board was refused");
    for (let i = 0; i < moves.length; i++) if (!this.push(moves[i])) return i;
    return -1;
  }
  push(move) { return this.x.uttt_push(move) === 0; }
  pop() { this.x.uttt_pop(); }
  legal() { return Array.from(this.view(BUFFER.MOVES, Uint8Array, this.x.uttt_legal_moves())); }
  state() {
    this.x.uttt_state();
    const [turn, winner, forced, ply, left] = this.ints(5);
    return {turn, winner, forced, ply, left, key: this.x.uttt_key()};
  }
  cells() {
    this.x.uttt_cells();
    const all = this.view(BUFFER.CELLS, Uint8Array, 90);
    return {cells: Array.from(all.slice(0, 81)), status: Array.from(all.slice(81))};
  }
  probe(key) {
    if (!this.x.uttt_probe(key)) return null;
    const [depth, flag, score, move] = this.ints(4);
    return {depth, flag, score, move};
  }
  priorities(moves) {
    this.view(BUFFER.MOVES, Uint8Array, moves.length).set(moves);
    this.x.uttt_move_priority(moves.length);
    return this.ints(moves.length);
  }
  root(moves, depth, alpha, beta, reduce) {
    this.view(BUFFER.MOVES, Uint8Array, moves.length).set(moves);
    const done = this.x.uttt_root(moves.length, depth, alpha, beta, reduce ? 1 : 0);
    return done === 1 ? this.ints(2) : null;
  }
  rootBest() { return this.x.uttt_root_best() ? this.ints(2) : null; }
  nodes() { return Number(this.x.uttt_nodes()); }
}
"""

# The engine: agent.search.AlphaBeta.iterate around the core's root search, in a Web Worker.
WORKER_SCRIPT = r"""
const INFINITY = 1000001;
let core = null, data = null;
function iterate(limit, post) {      // AlphaBeta.iterate: a result after every depth
  const f = data.features, moves = core.legal(), start = performance.now();
  const deadline = limit.seconds ? start + 1000 * limit.seconds : null;
  core.x.uttt_reset();               // a fresh table: the same position, the same answer
  core.x.uttt_new_search(deadline === null ? 0 : 1, limit.seconds || 0, -1n, 0.01);
  const result = (fields) => Object.assign({nodes: core.nodes(), elapsed: (performance.now() - start) / 1000}, fields);
  let best = result({move: initialMove(moves), score: 0, depth: 0, pv: [], proven: false});
  if (moves.length === 1 && !limit.depth) return post(best, true);
  const solvedFrom = core.state().left <= f.solve ? 1 : core.state().left;
  for (let depth = 1; depth <= (limit.depth || data.max_ply - 1); depth++) {
    const wholeGame = depth >= solvedFrom;   // the depth that sees the whole game reduces nothing
    const found = windowedRoot(moves, depth, best.score, !wholeGame);
    if (found === null) {                    // a limit stopped this depth
      const better = core.rootBest() || failedHigh;
      if (better) Object.assign(best, {move: better[0], score: better[1]});
      return post(Object.assign(best, result({})), true);
    }
    const [score, move] = found;
    best = result({move, score, depth, pv: principalVariation(move, depth),
                   proven: Math.abs(score) >= data.proven_score || wholeGame});
    moves.splice(moves.indexOf(move), 1);
    moves.unshift(move);
    if (best.proven || depth === limit.depth || (deadline !== null && performance.now() >= deadline)) {
      return post(best, true);
    }
    post(best, false);
  }
  return post(best, true);
}
let failedHigh = null;
function windowedRoot(moves, depth, guess, reduce) {   // AlphaBeta._windowed_root
  failedHigh = null;
  let delta = data.features.asp;
  if (!delta || Math.abs(guess) >= data.proven_score) return core.root(moves, depth, -INFINITY, INFINITY, reduce);
  let alpha = guess - delta, beta = guess + delta;
  for (;;) {
    const found = core.root(moves, depth, alpha, beta, reduce);
    if (found === null) return null;
    const [score, move] = found;
    if (alpha < score && score < beta) return found;
    const forced = Math.abs(score) >= data.proven_score;
    delta *= data.aspiration_growth;
    if (score <= alpha) alpha = forced ? -INFINITY : Math.max(guess - delta, -INFINITY);
    else {
      beta = forced ? INFINITY : Math.min(guess + delta, INFINITY);
      failedHigh = [move, score];
      moves.splice(moves.indexOf(move), 1);
      moves.unshift(move);
    }
  }
}
function initialMove(moves) {        // AlphaBeta._initial_move
  const entry = core.probe(core.state().key);
  if (entry && moves.includes(entry.move)) return entry.move;
  const priorities = core.priorities(moves);
  return moves[priorities.indexOf(Math.max(...priorities))];
}
function principalVariation(move, depth) {   // AlphaBeta._principal_variation
  const pv = [move], seen = new Set([core.state().key]);
  core.push(move);
  let made = 1;
  while (pv.length < depth && core.state().winner === -1) {
    const key = core.state().key, entry = core.probe(key);
    if (entry === null || seen.has(key) || !core.legal().includes(entry.move)) break;
    seen.add(key);
    pv.push(entry.move);
    core.push(entry.move);
    made++;
  }
  for (let i = 0; i < made; i++) core.pop();
  return pv;
}
onmessage = async (event) => {
  const message = event.data;
  try {
    if (message.type === "init") {
      data = message.data;
      core = await Core.create(data, data.tt_slots);
      postMessage({type: "ready"});
    } else if (message.type === "search") {
      if (core.setMoves(message.rules, message.moves) >= 0) throw new Error("an illegal move in the position");
      iterate(message.limit, (result, done) => { postMessage({type: "result", id: message.id, done, result}); return result; });
    }
  } catch (error) {
    postMessage({type: "error", id: message.id, text: String(error && error.message || error)});
  }
};
"""

# The page: the board, the moves, the engine's lines and the controls.
SCRIPT = SHARED_SCRIPT + r"""
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
"""

STYLE = """
:root { --x: @x@; --o: @o@; --ink: @ink@; --faint: @faint@; --line: #d8dce2; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.4 system-ui, "DejaVu Sans", Helvetica, Arial, sans-serif;
       color: var(--ink); background: #f5f6f8; }
header { padding: 6px 16px; background: #fff; border-bottom: 1px solid var(--line);
         display: flex; flex-wrap: wrap; align-items: center; gap: 8px 14px; }
header h1 { font-size: 18px; margin: 0; }
#position { width: 24em; }
#errors { margin: 8px 16px; padding: 8px; background: #fde8e8; color: #8a1010;
          border: 1px solid #f3b4b4; white-space: pre-wrap; }
main { display: grid; grid-template-columns: minmax(380px, 620px) minmax(280px, 460px); gap: 12px;
       padding: 12px; align-items: start; }
section { background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: 10px; min-width: 0; }
h2 { font-size: 14px; margin: 8px 0 6px; }
#board { display: block; width: 100%; max-height: 620px; user-select: none; }
.cell.legal { cursor: pointer; }
.controls { display: flex; gap: 6px; align-items: center; justify-content: center; margin: 6px 0; flex-wrap: wrap; }
.controls button { font-size: 16px; min-width: 40px; padding: 2px 8px; }
#position-text { text-align: center; }
table { border-collapse: collapse; width: 100%; }
th { text-align: left; font-weight: 600; color: var(--faint); font-size: 12px; }
td, th { padding: 2px 5px; border-bottom: 1px solid #eef0f3; vertical-align: top; }
td.pv { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 12px; }
td.score, td.nodes { text-align: right; white-space: nowrap; }
#moves-box { max-height: 240px; overflow: auto; }
#moves tr { cursor: pointer; } #moves tr.current { background: #dde8ff; } #moves tr.ahead td { color: var(--faint); }
.mark-X { color: var(--x); font-weight: 700; } .mark-O { color: var(--o); font-weight: 700; }
#best { font-weight: 600; min-height: 1.4em; }
#status { color: var(--faint); min-height: 1.4em; }
.small { font-size: 12px; color: var(--faint); }
@media (max-width: 900px) { main { grid-template-columns: 1fr; } }
"""

PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Ultimate Tic-Tac-Toe analysis board</title>
<style>@STYLE@</style>
@ERRORS@
</head>
<body data-ready="0">
<header>
  <h1>Analysis board</h1>
  <label>rules <select id="rules"><option value="wpi">CS 4341 referee</option>
    <option value="codingame">CodinGame</option></select></label>
  <label>moves <input id="position" placeholder="4 4, 4 0, 0 2 ..." spellcheck="false"></label>
  <button id="load">Set position</button>
  <button id="new">New game</button>
</header>
<pre id="errors" hidden></pre>
<noscript><p>This page runs the engine with JavaScript and WebAssembly: please allow scripts.</p></noscript>
<main>
<section id="board-panel">
  <svg id="board" xmlns="http://www.w3.org/2000/svg" role="img" aria-label="the board"></svg>
  <div class="controls">
    <button id="first" title="start (Home)">&#x21E4;</button>
    <button id="back" title="back (left arrow)">&#x25C0;</button>
    <button id="forward" title="forward (right arrow)">&#x25B6;</button>
    <button id="last" title="end (End)">&#x21E5;</button>
  </div>
  <div id="position-text"></div>
  <h2>Moves</h2>
  <div id="moves-box"><table><tbody id="moves"></tbody></table></div>
</section>
<section id="engine-panel">
  <div class="controls">
    <button id="analyse">Analyse</button>
    <label>engine plays <select id="side"><option value="">nobody</option><option value="X">X</option>
      <option value="O">O</option></select></label>
    <label><select id="limit-kind"><option value="seconds">seconds</option><option value="depth">depth</option></select>
      per move <input id="limit-value" type="number" min="0.01" step="any" style="width: 5em"></label>
  </div>
  <div id="status"></div>
  <div id="best"></div>
  <table><thead><tr><th>depth</th><th>score</th><th>principal variation</th><th>nodes</th><th>s</th></tr></thead>
  <tbody id="lines"></tbody></table>
  <p class="small">Click a highlighted cell to play there (for either side: set a position up move by move), or
  paste moves and set the position. Keys: &#x2190; &#x2192; a move, Home/End the start/end. Moves are board then
  spot, 0-8 each, row by row. Scores are X's view: + good for X; #+N a forced win for X N plies ahead; * a proven
  result. The engine is our agent's search, compiled to WebAssembly, with the fitted evaluation
  (<span id="evaluation"></span>), in this page: nothing is sent anywhere.</p>
</section>
</main>
<script type="application/json" id="board-colours">@COLOURS@</script>
<script type="application/json" id="board-data">@DATA@</script>
<script type="text/plain" id="core-script">@CORE@</script>
<script type="text/plain" id="worker-script">@WORKER@</script>
<script>@CORE@</script>
<script>@SCRIPT@</script>
</body>
</html>
"""


def page() -> str:
    """The whole page."""
    style = STYLE
    for key, value in COLOURS.items():
        style = style.replace(f"@{key}@", escape(value))
    text = PAGE.replace("@STYLE@", style).replace("@ERRORS@", ERRORS_SCRIPT).replace("@SCRIPT@", SCRIPT)
    text = text.replace("@CORE@", CORE_SCRIPT)
    text = text.replace("@WORKER@", WORKER_SCRIPT).replace("@COLOURS@", json.dumps(COLOURS))
    return text.replace("@DATA@", json.dumps(page_data()))    # last: the data is not searched again


def write_page(out) -> Path:
    """Write the analysis board to ``out``; its path."""
    out = Path(out)
    out.write_text(page(), encoding="utf-8")
    return out


#: The rules' names in links, as ref_sim.views.replay's games name them.
RULES = (WPI, "codingame")


def parse_moves(text: str, rules: str) -> list[int]:
    """``--moves``: moves from the empty board as the referee writes them (``4 4, 4 0``), checked
    under ``rules``; ValueError saying which move is wrong."""
    pos = Position(rules)
    moves = []
    for i, part in enumerate(filter(None, (p.strip() for p in text.split(","))), 1):
        try:
            pos.play(Move.parse(part))
        except (InvalidMoveError, IllegalMoveError) as error:
            raise ValueError(f"--moves: move {i} ({part!r}): {error}") from None
        moves.append(pos.moves_played()[-1])
    return moves


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog=prog(MODULE),
        description="Write the analysis board: our engine in one HTML page (the search core as WebAssembly, in a "
                    "Web Worker). Set up or paste a position, watch the engine think, play against it.",
        epilog="The page opens from disk in any browser with WebAssembly (no server, no network); uttt-replay "
               "writes one beside each replay and links every position to it. Exit codes: 0 written, 2 bad input.")
    parser.add_argument("-o", "--out", metavar="OUT.html", default="board.html", help="the page to write "
                        "(default: board.html)")
    parser.add_argument("--moves", default="", metavar="MOVES",
                        help="open on the position after these moves from the empty board, e.g. '4 4, 4 0'")
    parser.add_argument("--rules", choices=RULES, default=WPI, help="the rules (default: wpi, the CS 4341 referee's)")
    return parser


@entry_point(MODULE)
def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m ref_sim.board``; prints the page's address with the position."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        moves = parse_moves(args.moves, args.rules)
        out = write_page(args.out)
    except (ValueError, OSError) as error:
        parser.exit(2, f"{prog(MODULE)}: error: {error}\n")
    print(position_link(out.resolve().as_uri(), args.rules, moves) if moves else out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
