/* The search core of Ultimate Tic-Tac-Toe in plain C: rules, evaluations, move ordering, table,
 * negamax, root search and perft, with no Python and no operating system in it.
 *
 * Three builds share it (agent/core.py chooses among them):
 *   agent/_core.c     the CPython extension agent._core: the Python object, threads, huge pages;
 *   agent/core_wasm.c the WebAssembly module agent/data/core.wasm (scripts/build_wasm.py): the
 *                     same search for machines without a C compiler, and for the browser page.
 * The host owns all memory (the table, the evaluation's tables) and gives the search three hooks:
 * the clock, a poll for a stop now and then, and the classic evaluation's memo. Everything here is
 * single-threaded; the extension's helper threads each run a private copy of a Search.
 *
 * What comes in is checked by the hosts with the checks here (core_check_position,
 * core_check_fitted, core_memo_fits); the search itself checks nothing.
 */

#ifndef UTTT_CORE_SEARCH_H
#define UTTT_CORE_SEARCH_H

#include <stddef.h>
#include <stdint.h>

/* -- constants, as in agent/search.py and agent/rules.py -------------------------------------- */

#define WIN_SCORE 1000000
#define PROVEN_SCORE (WIN_SCORE - 1000)
#define INFINITY_SCORE (WIN_SCORE + 1)
#define EXACT 0
#define LOWER 1
#define UPPER 2
#define CLOCK_INTERVAL 256
#define MAX_PLY 128

#define FULL 0x1FF
#define OPEN 0
#define DRAWN 3
#define TIE 2
#define NO_WINNER (-1)

/* Entries looked at from a key's home slot: a window practically never fills while the table is
 * a few percent full (so it then acts like the Python dict), and a probe of a full table reads
 * two or three cache lines, not more. */
#define TT_WINDOW 8

#define PATTERNS 19683       /* 3^9 fillings of a 3x3 board */
#define STATUS_CODES 262144  /* 4^9: every combination of board states */
#define CAN_WIN_BYTES (1 << 18)
#define LOCAL_GIVEN 262144   /* the classic local table as Python gives it: (xmask << 9 | omask) */

/* Evaluations stay within +-EVAL_LIMIT: the classic and fitted settings and the memo's answers
 * are checked against it, so no sum, negation or +-ply in the search can overflow an int. */
#define EVAL_LIMIT (1LL << 30)
#define FITTED_MAX_SCALE 100000

#define EVAL_NONE 0
#define EVAL_CLASSIC 1
#define EVAL_FITTED 2

/* -- what the extension's threads share -----------------------------------------------------------
 * Table words are read and written whole (relaxed atomics: no torn 64-bit word, no ordering, which
 * the table's key XOR data check makes unnecessary). Flags publish what was written before them:
 * a memo entry's values before its ready flag (release), read after seeing it set (acquire).
 * C11 <stdatomic.h> and <threads.h> are not in MSVC's C, hence GCC/Clang builtins and MSVC's
 * volatile (single instructions on aligned words) with fences. */

