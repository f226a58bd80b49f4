/* The search core of Ultimate Tic-Tac-Toe in plain C (see core_search.h): a line-by-line mirror
 * of the pure-Python reference, which stays the readable definition:
 *   rules      agent/rules.py       Position.push/pop/legal_moves (both rule variants)
 *   evaluation agent/evaluation.py  Evaluator.evaluate and Evaluator.move_priority
 *                agent/eval_fitted.py FittedEvaluator.evaluate
 *   search     agent/search.py      AlphaBeta._root, _negamax, _ordered, _check_limits, Features
 * The iterative deepening around the root lives in the hosts (agent/core.py drives both builds with
 * AlphaBeta.iterate; the browser page mirrors it), and so do the aspiration windows: the root search
 * takes the window. At a fixed depth every build returns the same move, score and node count as
 * the Python search; tests/test_core.py and tests/test_core_pins.py hold them together.
 *
 * One difference by design: the transposition table is a flat array of 16-byte entries (linear
 * probing within a window, replacement by age then depth once a window is full) instead of a
 * dict trimmed by insertion order. While no entry is replaced it behaves exactly like the dict.
 *
 * Freestanding C99 (no library calls): it builds for WebAssembly without a C library.
 */

#include "core_search.h"

#define LMR_MIN_DEPTH 3
#define LMR_FIRST_MOVE 3
#define LMR_DEEP_MOVE 6
#define LMR_DEEP_DEPTH 5

static const int LINES[8] = {0x007, 0x038, 0x1C0, 0x049, 0x092, 0x124, 0x111, 0x054};
static uint8_t WINS[512];
static const uint32_t POW4[9] = {1, 4, 16, 64, 256, 1024, 4096, 16384, 65536};
static const uint16_t POW3[9] = {1, 3, 9, 27, 81, 243, 729, 2187, 6561};
static uint16_t TERNARY[512]; /* a mask's spots as ternary digits: the sum of 3^spot */

/* A hint to load a cache line ahead of its use; nothing where no compiler builtin gives it. */
#if defined(__GNUC__) || defined(__clang__)
#define PREFETCH(address) __builtin_prefetch(address)
#elif defined(_MSC_VER) && (defined(_M_IX86) || defined(_M_X64))
#include <xmmintrin.h>
#define PREFETCH(address) _mm_prefetch((const char *)(address), _MM_HINT_T0)
#else
#define PREFETCH(address) ((void)(address))
#endif

static uint64_t ZOBRIST_CELL[2][81];
static uint64_t ZOBRIST_FORCED[10];

static int popcount9(unsigned m) {
    int n = 0;
    while (m) {
        m &= m - 1;
        n++;
    }
    return n;
}

static int decided_result(const Pos *p) {
    if (p->drawn_lines_tie) return TIE;
    int x = popcount9(p->won[0]), o = popcount9(p->won[1]);
    return x > o ? 0 : o > x ? 1 : TIE;
}

static void pos_push(Pos *p, int index) {
    int b = index / 9, spot = index % 9;
    uint16_t bit = (uint16_t)(1u << spot);
    int me = p->turn;
    Undo *u = &p->stack[p->sp++];
    u->index = (uint8_t)index;
    u->forced = (int8_t)p->forced;
    u->left = (uint8_t)p->left;
    u->key = p->key;
    p->left--;
    uint16_t mask = p->masks[me][b] |= bit;
    uint16_t occupied = p->occupied[b] |= bit;
    p->pattern[me][b] += POW3[spot];
    p->pattern[1 - me][b] += 2 * POW3[spot];
    if (WINS[mask]) {
        p->left -= 9 - popcount9(occupied); /* the board's empty cells are no longer playable */
        p->status[b] = (uint8_t)(me + 1);
        p->status_code += (uint32_t)(me + 1) * POW4[b];
        uint16_t won = p->won[me] |= (uint16_t)(1u << b);
        if (WINS[won])
            p->winner = me;
        else if ((won | p->won[1 - me] | p->drawn) == FULL)
            p->winner = decided_result(p);
    } else if (occupied == FULL) {
        p->status[b] = DRAWN;
        p->status_code += DRAWN * POW4[b];
        uint16_t drawn = p->drawn |= (uint16_t)(1u << b);
        if (WINS[drawn] && p->drawn_lines_tie)
            p->winner = TIE;
        else if ((drawn | p->won[0] | p->won[1]) == FULL)
            p->winner = decided_result(p);
    }
    int forced = p->status[spot] == OPEN ? spot : -1;
    p->key ^= ZOBRIST_CELL[me][index] ^ ZOBRIST_FORCED[p->forced + 1] ^ ZOBRIST_FORCED[forced + 1];
    p->forced = forced;
    p->turn = 1 - me;
    p->ply++;
}

