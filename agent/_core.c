/* The compiled search core for Ultimate Tic-Tac-Toe: agent._core.
 *
 * A line-by-line mirror of the pure-Python reference, which stays the readable definition:
 *   rules      agent/rules.py       Position.push/pop/legal_moves (both rule variants)
 *   evaluation agent/evaluation.py  Evaluator.evaluate and Evaluator.move_priority
 *   search     agent/search.py      AlphaBeta._root, _negamax, _ordered, _check_limits, Features
 * The iterative deepening around _root lives in Python (agent/core.py), as in AlphaBeta.iterate,
 * and so do the aspiration windows: root() takes the window.
 * At a fixed depth both cores return the same move, score and node count; tests/test_core.py
 * holds them together, so a change to one that is not made to the other fails.
 *
 * One difference by design: the transposition table is a flat array of 16-byte entries (linear
 * probing within a window, replacement by age then depth once a window is full) instead of a
 * dict trimmed by insertion order. While no entry is replaced it behaves exactly like the dict.
 *
 * The search runs without the GIL; it takes the GIL back only to call Python: the evaluation's
 * memo function (a few hundred times per game) and the limit's should_stop (every ~10 ms).
 *
 * Threads (Searcher(..., threads=N), "Lazy SMP"): while root() searches a depth, N - 1 helper
 * threads search the same root too, on private copies of the searcher that share its table and
 * memo; the main thread's result is the one returned. They are started by root() and joined before
 * it returns, so none outlives a search; they stop when the main thread's depth ends (done or
 * stopped by its limits, which only it looks at). With threads=1 nothing of this runs and the
 * search is exactly the single-threaded one. See search_team.
 *
 * No caller can crash it (tests/test_core_fuzz.py, scripts/sanitize_core): every entry point reads
 * its arguments as exact ints in range, lists or tuples of them and buffers of the right size, or
 * raises TypeError/ValueError; set_position takes only a consistent position (Position.check's
 * checks); the evaluation's tables and weights are bounded so no score can overflow; and while a
 * call runs the search or calls Python the searcher refuses every other call (see check_idle).
 * The search itself checks nothing: all of this happens where values come in.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef _WIN32
#include <windows.h>
#include <process.h>
#else
#include <pthread.h>
#include <time.h>
#endif
#ifdef __linux__
#include <sys/mman.h>
#endif
#ifdef _MSC_VER
#include <intrin.h>
#endif

/* -- constants, as in agent/search.py and agent/rules.py -------------------------------------- */

#define WIN_SCORE 1000000
#define PROVEN_SCORE (WIN_SCORE - 1000)
#define INFINITY_SCORE (WIN_SCORE + 1)
#define EXACT 0
#define LOWER 1
#define UPPER 2
#define CLOCK_INTERVAL 256
#define MAX_PLY 128
#define LMR_MIN_DEPTH 3
#define LMR_FIRST_MOVE 3
#define LMR_DEEP_MOVE 6
#define LMR_DEEP_DEPTH 5

#define FULL 0x1FF
#define OPEN 0
#define DRAWN 3
#define TIE 2
#define NO_WINNER (-1)

/* Entries looked at from a key's home slot: a window practically never fills while the table is
 * a few percent full (so it then acts like the Python dict), and a probe of a full table reads
 * two or three cache lines, not more. */
#define TT_WINDOW 8

static const int LINES[8] = {0x007, 0x038, 0x1C0, 0x049, 0x092, 0x124, 0x111, 0x054};
static uint8_t WINS[512];
static const uint32_t POW4[9] = {1, 4, 16, 64, 256, 1024, 4096, 16384, 65536};
static const uint16_t POW3[9] = {1, 3, 9, 27, 81, 243, 729, 2187, 6561};
static uint16_t TERNARY[512]; /* a mask's spots as ternary digits: the sum of 3^spot */
#define PATTERNS 19683 /* 3^9 fillings of a 3x3 board */
#define STATUS_CODES 262144 /* 4^9: every combination of board states */

/* -- clock ------------------------------------------------------------------------------------ */

static double now_seconds(void) {
#ifdef _WIN32
    static LARGE_INTEGER frequency;
    LARGE_INTEGER counter;
    if (frequency.QuadPart == 0) QueryPerformanceFrequency(&frequency);
    QueryPerformanceCounter(&counter);
    return (double)counter.QuadPart / (double)frequency.QuadPart;
#else
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
#endif
}

/* -- what the search's threads share ------------------------------------------------------------
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
#if defined(_M_IX86) || defined(_M_X64)
#define ORDER_FENCE() _ReadWriteBarrier() /* x86 keeps loads and stores in order: only the compiler may not */
#else
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

/* A hint to load a cache line ahead of its use; nothing where no compiler builtin gives it. */
#if defined(__GNUC__) || defined(__clang__)
#define PREFETCH(address) __builtin_prefetch(address)
#elif defined(_MSC_VER) && (defined(_M_IX86) || defined(_M_X64))
#include <xmmintrin.h>
#define PREFETCH(address) _mm_prefetch((const char *)(address), _MM_HINT_T0)
#else
#define PREFETCH(address) ((void)(address))
#endif

/* Helper threads: pthreads, or the Windows CRT's (MSVC has no C11 threads). Their stack holds one
 * search frame per ply (a few KiB each, at most 81 plies); macOS gives new threads only 512 KiB. */
#define HELPER_STACK_BYTES (4u << 20)

static void run_helper(void *helper); /* a helper thread's whole life: see search_team */

#ifdef _WIN32
typedef HANDLE thread_t;
static unsigned __stdcall thread_entry(void *helper) {
    run_helper(helper);
    return 0;
}
static int thread_start(thread_t *thread, void *helper) {
    uintptr_t handle = _beginthreadex(NULL, HELPER_STACK_BYTES, thread_entry, helper, 0, NULL);
    *thread = (HANDLE)handle;
    return handle != 0;
}
static void thread_join(thread_t thread) {
    WaitForSingleObject(thread, INFINITE);
    CloseHandle(thread);
}
#else
typedef pthread_t thread_t;
static void *thread_entry(void *helper) {
    run_helper(helper);
    return NULL;
}
static int thread_start(thread_t *thread, void *helper) {
    pthread_attr_t attr;
    if (pthread_attr_init(&attr) != 0) return 0;
    pthread_attr_setstacksize(&attr, HELPER_STACK_BYTES);
    int ok = pthread_create(thread, &attr, thread_entry, helper) == 0;
    pthread_attr_destroy(&attr);
    return ok;
}
static void thread_join(thread_t thread) { pthread_join(thread, NULL); }
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

/* -- transposition table ------------------------------------------------------------------------ */

/* A slot is two words, shared by the search's threads without locks: ``data`` packs the entry and
 * ``check`` is key ^ data. A reader takes a slot for a key only if its two words, each read whole,
 * give that key: a slot half overwritten by another thread (one word new, one old) fails the check
 * and reads as another position's, so no thread ever uses a torn entry. Lockless rather than a
 * lock per bucket: a lock would cost two atomic read-modify-writes per node, and a bucket's cache
 * line would bounce between cores on every probe; an entry lost to a race costs only a re-search. */
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

#define TT_GEN(data) ((uint8_t)((data) >> 56))
#define TT_DEPTH(data) ((int8_t)((data) >> 32))

/* The table's memory, zeroed and made resident only when touched, as calloc's. On Linux in 2 MiB
 * pages where the kernel gives them (transparent huge pages, on madvise by default): a probe of
 * the default 64 MiB table in 4 KiB pages missed the TLB almost every time, and the page walks
 * were a large part of the search's time (scripts/profile_core.sh, docs/core_speed.md). Elsewhere, and for small tables, calloc. */
