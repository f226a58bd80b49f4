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