static void pos_pop(Pos *p) {
    Undo *u = &p->stack[--p->sp];
    int index = u->index;
    p->forced = u->forced;
    p->left = u->left;
    p->key = u->key;
    int me = 1 - p->turn;
    p->turn = me;
    p->ply--;
    p->winner = NO_WINNER;
    int b = index / 9;
    uint16_t bit = (uint16_t)(1u << (index % 9));
    p->masks[me][b] ^= bit;
    p->occupied[b] ^= bit;
    p->pattern[me][b] -= POW3[index % 9];
    p->pattern[1 - me][b] -= 2 * POW3[index % 9];
    int state = p->status[b];
    if (state != OPEN) {
        p->status[b] = OPEN;
        p->status_code -= (uint32_t)state * POW4[b];
        if (state == DRAWN)
            p->drawn ^= (uint16_t)(1u << b);
        else
            p->won[me] ^= (uint16_t)(1u << b);
    }
}

/* The legal moves in the order Position.legal_moves gives them (ascending cell index). */
static int pos_moves(const Pos *p, uint8_t *out) {
    int n = 0;
    if (p->winner != NO_WINNER) return 0;
    for (int b = 0; b < 9; b++) {
        if (p->forced >= 0 ? b != p->forced : p->status[b] != OPEN) continue;
        unsigned free_cells = FULL & ~p->occupied[b];
        for (int s = 0; s < 9; s++)
            if (free_cells >> s & 1) out[n++] = (uint8_t)(b * 9 + s);
    }
    return n;
}

#define TT_GEN(data) ((uint8_t)((data) >> 56))
#define TT_DEPTH(data) ((int8_t)((data) >> 32))

/* -- evaluation: the one section to change when the evaluation changes --------------------------- */

/* agent/evaluation.py Evaluator.evaluate */
static int evaluate_classic(Search *s) {
    const Pos *p = &s->pos;
    Memo *m = &s->memo[p->status_code];
    if (!load_flag(&m->ready) && !s->hooks->fill_memo(s, m)) {
        s->failed = 1;
        s->stopped = 1;
        return 0;
    }
    const int32_t *local = s->local;
    long long score = m->values[0];
    for (int b = 0; b < 9; b++)
        score += (long long)local[p->pattern[0][b]] * m->values[1 + b];
    if (p->turn != 0) score = -score;
    if (p->forced < 0) score += s->free_move;
    return (int)score;
}

/* agent/eval_fitted.py FittedEvaluator.evaluate: every division is of non-negative integers,
 * so C's truncation equals Python's floor division. */
static int evaluate_fitted(Search *s) {
    const Pos *p = &s->pos;
    const uint16_t *me = p->pattern[p->turn], *them = p->pattern[1 - p->turn];
    const int32_t *chance = s->chance;
    long long m[9], t[9], score = s->w_tempo;
    for (int b = 0; b < 9; b++) {
        m[b] = chance[me[b]];
        t[b] = chance[them[b]];
    }
    if (p->forced >= 0) {
        m[p->forced] = s->mover[me[p->forced]];
        t[p->forced] = s->waiter[me[p->forced]];
    } else {
        score += s->w_free_move;
    }
    long long mine = m[0] * m[1] * m[2] + m[3] * m[4] * m[5] + m[6] * m[7] * m[8] + m[0] * m[3] * m[6] +
                     m[1] * m[4] * m[7] + m[2] * m[5] * m[8] + m[0] * m[4] * m[8] + m[2] * m[4] * m[6];
    long long theirs = t[0] * t[1] * t[2] + t[3] * t[4] * t[5] + t[6] * t[7] * t[8] + t[0] * t[3] * t[6] +
                       t[1] * t[4] * t[7] + t[2] * t[5] * t[8] + t[0] * t[4] * t[8] + t[2] * t[4] * t[6];
    long long sum_m = 0, sum_t = 0;
    for (int b = 0; b < 9; b++) {
        sum_m += m[b];
        sum_t += t[b];
    }
    score += s->w_line * mine / s->q3 - s->w_line * theirs / s->q3 + s->w_board * sum_m / s->q -
             s->w_board * sum_t / s->q;
    return (int)score;
}