#if defined(__linux__) && defined(MADV_HUGEPAGE) && !defined(UTTT_NO_HUGE_PAGES) /* the latter: to measure without */
#define HUGE_PAGE_BYTES ((size_t)2 << 20)
static TTSlot *tt_alloc(size_t slots, size_t *mapped) {
    size_t bytes = slots * sizeof(TTSlot);
    *mapped = 0;
    if (bytes < HUGE_PAGE_BYTES || bytes % HUGE_PAGE_BYTES != 0) return calloc(slots, sizeof(TTSlot));
    /* mmap aligns to 4 KiB only: map a huge page more and unmap the unaligned ends */
    char *raw = mmap(NULL, bytes + HUGE_PAGE_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) return NULL;
    char *start = (char *)(((uintptr_t)raw + HUGE_PAGE_BYTES - 1) & ~(uintptr_t)(HUGE_PAGE_BYTES - 1));
    if (start > raw) munmap(raw, (size_t)(start - raw));
    if (start + bytes < raw + bytes + HUGE_PAGE_BYTES)
        munmap(start + bytes, (size_t)(raw + bytes + HUGE_PAGE_BYTES - (start + bytes)));
    madvise(start, bytes, MADV_HUGEPAGE); /* a refusal leaves 4 KiB pages: slower, the same results */
    *mapped = bytes;
    return (TTSlot *)start;
}
static void tt_free(TTSlot *tt, size_t mapped) {
    if (mapped)
        munmap(tt, mapped);
    else
        free(tt);
}
#else
static TTSlot *tt_alloc(size_t slots, size_t *mapped) {
    *mapped = 0;
    return calloc(slots, sizeof(TTSlot));
}
static void tt_free(TTSlot *tt, size_t mapped) {
    (void)mapped;
    free(tt);
}
#endif

/* -- the searcher object ----------------------------------------------------------------------- */

typedef struct {
    int32_t values[10]; /* global value * 5, then the nine board scales (Evaluator memo) */
    int ready;          /* load_flag/store_flag: set once the values are written */
} Memo;

typedef struct Helper Helper;

typedef struct Searcher {
    PyObject_HEAD
    Pos pos;
    uint8_t *can_win;      /* CAN_WIN[(mover << 9) | other], 2^18: move ordering */
    int eval_kind;         /* EVAL_NONE until set_classic or set_fitted */
    /* classic (agent/evaluation.py Evaluator): local table, memo filled by a Python callback */
    int32_t *local;        /* LOCAL[(xmask << 9) | omask], by X's Pos.pattern */
    Memo *memo;            /* by status_code, filled on first use */
    PyObject *memo_fn;     /* (won_x, won_o, drawn) -> 10 ints */
    long long free_move;   /* Weights.free_move * 5 */
    long long local_max;   /* the largest |LOCAL| value: bounds the scores (fill_memo) */
    /* fitted (agent/eval_fitted.py FittedEvaluator): the data file's tables, by Pos.pattern */
    int32_t *chance, *mover, *waiter;
    long long q, q3, w_line, w_board, w_tempo, w_free_move;
    /* table and ordering */
    TTSlot *tt;
    size_t tt_mapped; /* tt_alloc's: bytes mapped, 0 for calloc */
    uint64_t tt_mask;
    int no_table; /* hash_mb=0: store nothing, like search._NoTable */
    long long tt_count;
    long long tt_replaced;
    uint8_t gen;
    long long history[2][81];
    int killers[MAX_PLY][2];
    /* search.Features (set_features) and root()'s reduce */
    int lmr, age, solve;
    int reduce;
    /* limits of the current search */
    long long nodes;
    long long next_check;
    long long node_limit; /* -1: none */
    double deadline;      /* on now_seconds(); < 0: none */
    PyObject *should_stop;
    double next_should_stop;
    double should_stop_every; /* seconds between two calls: agent.limits.STOP_POLL_SECONDS */
    int stopped;
    int failed; /* a Python call raised: the exception is set */
    PyThreadState *thread; /* while the GIL is released */
    int root_best_valid;
    int root_best_move;
    int root_best_score;
    /* The call that holds the searcher (see check_idle), NULL when idle, and its thread. */
    const char *busy;
    unsigned long busy_thread;
    TTEntry probed; /* tt_probe's answer: this searcher's own copy, no other thread writes it */
    /* threads (search_team): the main searcher's team, or in a helper's copy its leader */
    int threads;
    Helper *helpers;           /* threads - 1 of them */
    struct Searcher *leader;   /* NULL in the main searcher */
    int stop_team;             /* load_flag/store_flag: the main depth ended, or a helper failed */
    long long helper_nodes;    /* nodes the helpers searched in this search */
    PyObject *helper_error;    /* the first exception a helper's Python call raised (held with the GIL) */
    PyGILState_STATE gil;      /* a helper's hold of the GIL while it calls Python */
} Searcher;

/* A helper thread: a private copy of the searcher (its own position, history, killers, counters;
 * the table, memo and evaluation tables shared) and the root it searches. */
struct Helper {
    Searcher s;
    thread_t thread;
    uint8_t moves[81];
    int n;
    int depth;
};

/* Evaluations stay within +-EVAL_LIMIT: set_classic, set_fitted and the memo's answers are checked
 * against it, so no sum, negation or +-ply in the search can overflow an int. */
#define EVAL_LIMIT (1LL << 30)

/* -- reading Python values ---------------------------------------------------------------------- */

/* Only real ints (bool included) and floats are taken, never objects converted by __index__ or
 * __float__: reading an argument then runs no Python code, which could call the searcher back or
 * change a list being read. The messages are agent/rules.py's (_check_int...), word for word. */

#define NAME_SIZE 80

/* An int's value, or in *overflow the sign of one beyond 64 bits; 0 (TypeError) for what is not
 * an int. ``name`` receives its name, ``what[index]`` (index -1: ``what``). */
static int int_value(PyObject *obj, const char *what, Py_ssize_t index, char *name, long long *v, int *overflow) {
    if (index >= 0)
        PyOS_snprintf(name, NAME_SIZE, "%s[%zd]", what, index);
    else
        PyOS_snprintf(name, NAME_SIZE, "%s", what);
    if (!PyLong_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s must be an int, not %.100s", name, Py_TYPE(obj)->tp_name);
        return 0;
    }
    *v = PyLong_AsLongLongAndOverflow(obj, overflow);
    return !(*v == -1 && PyErr_Occurred());
}

/* An int in lo..hi. */
static int read_int(PyObject *obj, long long lo, long long hi, const char *what, Py_ssize_t index, long long *out) {
    char name[NAME_SIZE];
    int overflow;
    long long v;
    if (!int_value(obj, what, index, name, &v, &overflow)) return 0;
    if (overflow) {
        PyErr_Format(PyExc_ValueError, "%s must be %lld to %lld, got an int beyond 64 bits", name, lo, hi);
        return 0;
    }
    if (v < lo || v > hi) {
        PyErr_Format(PyExc_ValueError, "%s must be %lld to %lld, got %lld", name, lo, hi, v);
        return 0;
    }
    *out = v;
    return 1;
}

/* A 64-bit key: an int 0 to 2**64-1. */
static int read_key(PyObject *obj, const char *what, Py_ssize_t index, uint64_t *out) {
    char name[NAME_SIZE];
    int overflow;
    long long v;
    if (!int_value(obj, what, index, name, &v, &overflow)) return 0;
    if (overflow > 0) { /* 2**63 to 2**64-1 are keys too */
        unsigned long long u = PyLong_AsUnsignedLongLong(obj);
        if (!(u == (unsigned long long)-1 && PyErr_Occurred())) {
            *out = u;
            return 1;
        }
        if (!PyErr_ExceptionMatches(PyExc_OverflowError)) return 0;
        PyErr_Clear();
    }
    if (overflow)
        PyErr_Format(PyExc_ValueError, "%s must be 0 to 2**64-1, got an int beyond 64 bits", name);
    else if (v < 0)
        PyErr_Format(PyExc_ValueError, "%s must be 0 to 2**64-1, got %lld", name, v);
    else
        *out = (uint64_t)v;
    return !PyErr_Occurred();
}