#if defined(__GNUC__) || defined(__clang__)
static inline uint64_t load_word(const uint64_t *p) { return __atomic_load_n(p, __ATOMIC_RELAXED); }
static inline void store_word(uint64_t *p, uint64_t v) { __atomic_store_n(p, v, __ATOMIC_RELAXED); }
static inline int load_flag(const int *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
static inline void store_flag(int *p, int v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
#else
#ifdef _MSC_VER
#include <intrin.h>
#endif
#if defined(_M_IX86) || defined(_M_X64)
#define ORDER_FENCE() _ReadWriteBarrier() /* x86 keeps loads and stores in order: only the compiler may not */
#else
#include <windows.h>
#define ORDER_FENCE() MemoryBarrier()
#endif
static inline uint64_t load_word(const uint64_t *p) { return *(const volatile uint64_t *)p; }
static inline void store_word(uint64_t *p, uint64_t v) { *(volatile uint64_t *)p = v; }
static inline int load_flag(const int *p) {
    int v = *(const volatile int *)p;
    ORDER_FENCE();
    return v;
}
static inline void store_flag(int *p, int v) {
    ORDER_FENCE();
    *(volatile int *)p = v;
}
#endif

/* -- position (agent/rules.py Position) -------------------------------------------------------- */

typedef struct {
    uint8_t index;
    int8_t forced;
    uint8_t left;
    uint64_t key;
} Undo;

typedef struct {
    uint16_t masks[2][9];
    uint16_t occupied[9];
    /* Each board's filling as seen by each player: own cells 3^spot, the other's 2 * 3^spot. The
     * evaluation's tables are indexed by it: 3^9 entries fit a cache where (mask << 9 | mask)'s
     * 2^18 did not, and make/unmake keep it for two additions. */
    uint16_t pattern[2][9];
    uint8_t status[9];
    uint16_t won[2];
    uint16_t drawn;
    int forced;    /* board the mover must play in, -1 for any open board */
    int turn;
    int winner;    /* NO_WINNER, 0, 1 or TIE */
    uint64_t key;
    int ply;
    int drawn_lines_tie; /* the CS 4341 referee's variant; CodinGame's counts boards instead */
    uint32_t status_code; /* sum of status[b] * 4^b: the memo index of the evaluation */
    int left;             /* max_plies_left: the empty cells of open boards, kept by make/unmake */
    int sp;
    Undo stack[MAX_PLY];
} Pos;

/* -- transposition table ----------------------------------------------------------------------- */

/* A slot is two words, shared by the extension's threads without locks: ``data`` packs the entry
 * and ``check`` is key ^ data. A reader takes a slot for a key only if its two words, each read
 * whole, give that key: a slot half overwritten by another thread (one word new, one old) fails
 * the check and reads as another position's, so no thread ever uses a torn entry. Lockless rather
 * than a lock per bucket: a lock would cost two atomic read-modify-writes per node, and a bucket's
 * cache line would bounce between cores on every probe; an entry lost to a race costs only a
 * re-search. */
typedef struct {
    uint64_t check;
    uint64_t data; /* score (32 bits), depth, flag, move, gen (8 bits each, gen on top) */
} TTSlot;

/* An entry as read from its slot. */
typedef struct {
    int32_t score;
    int8_t depth;
    uint8_t flag;
    uint8_t move;
    uint8_t gen; /* search that stored it; 0 = empty slot */
} TTEntry;

/* -- the search -------------------------------------------------------------------------------- */

typedef struct {
    int32_t values[10]; /* global value * 5, then the nine board scales (Evaluator memo) */
    int ready;          /* load_flag/store_flag: set once the values are written */
} Memo;

typedef struct Search Search;

/* What the host does for the search. */
typedef struct {
    /* Seconds on a monotonic clock (deadlines are on it). */
    double (*now)(Search *s);
    /* Called every poll_every seconds of a search (a stop asked from outside, signals): 1 stops
     * it, 0 lets it go on, -1 stops it as failed (the host keeps why). */
    int (*poll)(Search *s);
    /* The classic evaluation's memo entry for the position's won and drawn boards: write its
     * values if they fit (core_memo_fits), set its ready flag (store_flag) and return 1, or
     * return 0 (failed: the search stops). */
    int (*fill_memo)(Search *s, Memo *m);
} SearchHooks;

struct Search {
    Pos pos;
    uint8_t *can_win;      /* CAN_WIN[(mover << 9) | other], 2^18: move ordering */
    int eval_kind;         /* EVAL_NONE until the host sets an evaluation */
    /* classic (agent/evaluation.py Evaluator): local table, memo filled by the fill_memo hook */
    int32_t *local;        /* LOCAL by X's Pos.pattern (core_index_local) */
    Memo *memo;            /* by status_code, filled on first use */
    long long free_move;   /* Weights.free_move * 5 */
    long long local_max;   /* the largest |LOCAL| value: bounds the scores (core_memo_fits) */
    /* fitted (agent/eval_fitted.py FittedEvaluator): the data file's tables, by Pos.pattern */
    int32_t *chance, *mover, *waiter;
    long long q, q3, w_line, w_board, w_tempo, w_free_move;
    /* table and ordering */
    TTSlot *tt;
    uint64_t tt_mask;
    int no_table; /* hash_mb=0: store nothing, like search._NoTable */
    long long tt_count;
    long long tt_replaced;
    uint8_t gen;
    long long history[2][81];
    int killers[MAX_PLY][2];
    /* search.Features (core_set_features) and the root's reduce */
    int lmr, age, solve;
    int reduce;
    /* limits of the current search */
    long long nodes;
    long long next_check;
    long long node_limit; /* -1: none */
    double deadline;      /* on hooks->now; < 0: none */
    double next_poll;
    double poll_every;    /* seconds between two polls: agent.limits.STOP_POLL_SECONDS */
    int stopped;
    int failed; /* a hook failed: the host knows why */
    int root_best_valid;
    int root_best_move;
    int root_best_score;
    TTEntry probed; /* core_probe's answer: this search's own copy, no other thread writes it */
    const SearchHooks *hooks;
    void *host;     /* the host's, for its hooks */
    /* Threads (the extension's helpers): a helper looks only at *team_stop and the deadline; the
     * main search also stops when *team_stop is set (a helper failed). NULL: no team. */
    int helper;
    int *team_stop;
};

/* -- what the hosts call ----------------------------------------------------------------------- */

/* The rules' tables; once, before anything else. */
void core_init(void);
/* agent.rules' Zobrist keys: 81, 81 and 10 of them. */
void core_set_zobrist(const uint64_t *cell_x, const uint64_t *cell_o, const uint64_t *forced);

/* What core_check_position found wrong (detail: the numbers the message needs). */
enum {
    POSITION_OK,
    POSITION_BOTH_HOLD_A_CELL,  /* detail: board */
    POSITION_BOTH_HAVE_A_LINE,  /* board */
    POSITION_STATUS,            /* board, status given, status of the cells */
    POSITION_MARK_COUNT,        /* cells of X, of O */
    POSITION_TURN,              /* turn, cells of X, of O */
    POSITION_PLY,               /* ply, cells held */
    POSITION_FORCED_NOT_OPEN,   /* forced */
    POSITION_BOTH_WON_GLOBALLY,
    POSITION_WINNER,            /* winner given, winner of the boards (as winner + 1) */
    POSITION_KEY,
};

/* Position.check (agent/rules.py), its checks in its order, on fields already in range (masks
 * 0..FULL, status 0..3, forced -1..8, turn 0..1, winner -1..2, ply 0..81): POSITION_OK and the
 * position in *out, or what is wrong. */
int core_check_position(Pos *out, const uint16_t masks[2][9], const uint8_t status[9], int forced, int turn,
                        int winner, uint64_t key, int ply, int drawn_lines_tie, int detail[3]);

/* The classic local table re-indexed by X's pattern (PATTERNS entries) from Python's 2^18 (xmask
 * << 9 | omask); returns its largest magnitude. */
long long core_index_local(int32_t *local, const int32_t *given);
/* Does a memo answer (10 values within +-EVAL_LIMIT) keep every score within EVAL_LIMIT? */
int core_memo_fits(const Search *s, const long long values[10]);

/* What core_check_fitted found wrong. */
enum {
    FITTED_OK,
    FITTED_BOUND,       /* detail: the bound on the scores */
    FITTED_LINE_RANGE,  /* line * 8 * scale^3 beyond 64 bits */
    FITTED_TABLE_VALUE, /* detail: table (0 chance, 1 mover, 2 waiter), index, value */
};
/* The fitted evaluation's weights (each already in range: scale 1..FITTED_MAX_SCALE, line and
 * board 0..EVAL_LIMIT, tempo and free_move +-EVAL_LIMIT) and tables (PATTERNS each, NULL to skip
 * them), bounded as agent/eval_fitted.py's check_data bounds them. */
int core_check_fitted(long long q, long long line, long long board, long long tempo, long long free_move,
                      int32_t *const tables[3], long long detail[3]);
void core_use_fitted(Search *s, long long q, long long line, long long board, long long tempo, long long free_move);

/* A fresh search's settings (the host has set the table, can_win and hooks). */
void core_init_search(Search *s);
/* What AlphaBeta.iterate resets before the first depth: limits, node count, killers; the history
 * is aged and the table's generation moves on. deadline < 0 and node_limit < 0: none. */
void core_start_search(Search *s, double now, double deadline, long long node_limit, double poll_seconds);
/* AlphaBeta._root in the window (alpha, beta): 1 with the score and move, 0 when the search stopped
 * (root_best may hold a proven-better move). */
int core_search_root(Search *s, const uint8_t *moves, int n, int depth, int alpha, int beta, int *out_score,
                     int *out_move);
/* The table's entry for a key, or NULL; valid until this search's next probe. */
const TTEntry *core_probe(Search *s, uint64_t key);

int core_evaluate(Search *s);
void core_move_priority(const Search *s, const uint8_t *moves, int n, int *out);
/* The legal moves in Position.legal_moves' order (ascending cell index); 0 once the game is over. */
int core_legal_moves(const Pos *p, uint8_t *out);
void core_push(Pos *p, int index);
void core_pop(Pos *p);
long long core_perft(Pos *p, int depth);

#endif