static int evaluate(Search *s) {
    return s->eval_kind == EVAL_FITTED ? evaluate_fitted(s) : evaluate_classic(s);
}

/* Evaluator.move_priority: a local win first, then a block; a move that sends the opponent to a
 * board they can win at once, or lets them play anywhere, last. */
static void move_priority(const Search *s, const uint8_t *moves, int n, int *out) {
    const Pos *p = &s->pos;
    const uint16_t *me = p->masks[p->turn], *them = p->masks[1 - p->turn];
    for (int i = 0; i < n; i++) {
        int m = moves[i], b = m / 9, spot = m % 9;
        unsigned bit = 1u << spot;
        int priority;
        if (WINS[me[b] | bit])
            priority = 4;
        else if (WINS[them[b] | bit])
            priority = 2;
        else
            priority = 0;
        if (spot == b) {
            if (priority == 4 || (p->occupied[b] | bit) == FULL)
                priority -= 2;
            else if (s->can_win[(unsigned)them[b] << 9 | me[b] | bit])
                priority -= 3;
        } else if (p->status[spot] != OPEN) {
            priority -= 2;
        } else if (s->can_win[(unsigned)them[spot] << 9 | me[spot]]) {
            priority -= 3;
        }
        out[i] = priority;
    }
}

/* -- table ------------------------------------------------------------------------------------- */

/* The entry of a key, as a copy in s->probed (valid until this searcher's next probe), or NULL. */
static TTEntry *tt_probe(Search *s, uint64_t key) {
    if (s->no_table) return NULL;
    uint64_t home = key & s->tt_mask;
    for (int k = 0; k < TT_WINDOW; k++) {
        TTSlot *e = &s->tt[(home + k) & s->tt_mask];
        uint64_t data = load_word(&e->data), check = load_word(&e->check);
        if (TT_GEN(data) == 0) return NULL;
        if ((check ^ data) == key) {
            TTEntry *entry = &s->probed;
            entry->score = (int32_t)(uint32_t)data;
            entry->depth = TT_DEPTH(data);
            entry->flag = (uint8_t)(data >> 40);
            entry->move = (uint8_t)(data >> 48);
            entry->gen = TT_GEN(data);
            return entry;
        }
    }
    return NULL;
}

/* The key of the position after ``move``, for loading its table slot ahead (order_moves), unless
 * the move closes the board it sends to (its own), which is rare: a wrong guess loads a line for
 * nothing. (The prefetch itself is in the caller: GCC deletes calls of a function that does
 * nothing but prefetch.) */
static inline uint64_t child_key(const Pos *p, int move) {
    int spot = move % 9, forced = p->status[spot] == OPEN ? spot : -1;
    return p->key ^ ZOBRIST_CELL[p->turn][move] ^ ZOBRIST_FORCED[p->forced + 1] ^ ZOBRIST_FORCED[forced + 1];
}

static void tt_store(Search *s, uint64_t key, int depth, int flag, int score, int move) {
    if (s->no_table) return;
    uint64_t home = key & s->tt_mask;
    TTSlot *victim = NULL;
    int victim_age = -1, victim_depth = 0;
    for (int k = 0; k < TT_WINDOW; k++) {
        TTSlot *e = &s->tt[(home + k) & s->tt_mask];
        uint64_t data = load_word(&e->data), check = load_word(&e->check);
        if (TT_GEN(data) == 0) {
            s->tt_count++;
            victim = e;
            break;
        }
        if ((check ^ data) == key) {
            victim = e;
            break;
        }
        /* A full window: replace the oldest entry, the shallowest among equally old ones. */
        int age = (uint8_t)(s->gen - TT_GEN(data)), e_depth = TT_DEPTH(data);
        if (victim == NULL || age > victim_age || (age == victim_age && e_depth < victim_depth)) {
            victim = e;
            victim_age = age;
            victim_depth = e_depth;
        }
        if (k == TT_WINDOW - 1) s->tt_replaced++;
    }
    uint64_t data = (uint64_t)(uint32_t)score | (uint64_t)(uint8_t)depth << 32 | (uint64_t)(uint8_t)flag << 40 |
                    (uint64_t)(uint8_t)move << 48 | (uint64_t)s->gen << 56;
    store_word(&victim->check, key ^ data);
    store_word(&victim->data, data);
}