/* The items of a list or tuple of n values (n < 0: any length from 1 to -n), or NULL. */
static PyObject **read_items(PyObject *seq, Py_ssize_t n, const char *what, Py_ssize_t *count) {
    if (!PyList_Check(seq) && !PyTuple_Check(seq)) {
        PyErr_Format(PyExc_TypeError, "%s must be a list or tuple, not %.100s", what, Py_TYPE(seq)->tp_name);
        return NULL;
    }
    *count = PySequence_Fast_GET_SIZE(seq);
    if (n >= 0 ? *count != n : *count < 1 || *count > -n) {
        if (n >= 0)
            PyErr_Format(PyExc_ValueError, "%s must hold %zd ints, got %zd", what, n, *count);
        else
            PyErr_Format(PyExc_ValueError, "%s must hold 1 to %zd ints, got %zd", what, -n, *count);
        return NULL;
    }
    return PySequence_Fast_ITEMS(seq);
}

/* A list or tuple of exactly n ints in lo..hi. */
static int read_ints(PyObject *seq, Py_ssize_t n, long long lo, long long hi, const char *what, long long *out) {
    Py_ssize_t count;
    PyObject **items = read_items(seq, n, what, &count);
    if (items == NULL) return 0;
    for (Py_ssize_t i = 0; i < n; i++)
        if (!read_int(items[i], lo, hi, what, i, &out[i])) return 0;
    return 1;
}

/* A number of seconds, int or float, not nan; ints beyond a double are +-inf. */
static int read_seconds(PyObject *obj, const char *what, double *out) {
    if (PyFloat_Check(obj)) {
        *out = PyFloat_AS_DOUBLE(obj);
    } else if (PyLong_Check(obj)) {
        *out = PyLong_AsDouble(obj);
        if (*out == -1.0 && PyErr_Occurred()) {
            if (!PyErr_ExceptionMatches(PyExc_OverflowError)) return 0;
            PyErr_Clear();
            int overflow;
            PyLong_AsLongLongAndOverflow(obj, &overflow);
            *out = overflow > 0 ? HUGE_VAL : -HUGE_VAL;
        }
    } else {
        PyErr_Format(PyExc_TypeError, "%s must be an int or float, not %.100s", what, Py_TYPE(obj)->tp_name);
        return 0;
    }
    if (isnan(*out)) {
        PyErr_Format(PyExc_ValueError, "%s must be a number of seconds, not nan", what);
        return 0;
    }
    return 1;
}

/* Run Python code from inside the GIL-free search. The main searcher takes back its own thread
 * state; a helper thread (a copy with a leader, see search_team) has none and borrows one for the
 * call, so an exception raised there is kept for root() to raise: it would die with that state. */
static void keep_helper_error(Searcher *helper);
#define WITH_GIL_BEGIN(s)                                                                                     \
    if ((s)->leader != NULL)                                                                                  \
        (s)->gil = PyGILState_Ensure();                                                                       \
    else                                                                                                      \
        PyEval_RestoreThread((s)->thread);
#define WITH_GIL_END(s)                                                                                       \
    if ((s)->leader != NULL) {                                                                                \
        if (PyErr_Occurred()) keep_helper_error(s);                                                           \
        PyGILState_Release((s)->gil);                                                                         \
    } else {                                                                                                  \
        (s)->thread = PyEval_SaveThread();                                                                    \
    }

/* Memo entries are written with the GIL held, once each (threads share the memo), and published by
 * their ready flag. */
static int fill_memo(Searcher *s, Memo *m) {
    const Pos *p = &s->pos;
    int ok = 0;
    WITH_GIL_BEGIN(s)
    long long v[10];
    if (load_flag(&m->ready)) { /* another thread filled it while this one waited for the GIL */
        WITH_GIL_END(s)
        return 1;
    }
    PyObject *result = PyObject_CallFunction(s->memo_fn, "iii", (int)p->won[0], (int)p->won[1], (int)p->drawn);
    if (result != NULL) {
        ok = read_ints(result, 10, -EVAL_LIMIT, EVAL_LIMIT, "the evaluation memo's answer", v);
        Py_DECREF(result);
    }
    if (ok) {
        /* |score| <= |global| + max|local| * sum|scale| + |free_move| must stay within EVAL_LIMIT */
        long long scales = 0, room = EVAL_LIMIT - llabs(v[0]) - llabs(s->free_move);
        for (int i = 1; i < 10; i++) scales += llabs(v[i]);
        if (room < 0 || (scales > 0 && s->local_max > room / scales)) {
            PyErr_Format(PyExc_ValueError, "the evaluation memo's answer for won (%d, %d), drawn %d could take "
                         "scores beyond 2**30 with this local table", (int)p->won[0], (int)p->won[1], (int)p->drawn);
            ok = 0;
        }
    }
    if (ok) {
        for (int i = 0; i < 10; i++) m->values[i] = (int32_t)v[i];
        store_flag(&m->ready, 1);
    }
    WITH_GIL_END(s)
    if (!ok) {
        s->failed = 1;
        s->stopped = 1;
        return 0;
    }
    return 1;
}

/* -- evaluation: the one section to change when the evaluation changes --------------------------- */

#define EVAL_NONE 0
#define EVAL_CLASSIC 1
#define EVAL_FITTED 2

