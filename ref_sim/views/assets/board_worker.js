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