/* -- search (agent/search.py AlphaBeta) ---------------------------------------------------------- */

/* AlphaBeta._check_limits, and now and then the host's poll (a stop asked from outside; the
 * extension lets Python handle signals there, which it cannot do while this code holds the thread). */
static int check_limits(Search *s) {
    s->next_check = s->nodes + CLOCK_INTERVAL;
    if (s->helper) /* a helper (the extension's search_team): the team's stop, or the deadline, seen by itself */
        return load_flag(s->team_stop) || (s->deadline >= 0 && s->hooks->now(s) >= s->deadline);
    if (s->team_stop != NULL && load_flag(s->team_stop)) return 1; /* a helper failed */
    if (s->node_limit >= 0 && s->nodes >= s->node_limit) return 1;
    double now = s->hooks->now(s);
    if (s->deadline >= 0 && now >= s->deadline) return 1;
    if (now >= s->next_poll) {
        s->next_poll = now + s->poll_every;
        int stop = s->hooks->poll(s);
        if (stop < 0) {
            s->failed = 1;
            return 1;
        }
        if (stop) return 1;
    }
    return 0;
}

/* search._flag: what a score found in the window (alpha, beta) is. */
static inline int bound_flag(int score, int alpha, int beta) {
    return score >= beta ? LOWER : score <= alpha ? UPPER : EXACT;
}

/* Position.max_plies_left: the empty cells of open boards (set_position counts them, pos_push
 * and pos_pop keep the count). */
static int max_plies_left(const Pos *p) {
    int left = 0;
    for (int b = 0; b < 9; b++)
        if (p->status[b] == OPEN) left += 9 - popcount9(p->occupied[b]);
    return left;
}

static inline int terminal_score(int winner, int turn, int ply) {
    if (winner == turn) return WIN_SCORE - ply;
    if (winner == 1 - turn) return -(WIN_SCORE - ply);
    return 0;
}

typedef struct {
    int priority;
    long long history;
    int move;
} OrderKey;

/* Histories below 2^48 are sorted packed into one integer with the move (order_moves); a game
 * would need billions of cut-offs to reach it, but beyond it the three-key sort still runs (build
 * with -DHISTORY_PACKED_BITS=0 to run it wherever a history is not 0: scripts/bench_core_ratio.py
 * --old on that build finds the same trees). */
#ifndef HISTORY_PACKED_BITS
#define HISTORY_PACKED_BITS 48
#endif

/* A node's moves in AlphaBeta._ordered's order, placed one at a time as the search asks for them
 * (order_next): most nodes cut off after two or three of their moves, and sorting the rest of up
 * to 60 moves was a tenth of the search's time. */
typedef struct {
    uint8_t moves[81]; /* the order, placed up to ``placed`` */
    uint64_t keys[81]; /* the packed keys of the moves after the front ones, not yet placed from
                        * keys[placed - nfront] on: distinct, so picking the largest each time
                        * gives the order of a full sort, ties included */
    int n, nfront, placed;
} MoveOrder;

/* pos_moves' condition for one move: is ``m`` among the legal moves (the game not over)? */
static inline int legal_move(const Pos *p, int m) {
    if (m < 0 || m >= 81) return 0;
    int b = m / 9;
    return (p->forced >= 0 ? b == p->forced : p->status[b] == OPEN) && !(p->occupied[b] >> (m % 9) & 1);
}

/* AlphaBeta._ordered: the table's move, then the killers, then tactics (at depth >= 2) and
 * history; Python's sorts are mirrored exactly, ties included. Returns the number of moves. */