/* agent/evaluation.py Evaluator.evaluate */
static int evaluate_classic(Searcher *s) {
    const Pos *p = &s->pos;
    Memo *m = &s->memo[p->status_code];
    if (!load_flag(&m->ready) && !fill_memo(s, m)) return 0;
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
static int evaluate_fitted(Searcher *s) {
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

static int evaluate(Searcher *s) {
    return s->eval_kind == EVAL_FITTED ? evaluate_fitted(s) : evaluate_classic(s);
}

/* Evaluator.move_priority: a local win first, then a block; a move that sends the opponent to a
 * board they can win at once, or lets them play anywhere, last. */
static void move_priority(const Searcher *s, const uint8_t *moves, int n, int *out) {
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
static TTEntry *tt_probe(Searcher *s, uint64_t key) {
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

static void tt_store(Searcher *s, uint64_t key, int depth, int flag, int score, int move) {
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

/* AlphaBeta._check_limits; also lets Python handle signals (Ctrl-C) now and then, which it cannot
 * do by itself while this code holds the thread. */
static int check_limits(Searcher *s) {
    s->next_check = s->nodes + CLOCK_INTERVAL;
    if (s->leader != NULL) /* a helper (search_team): the team's stop, or the deadline, seen by itself */
        return load_flag(&s->leader->stop_team) || (s->deadline >= 0 && now_seconds() >= s->deadline);
    if (s->threads > 1 && load_flag(&s->stop_team)) return 1;       /* a helper failed */
    if (s->node_limit >= 0 && s->nodes >= s->node_limit) return 1;
    double now = now_seconds();
    if (s->deadline >= 0 && now >= s->deadline) return 1;
    if (now >= s->next_should_stop) {
        s->next_should_stop = now + s->should_stop_every;
        int stop = 0;
        WITH_GIL_BEGIN(s)
        if (PyErr_CheckSignals() < 0) {
            stop = -1;
        } else if (s->should_stop != NULL) {
            PyObject *answer = PyObject_CallNoArgs(s->should_stop);
            stop = answer == NULL ? -1 : PyObject_IsTrue(answer);
            Py_XDECREF(answer);
        }
        WITH_GIL_END(s)
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
static int order_moves(Searcher *s, int depth, int tt_move, int ply, MoveOrder *o) {
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

static int negamax(Searcher *s, int depth, int alpha, int beta, int ply) {
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
static int search_root(Searcher *s, const uint8_t *moves, int n, int depth, int alpha, int beta, int *out_score,
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

/* -- threads (Lazy SMP) ------------------------------------------------------------------------- */

/* Helpers start only at depths whose search outlasts starting threads (tens of microseconds). */
#define HELPER_MIN_DEPTH 5
#define MAX_THREADS 64

/* A helper thread's life: search the root from its depth on, one depth after another, until the
 * main thread's depth ends (check_limits). What it stores in the shared table is what the main
 * search gains: bounds and best moves of positions it has yet to reach. */
static void run_helper(void *helper) {
    Helper *h = (Helper *)helper;
    Searcher *s = &h->s;
    int score, move, last = 81 - s->pos.ply; /* deeper than the game can last finds nothing more */
    for (int depth = h->depth; depth <= last && depth < MAX_PLY; depth++)
        if (!search_root(s, h->moves, h->n, depth, -INFINITY_SCORE, INFINITY_SCORE, &score, &move)) break;
}

/* root() with threads: the main thread searches ``depth`` in the window exactly as search_root
 * does, while threads - 1 helpers search the same root in the full window, sharing the table,
 * half of them at the same depth and half one deeper (a helper at the same depth saved the main
 * thread more nodes to each depth than one a ply deeper: scripts/bench_threads.py); the main
 * thread's result is returned. The helpers
 * are copies of the searcher made here and joined before this returns, whatever ended the main
 * search, so none outlives it; they stop within a clock interval of it (or of the deadline). One
 * thread, no table, or a depth too shallow to be worth threads: search_root. */
static int search_team(Searcher *s, const uint8_t *moves, int n, int depth, int alpha, int beta, int *out_score,
                       int *out_move) {
    if (s->threads <= 1 || s->no_table || depth < HELPER_MIN_DEPTH)
        return search_root(s, moves, n, depth, alpha, beta, out_score, out_move);
    int started = 0;
    for (int k = 1; k < s->threads; k++) {
        Helper *h = &s->helpers[k - 1];
        Searcher *copy = &h->s;
        memcpy(copy, s, sizeof *s); /* the position, history, killers; pointers to the shared tables */
        copy->leader = s;
        copy->thread = NULL;
        copy->nodes = copy->tt_count = copy->tt_replaced = 0;
        copy->next_check = CLOCK_INTERVAL;
        copy->stopped = copy->failed = 0;
        memcpy(h->moves, moves, (size_t)n);
        h->n = n;
        h->depth = depth + (k - 1) % 2;
        if (!thread_start(&h->thread, h)) break; /* no more threads to be had: search with those started */
        started++;
    }
    int done = search_root(s, moves, n, depth, alpha, beta, out_score, out_move);
    store_flag(&s->stop_team, 1);
    for (int k = 0; k < started; k++) {
        Searcher *copy = &s->helpers[k].s;
        thread_join(s->helpers[k].thread);
        s->helper_nodes += copy->nodes;
        s->tt_count += copy->tt_count;
        s->tt_replaced += copy->tt_replaced;
    }
    store_flag(&s->stop_team, 0);
    return done;
}

/* The raised exception taken out of the thread state (GIL held), or NULL; raise_exception puts it
 * back (stealing the reference). */
static PyObject *take_exception(void) {
#if PY_VERSION_HEX >= 0x030C0000
    return PyErr_GetRaisedException();
#else
    PyObject *type, *value, *traceback;
    PyErr_Fetch(&type, &value, &traceback);
    PyErr_NormalizeException(&type, &value, &traceback);
    if (value != NULL && traceback != NULL) PyException_SetTraceback(value, traceback);
    Py_XDECREF(type);
    Py_XDECREF(traceback);
    return value;
#endif
}

static void raise_exception(PyObject *error) {
#if PY_VERSION_HEX >= 0x030C0000
    PyErr_SetRaisedException(error);
#else
    PyErr_Restore(Py_NewRef((PyObject *)Py_TYPE(error)), error, PyException_GetTraceback(error));
#endif
}

/* A helper's Python call raised (GIL held): keep the first exception for root() to raise, and stop
 * the team. */
static void keep_helper_error(Searcher *helper) {
    Searcher *leader = helper->leader;
    PyObject *error = take_exception();
    if (leader->helper_error == NULL)
        leader->helper_error = error;
    else
        Py_XDECREF(error);
    store_flag(&leader->stop_team, 1);
}

/* -- Python interface --------------------------------------------------------------------------- */

/* Searchers held by a call (check_idle): set_zobrist may not change the keys under them. */
static int held_searchers = 0;

/* Every method and attribute starts here. While a call holds the searcher (root, evaluate and
 * perft while they search, __init__, set_classic and set_fitted while they read buffers) every
 * other call is refused with RuntimeError: one from its own callbacks (should_stop, the evaluation
 * memo, a signal handler, a __buffer__) would change the position or free the tables under the
 * running code, and one from another thread would search the same position and table at once.
 * Refused rather than made to wait: a callback waiting for its own search would wait forever, and
 * a searcher's calls only make sense in order (set_position, new_search, root, root_best), which a
 * lock around each call does not give two threads sharing one searcher. `busy` is read and written
 * only with the GIL held, so it needs no atomics (a free-threaded CPython keeps the GIL on for this
 * module, which does not declare Py_mod_gil_not_used). */
static int check_idle(Searcher *s, const char *name) {
    if (s->busy == NULL) return 1;
    if (s->busy_thread == PyThread_get_thread_ident())
        PyErr_Format(PyExc_RuntimeError, "Searcher.%s refused: Searcher.%s is running and code it calls back "
                     "(should_stop, the evaluation memo, a signal handler) may not use its searcher", name, s->busy);
    else
        PyErr_Format(PyExc_RuntimeError, "Searcher.%s refused: Searcher.%s is running in another thread; one "
                     "thread at a time may use a searcher", name, s->busy);
    return 0;
}

static void hold(Searcher *s, const char *name) {
    s->busy = name;
    s->busy_thread = PyThread_get_thread_ident();
    held_searchers++;
}

static void let_go(Searcher *s) {
    s->busy = NULL;
    held_searchers--;
}

static int check_ready(Searcher *s, const char *name) {
    if (!check_idle(s, name)) return 0;
    if (s->tt == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "Searcher is not initialised");
        return 0;
    }
    return 1;
}

static int check_evaluation(Searcher *s, const char *name) {
    if (!check_ready(s, name)) return 0;
    if (s->eval_kind == EVAL_NONE) {
        PyErr_SetString(PyExc_RuntimeError, "no evaluation: call set_classic or set_fitted first");
        return 0;
    }
    return 1;
}

static int zobrist_ready = 0;

/* set_zobrist(cell_x, cell_o, forced): agent.rules' keys, 81, 81 and 10 ints 0 to 2**64-1. */
static PyObject *core_set_zobrist(PyObject *module, PyObject *args) {
    PyObject *tables[3];
    static const char *names[3] = {"ZOBRIST_CELL[0]", "ZOBRIST_CELL[1]", "ZOBRIST_FORCED"};
    static const Py_ssize_t sizes[3] = {81, 81, 10};
    uint64_t keys[3][81];
    if (!PyArg_ParseTuple(args, "OOO", &tables[0], &tables[1], &tables[2])) return NULL;
    for (int k = 0; k < 3; k++) {
        Py_ssize_t count;
        PyObject **items = read_items(tables[k], sizes[k], names[k], &count);
        if (items == NULL) return NULL;
        for (Py_ssize_t i = 0; i < count; i++)
            if (!read_key(items[i], names[k], i, &keys[k][i])) return NULL;
    }
    if (held_searchers > 0) {
        PyErr_SetString(PyExc_RuntimeError, "set_zobrist refused: a searcher is running and its keys may not change");
        return NULL;
    }
    memcpy(ZOBRIST_CELL[0], keys[0], sizeof ZOBRIST_CELL[0]);
    memcpy(ZOBRIST_CELL[1], keys[1], sizeof ZOBRIST_CELL[1]);
    memcpy(ZOBRIST_FORCED, keys[2], sizeof ZOBRIST_FORCED);
    zobrist_ready = 1;
    Py_RETURN_NONE;
}

static void Searcher_dealloc(Searcher *s) {
    Py_XDECREF(s->memo_fn);
    Py_XDECREF(s->should_stop);
    PyMem_RawFree(s->can_win);
    PyMem_RawFree(s->local);
    free(s->memo);
    PyMem_RawFree(s->chance);
    PyMem_RawFree(s->mover);
    PyMem_RawFree(s->waiter);
    if (s->tt != NULL) tt_free(s->tt, s->tt_mapped);
    free(s->helpers);
    Py_XDECREF(s->helper_error);
    Py_TYPE(s)->tp_free((PyObject *)s);
}

/* A fresh copy of a bytes-like object of exactly ``size`` bytes, or NULL. Getting the buffer may
 * run Python code (a class's __buffer__): callers hold the searcher meanwhile. */
static void *copy_buffer(PyObject *obj, Py_ssize_t size, const char *what) {
    Py_buffer view;
    if (PyObject_GetBuffer(obj, &view, PyBUF_SIMPLE) < 0) return NULL;
    void *copy = NULL;
    if (view.len != size)
        PyErr_Format(PyExc_ValueError, "%s: expected %zd bytes, got %zd", what, size, view.len);
    else if ((copy = PyMem_RawMalloc(size)) == NULL)
        PyErr_NoMemory();
    else
        memcpy(copy, view.buf, size);
    PyBuffer_Release(&view);
    return copy;
}

#define TABLE_BYTES ((Py_ssize_t)sizeof(int32_t) << 18)
#define MAX_TT_SLOTS (1LL << 32) /* 64 GiB of table */

/* What AlphaBeta.iterate resets before the first depth: limits, node count, killers; the history is
 * aged and the table's generation moves on. The callable is swapped in last: dropping the old one
 * may run Python code. */
static void start_search(Searcher *s, double now, double deadline, long long node_limit, PyObject *should_stop,
                         double poll_seconds) {
    s->deadline = deadline;
    s->node_limit = node_limit;
    s->should_stop_every = poll_seconds;
    s->next_should_stop = now + poll_seconds;
    s->nodes = 0;
    s->helper_nodes = 0;
    s->next_check = CLOCK_INTERVAL;
    for (int t = 0; t < 2; t++)
        for (int m = 0; m < 81; m++) s->history[t][m] >>= s->age; /* old cut-offs must not dominate */
    for (int i = 0; i < MAX_PLY; i++) s->killers[i][0] = s->killers[i][1] = -1;
    s->gen = (uint8_t)(s->gen + 1);
    if (s->gen == 0) s->gen = 1; /* 0 marks an empty slot */
    Py_XINCREF(should_stop);
    Py_XSETREF(s->should_stop, should_stop);
}

/* Searcher(can_win, tt_slots, prefault=True, threads=1): can_win is 2^18 bytes
 * (evaluation.build_can_win_table), tt_slots a power of two, or 0 for no table; threads 1 to
 * MAX_THREADS searches root() runs at once (search_team). Then set_classic or set_fitted chooses
 * the evaluation. */
static int Searcher_init(Searcher *s, PyObject *args, PyObject *kwargs) {
    static char *names[] = {"can_win", "tt_slots", "prefault", "threads", NULL};
    PyObject *can_win_arg, *slots_arg, *prefault_arg = Py_True, *threads_arg = NULL;
    long long tt_slots, prefault, threads = 1;
    if (!check_idle(s, "__init__")) return -1;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO|OO", names, &can_win_arg, &slots_arg, &prefault_arg,
                                     &threads_arg))
        return -1;
    if (s->tt != NULL) {
        PyErr_SetString(PyExc_RuntimeError, "Searcher is already initialised");
        return -1;
    }
    if (!zobrist_ready) {
        PyErr_SetString(PyExc_RuntimeError, "call set_zobrist() before making a Searcher");
        return -1;
    }
    if (!read_int(slots_arg, 0, MAX_TT_SLOTS, "tt_slots", -1, &tt_slots) ||
        !read_int(prefault_arg, 0, 1, "prefault", -1, &prefault) ||
        (threads_arg != NULL && !read_int(threads_arg, 1, MAX_THREADS, "threads", -1, &threads)))
        return -1;
    if (tt_slots != 0 && (tt_slots < TT_WINDOW || (tt_slots & (tt_slots - 1)) != 0)) {
        PyErr_Format(PyExc_ValueError, "tt_slots must be 0 or a power of two of at least %d", TT_WINDOW);
        return -1;
    }
    size_t slots = tt_slots ? (size_t)tt_slots : TT_WINDOW;
    hold(s, "__init__");
    uint8_t *can_win = copy_buffer(can_win_arg, 1 << 18, "can_win");
    TTSlot *tt = NULL;
    size_t tt_mapped = 0;
    Helper *helpers = NULL;
    if (can_win != NULL && ((tt = tt_alloc(slots, &tt_mapped)) == NULL ||
                            (threads > 1 && (helpers = calloc((size_t)threads - 1, sizeof(Helper))) == NULL))) {
        if (tt != NULL) tt_free(tt, tt_mapped);
        tt = NULL;
        PyErr_NoMemory();
    }
    /* Touch every page now, before any clock runs: the first searches would otherwise pay a page
     * fault per new 4 KiB of table (a third of the first second's speed). */
    if (tt != NULL && prefault) {
        Py_BEGIN_ALLOW_THREADS
        memset(tt, 0, slots * sizeof(TTSlot));
        Py_END_ALLOW_THREADS
    }
    let_go(s);
    if (tt == NULL) {
        PyMem_RawFree(can_win);
        return -1;
    }
    s->can_win = can_win;
    s->tt = tt;
    s->tt_mapped = tt_mapped;
    s->threads = (int)threads;
    s->helpers = helpers;
    s->tt_mask = (uint64_t)slots - 1;
    s->no_table = tt_slots == 0;
    s->eval_kind = EVAL_NONE;
    s->pos.winner = NO_WINNER;
    s->pos.forced = -1;
    s->pos.drawn_lines_tie = 1;
    s->pos.key = ZOBRIST_FORCED[0];
    s->age = 3; /* search.PLAIN until set_features */
    start_search(s, now_seconds(), -1, -1, NULL, 0.01); /* no limits until new_search */
    return 0;
}

/* set_classic(local, memo, free_move): local is 2^18 native int32 (build_local_table), memo(won_x,
 * won_o, drawn) -> (global value * 5, nine board scales), free_move = Weights.free_move * 5. */
static PyObject *Searcher_set_classic(Searcher *s, PyObject *args) {
    PyObject *local_arg, *memo_fn, *free_arg;
    long long free_move;
    if (!check_ready(s, "set_classic")) return NULL;
    if (!PyArg_ParseTuple(args, "OOO", &local_arg, &memo_fn, &free_arg)) return NULL;
    if (!PyCallable_Check(memo_fn)) {
        PyErr_SetString(PyExc_TypeError, "memo must be callable");
        return NULL;
    }
    if (!read_int(free_arg, -EVAL_LIMIT, EVAL_LIMIT, "free_move", -1, &free_move)) return NULL;
    hold(s, "set_classic");
    int32_t *given = copy_buffer(local_arg, TABLE_BYTES, "local");
    let_go(s);
    if (given == NULL) return NULL;
    Memo *memo = calloc(STATUS_CODES, sizeof(Memo)); /* lazily resident, like the table */
    int32_t *local = PyMem_RawMalloc(PATTERNS * sizeof(int32_t));
    if (memo == NULL || local == NULL) {
        free(memo);
        PyMem_RawFree(local);
        PyMem_RawFree(given);
        return PyErr_NoMemory();
    }
    long long local_max = 0;
    for (int i = 0; i < 1 << 18; i++)
        if (llabs(given[i]) > local_max) local_max = llabs(given[i]);
    for (unsigned x = 0; x < 512; x++) /* re-indexed by X's pattern (Pos.pattern[0]) */
        for (unsigned o = 0; o < 512; o++)
            if (!(x & o)) local[TERNARY[x] + 2 * TERNARY[o]] = given[x << 9 | o];
    PyMem_RawFree(given);
    PyMem_RawFree(s->local);
    s->local = local;
    free(s->memo);
    s->memo = memo;
    s->local_max = local_max;
    s->free_move = free_move;
    s->eval_kind = EVAL_CLASSIC;
    Py_INCREF(memo_fn);
    Py_XSETREF(s->memo_fn, memo_fn); /* last: dropping the old memo may run Python code */
    Py_RETURN_NONE;
}

/* set_fitted(chance, mover, waiter, q, line, board, tempo, free_move): the data file's three tables
 * of 3^9 native int32 in pattern order (agent/eval_fitted.py), each 0..q, and its scale and weights,
 * bounded as check_data bounds them (scores within EVAL_LIMIT, and line * 8 * q^3 within 64 bits).
 * They stay in pattern order, indexed by Pos.pattern: the mover's view of a board gives FittedEvaluator's
 * index, and the other player's view the index of its swapped pattern. */
static PyObject *Searcher_set_fitted(Searcher *s, PyObject *args) {
    PyObject *sources[3], *weight_args[5];
    static const char *names[3] = {"chance", "mover", "waiter"};
    static const char *weight_names[5] = {"scale", "line", "board", "tempo", "free_move"};
    static const long long lows[5] = {1, 0, 0, -EVAL_LIMIT, -EVAL_LIMIT};
    static const long long highs[5] = {100000, EVAL_LIMIT, EVAL_LIMIT, EVAL_LIMIT, EVAL_LIMIT};
    long long w[5];
    if (!check_ready(s, "set_fitted")) return NULL;
    if (!PyArg_ParseTuple(args, "OOOOOOOO", &sources[0], &sources[1], &sources[2], &weight_args[0],
                          &weight_args[1], &weight_args[2], &weight_args[3], &weight_args[4]))
        return NULL;
    for (int k = 0; k < 5; k++)
        if (!read_int(weight_args[k], lows[k], highs[k], weight_names[k], -1, &w[k])) return NULL;
    long long q = w[0], line = w[1], board = w[2], tempo = w[3], free_move = w[4];
    long long bound = 8 * line + 9 * board + llabs(tempo) + llabs(free_move);
    if (bound > EVAL_LIMIT) {
        PyErr_Format(PyExc_ValueError, "the weights could take scores to %lld, beyond 2**30", bound);
        return NULL;
    }
    if (line > LLONG_MAX / (8 * q * q * q)) {
        PyErr_Format(PyExc_ValueError, "line %lld with scale %lld: line * 8 * scale**3 is beyond 64 bits", line, q);
        return NULL;
    }
    int32_t *pattern[3] = {NULL, NULL, NULL};
    int ok = 1;
    hold(s, "set_fitted");
    for (int k = 0; k < 3 && ok; k++)
        ok = (pattern[k] = copy_buffer(sources[k], PATTERNS * (Py_ssize_t)sizeof(int32_t), names[k])) != NULL;
    let_go(s);
    for (int k = 0; k < 3 && ok; k++)
        for (int i = 0; i < PATTERNS && ok; i++)
            if (pattern[k][i] < 0 || pattern[k][i] > q) {
                PyErr_Format(PyExc_ValueError, "%s[%d] must be 0 to %lld, got %d", names[k], i, q, (int)pattern[k][i]);
                ok = 0;
            }
    if (!ok) {
        for (int k = 0; k < 3; k++) PyMem_RawFree(pattern[k]);
        return NULL;
    }
    /* Kept in pattern order: Pos.pattern[mover] is FittedEvaluator's index of a board, and
     * Pos.pattern[other] the index of the same board seen by the other player. */
    int32_t **slots[3] = {&s->chance, &s->mover, &s->waiter};
    for (int k = 0; k < 3; k++) {
        PyMem_RawFree(*slots[k]);
        *slots[k] = pattern[k];
    }
    s->q = q;
    s->q3 = q * q * q;
    s->w_line = line;
    s->w_board = board;
    s->w_tempo = tempo;
    s->w_free_move = free_move;
    s->eval_kind = EVAL_FITTED;
    Py_RETURN_NONE;
}

static const char *STATUS_NAMES[4] = {"open", "won by X", "won by O", "drawn"};
static const char *RESULT_NAMES[4] = {"the game goes on", "X won", "O won", "a tie"}; /* by winner + 1 */

/* set_position(masks_x, masks_o, status, forced, turn, winner, key, ply, drawn_lines_tie): the
 * Python Position's fields (winner -1 for None), checked as Position.check (agent/rules.py) checks
 * them, in the same order and words; occupied, won and drawn follow from them. An inconsistent
 * position raises ValueError and the searcher keeps the position it had. From a consistent one
 * the search's moves keep it consistent, and a game not over has a legal move. */
static PyObject *Searcher_set_position(Searcher *s, PyObject *args) {
    PyObject *a[9];
    long long masks[2][9], status[9], forced, turn, winner, ply, drawn_lines_tie;
    uint64_t key;
    if (!check_ready(s, "set_position")) return NULL;
    if (!PyArg_ParseTuple(args, "OOOOOOOOO", &a[0], &a[1], &a[2], &a[3], &a[4], &a[5], &a[6], &a[7], &a[8]))
        return NULL;
    if (!read_ints(a[0], 9, 0, FULL, "masks[0]", masks[0]) || !read_ints(a[1], 9, 0, FULL, "masks[1]", masks[1]) ||
        !read_ints(a[2], 9, OPEN, DRAWN, "status", status) || !read_int(a[3], -1, 8, "forced", -1, &forced) ||
        !read_int(a[4], 0, 1, "turn", -1, &turn) || !read_int(a[5], -1, TIE, "winner", -1, &winner) ||
        !read_key(a[6], "key", -1, &key) || !read_int(a[7], 0, 81, "ply", -1, &ply) ||
        !read_int(a[8], 0, 1, "drawn_lines_tie", -1, &drawn_lines_tie))
        return NULL;
    Pos p;
    memset(&p, 0, sizeof p);
    int marks[2] = {0, 0};
    for (int b = 0; b < 9; b++) {
        unsigned x = (unsigned)masks[0][b], o = (unsigned)masks[1][b];
        if (x & o) return PyErr_Format(PyExc_ValueError, "board %d: X and O both hold a cell", b);
        if (WINS[x] && WINS[o]) return PyErr_Format(PyExc_ValueError, "board %d: both X and O have a line", b);
        int state = WINS[x] ? 1 : WINS[o] ? 2 : (x | o) == FULL ? DRAWN : OPEN;
        if (status[b] != state)
            return PyErr_Format(PyExc_ValueError, "status[%d] is %d (%s) but the board's cells make it %d (%s)", b,
                                (int)status[b], STATUS_NAMES[status[b]], state, STATUS_NAMES[state]);
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
    if (marks[0] - marks[1] != 0 && marks[0] - marks[1] != 1)
        return PyErr_Format(PyExc_ValueError, "X holds %d cells and O %d: X moves first, so X holds as many as O "
                            "or one more", marks[0], marks[1]);
    if (turn != marks[0] - marks[1])
        return PyErr_Format(PyExc_ValueError, "turn is %d but X holds %d cells and O %d", (int)turn, marks[0], marks[1]);
    if (ply != marks[0] + marks[1])
        return PyErr_Format(PyExc_ValueError, "ply is %d but %d cells are held", (int)ply, marks[0] + marks[1]);
    if (forced >= 0 && p.status[forced] != OPEN)
        return PyErr_Format(PyExc_ValueError, "forced board %d is not open", (int)forced);
    if (WINS[p.won[0]] && WINS[p.won[1]])
        return PyErr_Format(PyExc_ValueError, "both X and O have three boards in a line");
    p.drawn_lines_tie = (int)drawn_lines_tie;
    p.left = max_plies_left(&p);
    int result = WINS[p.won[0]] ? 0 : WINS[p.won[1]] ? 1 : (p.drawn_lines_tie && WINS[p.drawn]) ? TIE
               : (p.won[0] | p.won[1] | p.drawn) == FULL ? decided_result(&p) : NO_WINNER;
    if (winner != result)
        return PyErr_Format(PyExc_ValueError, "winner says %s but the boards say %s", RESULT_NAMES[winner + 1],
                            RESULT_NAMES[result + 1]);
    uint64_t expected = ZOBRIST_FORCED[forced + 1];
    for (int b = 0; b < 9; b++)
        for (int player = 0; player < 2; player++)
            for (int spot = 0; spot < 9; spot++)
                if (p.masks[player][b] >> spot & 1) expected ^= ZOBRIST_CELL[player][b * 9 + spot];
    if (key != expected)
        return PyErr_Format(PyExc_ValueError, "key is not the Zobrist hash of the cells and the forced board");
    p.forced = (int)forced;
    p.turn = (int)turn;
    p.winner = (int)winner;
    p.key = key;
    p.ply = (int)ply;
    s->pos = p;
    Py_RETURN_NONE;
}

/* new_search(seconds_left or None, node_limit or None, should_stop or None, poll_seconds=0.01): the
 * limits of a search, as AlphaBeta takes a SearchLimit: seconds_left <= 0 (a deadline past) and a
 * node limit <= 0 stop it at its first look at the limits, as in Python; ints beyond 64 bits are
 * limits never reached, or reached at once; nan is refused. */
static PyObject *Searcher_new_search(Searcher *s, PyObject *args) {
    PyObject *seconds_arg, *nodes_arg, *should_stop, *poll_arg = NULL;
    double left = 0, poll_seconds = 0.01;
    long long node_limit = -1;
    if (!check_ready(s, "new_search")) return NULL;
    if (!PyArg_ParseTuple(args, "OOO|O", &seconds_arg, &nodes_arg, &should_stop, &poll_arg)) return NULL;
    if (seconds_arg != Py_None && !read_seconds(seconds_arg, "seconds_left", &left)) return NULL;
    if (nodes_arg != Py_None) {
        char name[NAME_SIZE];
        int overflow;
        if (!int_value(nodes_arg, "node_limit", -1, name, &node_limit, &overflow)) return NULL;
        node_limit = overflow > 0 ? LLONG_MAX : overflow < 0 || node_limit < 0 ? 0 : node_limit;
    }
    if (should_stop == Py_None) {
        should_stop = NULL;
    } else if (!PyCallable_Check(should_stop)) {
        PyErr_SetString(PyExc_TypeError, "should_stop must be callable");
        return NULL;
    }
    if (poll_arg != NULL) {
        if (!read_seconds(poll_arg, "poll_seconds", &poll_seconds)) return NULL;
        if (!(poll_seconds >= 0 && poll_seconds <= 3600)) {
            PyErr_SetString(PyExc_ValueError, "poll_seconds must be 0 to 3600");
            return NULL;
        }
    }
    double now = now_seconds();
    start_search(s, now, seconds_arg == Py_None ? -1 : now + (left > 0 ? left : 0), node_limit, should_stop,
                 poll_seconds);
    Py_RETURN_NONE;
}

/* set_features(values): search.Features.values() in its field order (asp, lmr, age, solve); asp
 * is for the Python side's windows and only checked here. */
#define FEATURES 4
static PyObject *Searcher_set_features(Searcher *s, PyObject *seq) {
    static const long long highest[FEATURES] = {INFINITY_SCORE, 2, 62, MAX_PLY};
    static const char *names[FEATURES] = {"asp", "lmr", "age", "solve"};
    long long v[FEATURES];
    Py_ssize_t count;
    if (!check_ready(s, "set_features")) return NULL;
    PyObject **items = read_items(seq, FEATURES, "features", &count);
    if (items == NULL) return NULL;
    for (int i = 0; i < FEATURES; i++)
        if (!read_int(items[i], 0, highest[i], names[i], -1, &v[i])) return NULL;
    s->lmr = (int)v[1];
    s->age = (int)v[2];
    s->solve = (int)v[3];
    Py_RETURN_NONE;
}

/* A list or tuple of 1 to 81 cell indices. */
static int read_moves(PyObject *seq, uint8_t *moves, int *n) {
    Py_ssize_t count;
    PyObject **items = read_items(seq, -81, "moves", &count);
    if (items == NULL) return 0;
    for (Py_ssize_t i = 0; i < count; i++) {
        long long m;
        if (!read_int(items[i], 0, 80, "moves", i, &m)) return 0;
        moves[i] = (uint8_t)m;
    }
    *n = (int)count;
    return 1;
}

/* root(moves, depth, alpha, beta, reduce) -> (score, move), or None when a limit stopped it (see
 * root_best): AlphaBeta._search_root. The window lies within +-INFINITY_SCORE, alpha below beta. */
static PyObject *Searcher_root(Searcher *s, PyObject *args) {
    PyObject *seq, *depth_arg, *alpha_arg, *beta_arg, *reduce_arg;
    long long depth, alpha, beta, reduce;
    uint8_t moves[81];
    int n;
    if (!check_evaluation(s, "root")) return NULL;
    if (!PyArg_ParseTuple(args, "OOOOO", &seq, &depth_arg, &alpha_arg, &beta_arg, &reduce_arg)) return NULL;
    if (!read_moves(seq, moves, &n) || !read_int(depth_arg, 1, MAX_PLY - 1, "depth", -1, &depth) ||
        !read_int(alpha_arg, -INFINITY_SCORE, INFINITY_SCORE - 1, "alpha", -1, &alpha) ||
        !read_int(beta_arg, alpha + 1, INFINITY_SCORE, "beta", -1, &beta) ||
        !read_int(reduce_arg, 0, 1, "reduce", -1, &reduce))
        return NULL;
    uint8_t legal[81];
    int n_legal = pos_moves(&s->pos, legal);
    for (int i = 0; i < n; i++) {
        int ok = 0;
        for (int j = 0; j < n_legal; j++) ok |= legal[j] == moves[i];
        if (!ok) {
            PyErr_Format(PyExc_ValueError, "move %d is not legal in the position", (int)moves[i]);
            return NULL;
        }
    }
    int score = 0, move = -1, done;
    s->stopped = 0;
    s->failed = 0;
    s->root_best_valid = 0;
    s->reduce = (int)reduce;
    hold(s, "root");
    s->thread = PyEval_SaveThread();
    done = search_team(s, moves, n, (int)depth, (int)alpha, (int)beta, &score, &move);
    PyEval_RestoreThread(s->thread);
    s->thread = NULL;
    let_go(s);
    if (s->helper_error != NULL) { /* a helper's call of the memo raised: raised here, unless the main one did */
        PyObject *error = s->helper_error;
        s->helper_error = NULL;
        if (s->failed)
            Py_DECREF(error);
        else
            raise_exception(error);
        s->failed = 1;
    }
    if (s->failed) return NULL; /* a Python callback raised; its exception is set */
    if (!done) Py_RETURN_NONE;
    return Py_BuildValue("ii", score, move);
}

static PyObject *Searcher_get_root_best(Searcher *s, void *closure) {
    if (!check_idle(s, "root_best")) return NULL;
    if (!s->root_best_valid) Py_RETURN_NONE;
    return Py_BuildValue("ii", s->root_best_move, s->root_best_score);
}

/* probe(key) -> (depth, flag, score, move) or None, like AlphaBeta.tt.get(key). */
static PyObject *Searcher_probe(Searcher *s, PyObject *arg) {
    uint64_t key;
    if (!check_ready(s, "probe") || !read_key(arg, "key", -1, &key)) return NULL;
    TTEntry *e = tt_probe(s, key);
    if (e == NULL) Py_RETURN_NONE;
    return Py_BuildValue("iiii", (int)e->depth, (int)e->flag, (int)e->score, (int)e->move);
}

static PyObject *moves_list(const uint8_t *moves, int n) {
    PyObject *list = PyList_New(n);
    if (list == NULL) return NULL;
    for (int i = 0; i < n; i++) PyList_SET_ITEM(list, i, PyLong_FromLong(moves[i]));
    return list;
}

/* Checks of the parts against the Python reference (tests and the engine's self-check). */

static PyObject *Searcher_evaluate(Searcher *s, PyObject *unused) {
    if (!check_evaluation(s, "evaluate")) return NULL;
    s->failed = 0;
    hold(s, "evaluate");
    s->thread = PyEval_SaveThread();
    int score = evaluate(s);
    PyEval_RestoreThread(s->thread);
    s->thread = NULL;
    let_go(s);
    if (s->failed) return NULL;
    return PyLong_FromLong(score);
}

static PyObject *Searcher_move_priority(Searcher *s, PyObject *seq) {
    uint8_t moves[81];
    int n, priorities[81];
    if (!check_ready(s, "move_priority") || !read_moves(seq, moves, &n)) return NULL;
    move_priority(s, moves, n, priorities);
    PyObject *list = PyList_New(n);
    if (list == NULL) return NULL;
    for (int i = 0; i < n; i++) PyList_SET_ITEM(list, i, PyLong_FromLong(priorities[i]));
    return list;
}

static PyObject *Searcher_legal_moves(Searcher *s, PyObject *unused) {
    uint8_t moves[81];
    if (!check_ready(s, "legal_moves")) return NULL;
    return moves_list(moves, pos_moves(&s->pos, moves));
}

static PyObject *Searcher_state(Searcher *s, PyObject *unused) {
    if (!check_idle(s, "state")) return NULL;
    const Pos *p = &s->pos;
    return Py_BuildValue("iiiKi", p->turn, p->winner, p->forced, (unsigned long long)p->key, p->ply);
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

static PyObject *Searcher_perft(Searcher *s, PyObject *arg) {
    long long depth, total;
    if (!check_ready(s, "perft") || !read_int(arg, 0, 81 - s->pos.ply, "depth", -1, &depth)) return NULL;
    hold(s, "perft");
    Py_BEGIN_ALLOW_THREADS
    total = perft(&s->pos, (int)depth);
    Py_END_ALLOW_THREADS
    let_go(s);
    return PyLong_FromLongLong(total);
}

static PyObject *Searcher_push(Searcher *s, PyObject *arg) {
    long long m;
    if (!check_ready(s, "push") || !read_int(arg, 0, 80, "move", -1, &m)) return NULL;
    uint8_t moves[81];
    int n = pos_moves(&s->pos, moves), ok = 0;
    for (int i = 0; i < n; i++) ok |= moves[i] == m;
    if (!ok || s->pos.sp >= MAX_PLY) {
        PyErr_Format(PyExc_ValueError, "move %lld is not legal", m);
        return NULL;
    }
    pos_push(&s->pos, (int)m);
    Py_RETURN_NONE;
}

static PyObject *Searcher_pop(Searcher *s, PyObject *unused) {
    if (!check_ready(s, "pop")) return NULL;
    if (s->pos.sp == 0) {
        PyErr_SetString(PyExc_IndexError, "no move to take back");
        return NULL;
    }
    pos_pop(&s->pos);
    Py_RETURN_NONE;
}

static PyObject *Searcher_get_nodes(Searcher *s, void *c) {
    return check_idle(s, "nodes") ? PyLong_FromLongLong(s->nodes) : NULL;
}
static PyObject *Searcher_get_helper_nodes(Searcher *s, void *c) {
    return check_idle(s, "helper_nodes") ? PyLong_FromLongLong(s->helper_nodes) : NULL;
}
static PyObject *Searcher_get_threads(Searcher *s, void *c) {
    return check_idle(s, "threads") ? PyLong_FromLong(s->threads > 1 ? s->threads : 1) : NULL;
}
static PyObject *Searcher_get_tt_count(Searcher *s, void *c) {
    return check_idle(s, "tt_count") ? PyLong_FromLongLong(s->tt_count) : NULL;
}
static PyObject *Searcher_get_tt_replaced(Searcher *s, void *c) {
    return check_idle(s, "tt_replaced") ? PyLong_FromLongLong(s->tt_replaced) : NULL;
}
static PyObject *Searcher_get_tt_slots(Searcher *s, void *c) {
    if (!check_idle(s, "tt_slots")) return NULL;
    return PyLong_FromUnsignedLongLong(s->tt == NULL || s->no_table ? 0 : s->tt_mask + 1);
}

static PyMethodDef Searcher_methods[] = {
    {"set_classic", (PyCFunction)Searcher_set_classic, METH_VARARGS, "Evaluate with agent.evaluation.Evaluator."},
    {"set_fitted", (PyCFunction)Searcher_set_fitted, METH_VARARGS, "Evaluate with agent.eval_fitted.FittedEvaluator."},
    {"set_position", (PyCFunction)Searcher_set_position, METH_VARARGS, "Copy a consistent Python Position in."},
    {"new_search", (PyCFunction)Searcher_new_search, METH_VARARGS, "Start a search: limits, killers, history age."},
    {"root", (PyCFunction)Searcher_root, METH_VARARGS, "One depth of the root search: (score, move) or None."},
    {"set_features", (PyCFunction)Searcher_set_features, METH_O, "search.Features.values()."},
    {"probe", (PyCFunction)Searcher_probe, METH_O, "The table entry of a key: (depth, flag, score, move) or None."},
    {"evaluate", (PyCFunction)Searcher_evaluate, METH_NOARGS, "The evaluation of the current position."},
    {"move_priority", (PyCFunction)Searcher_move_priority, METH_O, "Priorities of moves here."},
    {"legal_moves", (PyCFunction)Searcher_legal_moves, METH_NOARGS, "Legal moves here."},
    {"state", (PyCFunction)Searcher_state, METH_NOARGS, "(turn, winner, forced, key, ply)."},
    {"perft", (PyCFunction)Searcher_perft, METH_O, "Leaf count at a depth."},
    {"push", (PyCFunction)Searcher_push, METH_O, "Make a legal move."},
    {"pop", (PyCFunction)Searcher_pop, METH_NOARGS, "Take back the last move."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef Searcher_getset[] = {
    {"nodes", (getter)Searcher_get_nodes, NULL, "nodes of the current search (the main thread's)", NULL},
    {"helper_nodes", (getter)Searcher_get_helper_nodes, NULL, "nodes the helper threads searched meanwhile", NULL},
    {"threads", (getter)Searcher_get_threads, NULL, "threads a search runs on", NULL},
    {"root_best", (getter)Searcher_get_root_best, NULL, "(move, score) proven better in a stopped depth", NULL},
    {"tt_count", (getter)Searcher_get_tt_count, NULL, "table entries in use", NULL},
    {"tt_replaced", (getter)Searcher_get_tt_replaced, NULL, "entries replaced by another key so far", NULL},
    {"tt_slots", (getter)Searcher_get_tt_slots, NULL, "table size in entries", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject SearcherType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "agent._core.Searcher",
    .tp_basicsize = sizeof(Searcher),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "The compiled alpha-beta search of agent/search.py for Ultimate Tic-Tac-Toe.",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Searcher_init,
    .tp_dealloc = (destructor)Searcher_dealloc,
    .tp_methods = Searcher_methods,
    .tp_getset = Searcher_getset,
};

static PyMethodDef core_methods[] = {
    {"set_zobrist", core_set_zobrist, METH_VARARGS, "set_zobrist(cell_x, cell_o, forced): agent.rules' keys."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef core_module = {
    PyModuleDef_HEAD_INIT, "agent._core", "Compiled search core (see agent/core.py).", -1, core_methods,
};

PyMODINIT_FUNC PyInit__core(void) {
    for (int m = 0; m < 512; m++) {
        TERNARY[m] = 0;
        for (int spot = 0; spot < 9; spot++)
            if (m >> spot & 1) TERNARY[m] += POW3[spot];
        WINS[m] = 0;
        for (int l = 0; l < 8; l++)
            if ((m & LINES[l]) == LINES[l]) WINS[m] = 1;
    }
    if (PyType_Ready(&SearcherType) < 0) return NULL;
    PyObject *module = PyModule_Create(&core_module);
    if (module == NULL) return NULL;
    Py_INCREF(&SearcherType);
    if (PyModule_AddObject(module, "Searcher", (PyObject *)&SearcherType) < 0) {
        Py_DECREF(&SearcherType);
        Py_DECREF(module);
        return NULL;
    }
    /* agent/core.py refuses a build whose version it does not drive: raise with interface changes. */
    PyModule_AddIntConstant(module, "CORE_VERSION", 9);
    PyModule_AddIntConstant(module, "WIN_SCORE", WIN_SCORE);
    PyModule_AddIntConstant(module, "CLOCK_INTERVAL", CLOCK_INTERVAL);
    PyModule_AddIntConstant(module, "MAX_PLY", MAX_PLY);
    PyModule_AddIntConstant(module, "MAX_THREADS", MAX_THREADS);
    PyModule_AddIntConstant(module, "TT_ENTRY_BYTES", (int)sizeof(TTSlot));
    return module;
}