static int order_moves(Search *s, int depth, int tt_move, int ply, MoveOrder *o) {
    const Pos *p = &s->pos;
    uint8_t moves[81];
    int n = pos_moves(p, moves);
    o->n = n;
    o->nfront = 0;
    if (n <= 1) {
        if (n == 1) o->moves[0] = moves[0];
        o->placed = n;
        return n;
    }
    int candidates[3] = {tt_move, s->killers[ply][0], s->killers[ply][1]};
    for (int c = 0; c < 3; c++) {
        int m = candidates[c], dup = 0;
        for (int f = 0; f < o->nfront; f++) dup |= o->moves[f] == m;
        if (!dup && legal_move(p, m)) o->moves[o->nfront++] = (uint8_t)m;
    }
    int front0 = o->nfront > 0 ? o->moves[0] : -1, front1 = o->nfront > 1 ? o->moves[1] : -1,
        front2 = o->nfront > 2 ? o->moves[2] : -1;
    const long long *hist = s->history[p->turn];
    long long any = 0;
    /* The children probe the table (depth >= 2): a probe's cache miss was most of its cost
     * (scripts/profile_core.sh), and their slots now load while the moves are ordered. */
    for (int i = 0; i < n; i++) {
        if (depth >= 2) PREFETCH(&s->tt[child_key(p, moves[i]) & s->tt_mask]);
        any |= hist[moves[i]];
    }
    int priorities[81];
    if (depth >= 2) move_priority(s, moves, n, priorities);
    if (!(any >> HISTORY_PACKED_BITS)) {
        /* One integer per move, larger first: (priority, history, move) at depth >= 2, all three
         * descending; (history, -position) below, which keeps equal histories in their order as
         * the stable sort does. Histories are never negative and, below 2^48, fit. */
        int k = 0;
        for (int i = 0; i < n; i++) {
            int m = moves[i];
            if (m == front0 || m == front1 || m == front2) continue;
            o->keys[k++] = depth >= 2 ? (uint64_t)(priorities[i] + 8) << 56 | (uint64_t)hist[m] << 8 | (uint64_t)m
                                      : (uint64_t)hist[m] << 16 | (uint64_t)(255 - i) << 8 | (uint64_t)m;
        }
        o->placed = o->nfront;
        return n;
    }
    if (depth >= 2) {
        /* sorted(zip(priorities, history, moves), reverse=True): all three descending */
        OrderKey keys[81];
        for (int i = 0; i < n; i++) {
            OrderKey k = {priorities[i], hist[moves[i]], moves[i]};
            int j = i;
            while (j > 0 && (keys[j - 1].priority < k.priority ||
                             (keys[j - 1].priority == k.priority &&
                              (keys[j - 1].history < k.history ||
                               (keys[j - 1].history == k.history && keys[j - 1].move < k.move))))) {
                keys[j] = keys[j - 1];
                j--;
            }
            keys[j] = k;
        }
        for (int i = 0; i < n; i++) moves[i] = (uint8_t)keys[i].move;
    } else {
        /* sorted(moves, key=history, reverse=True): stable, so equal histories keep their order */
        for (int i = 1; i < n; i++) {
            uint8_t m = moves[i];
            long long h = hist[m];
            int j = i;
            while (j > 0 && hist[moves[j - 1]] < h) {
                moves[j] = moves[j - 1];
                j--;
            }
            moves[j] = m;
        }
    }
    int k = o->nfront;
    for (int i = 0; i < n; i++)
        if (moves[i] != front0 && moves[i] != front1 && moves[i] != front2) o->moves[k++] = moves[i];
    o->placed = n;
    return n;
}

/* The i-th move of the order; asked for as i = 0, 1, 2... */
static inline int order_next(MoveOrder *o, int i) {
    if (i < o->placed) return o->moves[i];
    uint64_t *keys = o->keys + (i - o->nfront);
    int rest = o->n - i, best = 0;
    for (int j = 1; j < rest; j++)
        if (keys[j] > keys[best]) best = j;
    uint64_t key = keys[best];
    keys[best] = keys[0];
    keys[0] = key;
    o->moves[i] = (uint8_t)key;
    o->placed = i + 1;
    return o->moves[i];
}

static int negamax(Search *s, int depth, int alpha, int beta, int ply) {
    Pos *p = &s->pos;
    s->nodes++;
    if (s->nodes >= s->next_check && check_limits(s)) {
        s->stopped = 1;
        return 0;
    }
    if (p->winner != NO_WINNER) return terminal_score(p->winner, p->turn, ply);
    int exact = 0;
    if (s->solve) {
        int left = p->left;
        if (left <= s->solve) { /* few plies left: search them all, unreduced, and know the result */
            exact = 1;
            if (depth < left) depth = left;
        }
    }
    if (depth <= 0) return evaluate(s);

    uint64_t key = p->key;
    int tt_move = -1;
    TTEntry *entry = tt_probe(s, key);
    if (entry != NULL) {
        tt_move = entry->move;
        if (entry->depth >= depth) {
            int e_score = entry->score;
            if (e_score > PROVEN_SCORE)
                e_score -= ply;
            else if (e_score < -PROVEN_SCORE)
                e_score += ply;
            if (entry->flag == EXACT) return e_score;
            if (entry->flag == LOWER) {
                if (e_score >= beta) return e_score;
            } else if (e_score <= alpha) {
                return e_score;
            }
        }
    }

    MoveOrder order;
    int n = order_moves(s, depth, tt_move, ply, &order);
    int original_alpha = alpha;
    int best_score = -INFINITY_SCORE, best_move = order_next(&order, 0);

    if (depth == 1) {
        /* Children are leaves: evaluated here, as in the Python search. */
        int child_ply = ply + 1;
        for (int i = 0; i < n; i++) {
            int move = order_next(&order, i), score;
            pos_push(p, move);
            s->nodes++;
            if (p->winner == NO_WINNER)
                score = -evaluate(s);
            else
                score = -terminal_score(p->winner, p->turn, child_ply);
            pos_pop(p);
            if (s->stopped) return 0; /* the memo function failed */
            if (score > best_score) {
                best_score = score;
                best_move = move;
                if (score > alpha) {
                    alpha = score;
                    if (score >= beta) break;
                }
            }
        }
    } else {
        int inexact = s->reduce && !exact;
        int reduce_from = inexact && s->lmr && depth >= LMR_MIN_DEPTH ? LMR_FIRST_MOVE : n;
        int deep_from = inexact && s->lmr >= 2 && depth >= LMR_DEEP_DEPTH ? LMR_DEEP_MOVE : n;
        for (int i = 0; i < n; i++) {
            int move = order_next(&order, i), score;
            pos_push(p, move);
            if (i == 0) {
                score = -negamax(s, depth - 1, -beta, -alpha, ply + 1);
            } else {
                int reduced = i < reduce_from ? depth - 1 : i >= deep_from ? depth - 3 : depth - 2;
                score = -negamax(s, reduced, -alpha - 1, -alpha, ply + 1);
                if (!s->stopped && reduced < depth - 1 && score > alpha)
                    score = -negamax(s, depth - 1, -alpha - 1, -alpha, ply + 1);
                if (!s->stopped && alpha < score && score < beta)
                    score = -negamax(s, depth - 1, -beta, -score, ply + 1);
            }
            pos_pop(p);
            if (s->stopped) return 0;
            if (score > best_score) {
                best_score = score;
                best_move = move;
                if (score > alpha) {
                    alpha = score;
                    if (score >= beta) break;
                }
            }
        }
    }

    int flag = bound_flag(best_score, original_alpha, beta);
    if (flag == LOWER) {
        int *killers = s->killers[ply];
        if (killers[0] != best_move) {
            killers[1] = killers[0];
            killers[0] = best_move;
        }
        s->history[p->turn][best_move] += (long long)depth * depth;
    }
    int stored = best_score;
    if (stored > PROVEN_SCORE)
        stored += ply;
    else if (stored < -PROVEN_SCORE)
        stored -= ply;
    tt_store(s, key, depth, flag, stored, best_move);
    return best_score;
}

/* AlphaBeta._root in the window (alpha, beta): returns 0 when the search stopped (root_best may
 * hold a proven-better move). */
static int search_root(Search *s, const uint8_t *moves, int n, int depth, int alpha, int beta, int *out_score,
                       int *out_move) {
    Pos *p = &s->pos;
    int original_alpha = alpha;
    int best_move = moves[0], best_score = -INFINITY_SCORE, first_score = 0;
    for (int i = 0; i < n; i++) {
        int move = moves[i], score;
        pos_push(p, move);
        if (i == 0) {
            score = -negamax(s, depth - 1, -beta, -alpha, 1);
            first_score = score;
        } else {
            score = -negamax(s, depth - 1, -alpha - 1, -alpha, 1);
            if (!s->stopped && score > alpha) {
                score = -negamax(s, depth - 1, -beta, -alpha, 1);
                if (!s->stopped && score > first_score) {
                    s->root_best_valid = 1;
                    s->root_best_move = move;
                    s->root_best_score = score;
                }
            }
        }
        pos_pop(p);
        if (s->stopped) return 0;
        if (score > best_score) {
            best_score = score;
            best_move = move;
            if (score > alpha) {
                alpha = score;
                if (score >= beta) break;
            }
        }
    }
    tt_store(s, p->key, depth, bound_flag(best_score, original_alpha, beta), best_score, best_move);
    *out_score = best_score;
    *out_move = best_move;
    return 1;
}

static long long perft(Pos *p, int depth) {
    if (depth == 0 || p->winner != NO_WINNER) return 1;
    uint8_t moves[81];
    int n = pos_moves(p, moves);
    if (depth == 1) return n;
    long long total = 0;
    for (int i = 0; i < n; i++) {
        pos_push(p, moves[i]);
        total += perft(p, depth - 1);
        pos_pop(p);
    }
    return total;
}

long long core_perft(Pos *p, int depth) { return perft(p, depth); }

/* -- what the hosts call ------------------------------------------------------------------------ */

void core_init(void) {
    for (int m = 0; m < 512; m++) {
        TERNARY[m] = 0;
        for (int spot = 0; spot < 9; spot++)
            if (m >> spot & 1) TERNARY[m] += POW3[spot];
        WINS[m] = 0;
        for (int l = 0; l < 8; l++)
            if ((m & LINES[l]) == LINES[l]) WINS[m] = 1;
    }
}

void core_set_zobrist(const uint64_t *cell_x, const uint64_t *cell_o, const uint64_t *forced) {
    for (int i = 0; i < 81; i++) {
        ZOBRIST_CELL[0][i] = cell_x[i];
        ZOBRIST_CELL[1][i] = cell_o[i];
    }
    for (int i = 0; i < 10; i++) ZOBRIST_FORCED[i] = forced[i];
}

int core_check_position(Pos *out, const uint16_t masks[2][9], const uint8_t status[9], int forced, int turn,
                        int winner, uint64_t key, int ply, int drawn_lines_tie, int detail[3]) {
    Pos p = {0};
    int marks[2] = {0, 0};
    for (int b = 0; b < 9; b++) {
        unsigned x = masks[0][b], o = masks[1][b];
        detail[0] = b;
        if (x & o) return POSITION_BOTH_HOLD_A_CELL;
        if (WINS[x] && WINS[o]) return POSITION_BOTH_HAVE_A_LINE;
        int state = WINS[x] ? 1 : WINS[o] ? 2 : (x | o) == FULL ? DRAWN : OPEN;
        if (status[b] != state) {
            detail[1] = status[b];
            detail[2] = state;
            return POSITION_STATUS;
        }
        p.masks[0][b] = (uint16_t)x;
        p.masks[1][b] = (uint16_t)o;
        p.occupied[b] = (uint16_t)(x | o);
        p.pattern[0][b] = (uint16_t)(TERNARY[x] + 2 * TERNARY[o]);
        p.pattern[1][b] = (uint16_t)(TERNARY[o] + 2 * TERNARY[x]);
        p.status[b] = (uint8_t)state;
        p.status_code += (uint32_t)state * POW4[b];
        if (state == 1) p.won[0] |= (uint16_t)(1u << b);
        if (state == 2) p.won[1] |= (uint16_t)(1u << b);
        if (state == DRAWN) p.drawn |= (uint16_t)(1u << b);
        marks[0] += popcount9(x);
        marks[1] += popcount9(o);
    }
    detail[0] = marks[0];
    detail[1] = marks[1];
    if (marks[0] - marks[1] != 0 && marks[0] - marks[1] != 1) return POSITION_MARK_COUNT;
    detail[0] = turn;
    detail[1] = marks[0];
    detail[2] = marks[1];
    if (turn != marks[0] - marks[1]) return POSITION_TURN;
    detail[0] = ply;
    detail[1] = marks[0] + marks[1];
    if (ply != marks[0] + marks[1]) return POSITION_PLY;
    detail[0] = forced;
    if (forced >= 0 && p.status[forced] != OPEN) return POSITION_FORCED_NOT_OPEN;
    if (WINS[p.won[0]] && WINS[p.won[1]]) return POSITION_BOTH_WON_GLOBALLY;
    p.drawn_lines_tie = drawn_lines_tie;
    p.left = max_plies_left(&p);
    int result = WINS[p.won[0]] ? 0 : WINS[p.won[1]] ? 1 : (p.drawn_lines_tie && WINS[p.drawn]) ? TIE
               : (p.won[0] | p.won[1] | p.drawn) == FULL ? decided_result(&p) : NO_WINNER;
    detail[0] = winner + 1;
    detail[1] = result + 1;
    if (winner != result) return POSITION_WINNER;
    uint64_t expected = ZOBRIST_FORCED[forced + 1];
    for (int b = 0; b < 9; b++)
        for (int player = 0; player < 2; player++)
            for (int spot = 0; spot < 9; spot++)
                if (p.masks[player][b] >> spot & 1) expected ^= ZOBRIST_CELL[player][b * 9 + spot];
    if (key != expected) return POSITION_KEY;
    p.forced = forced;
    p.turn = turn;
    p.winner = winner;
    p.key = key;
    p.ply = ply;
    *out = p;
    return POSITION_OK;
}

static long long magnitude(long long v) { return v < 0 ? -v : v; }

long long core_index_local(int32_t *local, const int32_t *given) {
    long long local_max = 0;
    for (int i = 0; i < LOCAL_GIVEN; i++)
        if (magnitude(given[i]) > local_max) local_max = magnitude(given[i]);
    for (unsigned x = 0; x < 512; x++) /* re-indexed by X's pattern (Pos.pattern[0]) */
        for (unsigned o = 0; o < 512; o++)
            if (!(x & o)) local[TERNARY[x] + 2 * TERNARY[o]] = given[x << 9 | o];
    return local_max;
}

int core_memo_fits(const Search *s, const long long v[10]) {
    /* |score| <= |global| + max|local| * sum|scale| + |free_move| must stay within EVAL_LIMIT */
    long long scales = 0, room = EVAL_LIMIT - magnitude(v[0]) - magnitude(s->free_move);
    for (int i = 1; i < 10; i++) scales += magnitude(v[i]);
    return !(room < 0 || (scales > 0 && s->local_max > room / scales));
}

int core_check_fitted(long long q, long long line, long long board, long long tempo, long long free_move,
                      int32_t *const tables[3], long long detail[3]) {
    long long bound = 8 * line + 9 * board + magnitude(tempo) + magnitude(free_move);
    if (bound > EVAL_LIMIT) {
        detail[0] = bound;
        return FITTED_BOUND;
    }
    if (line > INT64_MAX / (8 * q * q * q)) return FITTED_LINE_RANGE;
    for (int k = 0; k < 3; k++)
        for (int i = 0; tables[k] != NULL && i < PATTERNS; i++)
            if (tables[k][i] < 0 || tables[k][i] > q) {
                detail[0] = k;
                detail[1] = i;
                detail[2] = tables[k][i];
                return FITTED_TABLE_VALUE;
            }
    return FITTED_OK;
}

void core_use_fitted(Search *s, long long q, long long line, long long board, long long tempo, long long free_move) {
    s->q = q;
    s->q3 = q * q * q;
    s->w_line = line;
    s->w_board = board;
    s->w_tempo = tempo;
    s->w_free_move = free_move;
    s->eval_kind = EVAL_FITTED;
}

void core_init_search(Search *s) {
    s->eval_kind = EVAL_NONE;
    s->pos.winner = NO_WINNER;
    s->pos.forced = -1;
    s->pos.drawn_lines_tie = 1;
    s->pos.key = ZOBRIST_FORCED[0];
    s->age = 3; /* search.PLAIN until the host sets the features */
    s->node_limit = -1;
    s->deadline = -1;
}

void core_start_search(Search *s, double now, double deadline, long long node_limit, double poll_seconds) {
    s->deadline = deadline;
    s->node_limit = node_limit;
    s->poll_every = poll_seconds;
    s->next_poll = now + poll_seconds;
    s->nodes = 0;
    s->next_check = CLOCK_INTERVAL;
    for (int t = 0; t < 2; t++)
        for (int m = 0; m < 81; m++) s->history[t][m] >>= s->age; /* old cut-offs must not dominate */
    for (int i = 0; i < MAX_PLY; i++) s->killers[i][0] = s->killers[i][1] = -1;
    s->gen = (uint8_t)(s->gen + 1);
    if (s->gen == 0) s->gen = 1; /* 0 marks an empty slot */
}

int core_search_root(Search *s, const uint8_t *moves, int n, int depth, int alpha, int beta, int *out_score,
                     int *out_move) {
    return search_root(s, moves, n, depth, alpha, beta, out_score, out_move);
}

const TTEntry *core_probe(Search *s, uint64_t key) { return tt_probe(s, key); }
int core_evaluate(Search *s) { return evaluate(s); }
void core_move_priority(const Search *s, const uint8_t *moves, int n, int *out) { move_priority(s, moves, n, out); }
int core_legal_moves(const Pos *p, uint8_t *out) { return pos_moves(p, out); }
void core_push(Pos *p, int index) { pos_push(p, index); }
void core_pop(Pos *p) { pos_pop(p); }
