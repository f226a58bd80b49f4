/* The compiled search core for Ultimate Tic-Tac-Toe: agent._core, the CPython extension around
 * the plain-C search of agent/core_search.c (which agent/core_wasm.c builds for WebAssembly too).
 *
 * What is here and not there: the Python object and the reading of its arguments, the hooks that
 * call Python (the limit's should_stop, signals, the classic evaluation's memo), the table's
 * memory (huge pages on Linux), and threads. At a fixed depth the core returns the same move,
 * score and node count as the pure-Python search; tests/test_core.py holds them together.
 *
 * The search runs without the GIL; it takes the GIL back only to call Python: the evaluation's
 * memo function (a few hundred times per game) and the limit's should_stop (every ~10 ms).
 *
 * Threads (Searcher(..., threads=N), "Lazy SMP"): while root() searches a depth, N - 1 helper
 * threads search the same root too, on private copies of the search that share its table and
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

#include "core_search.h"

/* agent/core.py refuses a build whose version it does not drive: raise with interface changes. */
#define CORE_VERSION 9


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

typedef struct Helper Helper;

typedef struct Searcher {
    PyObject_HEAD
    Search search;         /* the position, tables, limits; its host is this object */
    size_t tt_mapped;      /* tt_alloc's: bytes mapped, 0 for calloc */
    PyObject *memo_fn;     /* (won_x, won_o, drawn) -> 10 ints: the classic evaluation's memo */
    PyObject *should_stop; /* the limit's, or NULL */
    PyThreadState *thread; /* while the GIL is released */
    /* The call that holds the searcher (see check_idle), NULL when idle, and its thread. */
    const char *busy;
    unsigned long busy_thread;
    /* threads (search_team) */
    int threads;
    Helper *helpers;           /* threads - 1 of them */
    int stop_team;             /* load_flag/store_flag: the main depth ended, or a helper failed */
    long long helper_nodes;    /* nodes the helpers searched in this search */
    PyObject *helper_error;    /* the first exception a helper's Python call raised (held with the GIL) */
} Searcher;

/* A helper thread: a private copy of the search (its own position, history, killers, counters;
 * the table, memo and evaluation tables shared) and the root it searches. */
struct Helper {
    Search search;
    thread_t thread;
    uint8_t moves[81];
    int n;
    int depth;
};


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

/* -- the hooks: Python, from inside the GIL-free search ------------------------------------------ */

/* The main search takes back its own thread state; a helper thread has none and borrows one for
 * the call, so an exception raised there is kept for root() to raise: it would die with that state. */
static void keep_helper_error(Searcher *owner);

static PyGILState_STATE enter_python(Search *search) {
    Searcher *owner = search->host;
    if (search->helper) return PyGILState_Ensure();
    PyEval_RestoreThread(owner->thread);
    return PyGILState_UNLOCKED; /* unused */
}

static void leave_python(Search *search, PyGILState_STATE gil) {
    Searcher *owner = search->host;
    if (search->helper) {
        if (PyErr_Occurred()) keep_helper_error(owner);
        PyGILState_Release(gil);
    } else {
        owner->thread = PyEval_SaveThread();
    }
}

static double hook_now(Search *search) {
    (void)search;
    return now_seconds();
}

/* Signals (Ctrl-C), then the limit's should_stop. */
static int hook_poll(Search *search) {
    Searcher *owner = search->host;
    int stop = 0;
    PyGILState_STATE gil = enter_python(search);
    if (PyErr_CheckSignals() < 0) {
        stop = -1;
    } else if (owner->should_stop != NULL) {
        PyObject *answer = PyObject_CallNoArgs(owner->should_stop);
        stop = answer == NULL ? -1 : PyObject_IsTrue(answer);
        Py_XDECREF(answer);
    }
    leave_python(search, gil);
    return stop;
}

/* Memo entries are written with the GIL held, once each (threads share the memo), and published by
 * their ready flag. */
static int hook_fill_memo(Search *search, Memo *m) {
    Searcher *owner = search->host;
    const Pos *p = &search->pos;
    int ok = 0;
    PyGILState_STATE gil = enter_python(search);
    long long v[10];
    if (load_flag(&m->ready)) { /* another thread filled it while this one waited for the GIL */
        leave_python(search, gil);
        return 1;
    }
    PyObject *result = PyObject_CallFunction(owner->memo_fn, "iii", (int)p->won[0], (int)p->won[1], (int)p->drawn);
    if (result != NULL) {
        ok = read_ints(result, 10, -EVAL_LIMIT, EVAL_LIMIT, "the evaluation memo's answer", v);
        Py_DECREF(result);
    }
    if (ok && !core_memo_fits(search, v)) {
        PyErr_Format(PyExc_ValueError, "the evaluation memo's answer for won (%d, %d), drawn %d could take "
                     "scores beyond 2**30 with this local table", (int)p->won[0], (int)p->won[1], (int)p->drawn);
        ok = 0;
    }
    if (ok) {
        for (int i = 0; i < 10; i++) m->values[i] = (int32_t)v[i];
        store_flag(&m->ready, 1);
    }
    leave_python(search, gil);
    return ok;
}

static const SearchHooks PYTHON_HOOKS = {hook_now, hook_poll, hook_fill_memo};


/* -- threads (Lazy SMP) ------------------------------------------------------------------------- */

/* Helpers start only at depths whose search outlasts starting threads (tens of microseconds). */
#define HELPER_MIN_DEPTH 5
#define MAX_THREADS 64

/* A helper thread's life: search the root from its depth on, one depth after another, until the
 * main thread's depth ends (check_limits). What it stores in the shared table is what the main
 * search gains: bounds and best moves of positions it has yet to reach. */
static void run_helper(void *helper) {
    Helper *h = (Helper *)helper;
    Search *search = &h->search;
    int score, move, last = 81 - search->pos.ply; /* deeper than the game can last finds nothing more */
    for (int depth = h->depth; depth <= last && depth < MAX_PLY; depth++)
        if (!core_search_root(search, h->moves, h->n, depth, -INFINITY_SCORE, INFINITY_SCORE, &score, &move)) break;
}

/* root() with threads: the main thread searches ``depth`` in the window exactly as
 * core_search_root does, while threads - 1 helpers search the same root in the full window,
 * sharing the table, half of them at the same depth and half one deeper (a helper at the same
 * depth saved the main thread more nodes to each depth than one a ply deeper:
 * scripts/bench_threads.py); the main thread's result is returned. The helpers are copies of the
 * search made here and joined before this returns, whatever ended the main search, so none
 * outlives it; they stop within a clock interval of it (or of the deadline). One thread, no table,
 * or a depth too shallow to be worth threads: core_search_root. */
static int search_team(Searcher *s, const uint8_t *moves, int n, int depth, int alpha, int beta, int *out_score,
                       int *out_move) {
    if (s->threads <= 1 || s->search.no_table || depth < HELPER_MIN_DEPTH)
        return core_search_root(&s->search, moves, n, depth, alpha, beta, out_score, out_move);
    int started = 0;
    for (int k = 1; k < s->threads; k++) {
        Helper *h = &s->helpers[k - 1];
        Search *copy = &h->search;
        memcpy(copy, &s->search, sizeof *copy); /* the position, history, killers; pointers to the shared tables */
        copy->helper = 1;
        copy->team_stop = &s->stop_team;
        copy->nodes = copy->tt_count = copy->tt_replaced = 0;
        copy->next_check = CLOCK_INTERVAL;
        copy->stopped = copy->failed = 0;
        memcpy(h->moves, moves, (size_t)n);
        h->n = n;
        h->depth = depth + (k - 1) % 2;
        if (!thread_start(&h->thread, h)) break; /* no more threads to be had: search with those started */
        started++;
    }
    int done = core_search_root(&s->search, moves, n, depth, alpha, beta, out_score, out_move);
    store_flag(&s->stop_team, 1);
    for (int k = 0; k < started; k++) {
        Search *copy = &s->helpers[k].search;
        thread_join(s->helpers[k].thread);
        s->helper_nodes += copy->nodes;
        s->search.tt_count += copy->tt_count;
        s->search.tt_replaced += copy->tt_replaced;
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
static void keep_helper_error(Searcher *owner) {
    PyObject *error = take_exception();
    if (owner->helper_error == NULL)
        owner->helper_error = error;
    else
        Py_XDECREF(error);
    store_flag(&owner->stop_team, 1);
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
    if (s->search.tt == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "Searcher is not initialised");
        return 0;
    }
    return 1;
}

static int check_evaluation(Searcher *s, const char *name) {
    if (!check_ready(s, name)) return 0;
    if (s->search.eval_kind == EVAL_NONE) {
        PyErr_SetString(PyExc_RuntimeError, "no evaluation: call set_classic or set_fitted first");
        return 0;
    }
    return 1;
}

static int zobrist_ready = 0;

/* set_zobrist(cell_x, cell_o, forced): agent.rules' keys, 81, 81 and 10 ints 0 to 2**64-1. */
static PyObject *module_set_zobrist(PyObject *module, PyObject *args) {
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
    core_set_zobrist(keys[0], keys[1], keys[2]);
    zobrist_ready = 1;
    Py_RETURN_NONE;
}

static void Searcher_dealloc(Searcher *s) {
    Py_XDECREF(s->memo_fn);
    Py_XDECREF(s->should_stop);
    PyMem_RawFree(s->search.can_win);
    PyMem_RawFree(s->search.local);
    free(s->search.memo);
    PyMem_RawFree(s->search.chance);
    PyMem_RawFree(s->search.mover);
    PyMem_RawFree(s->search.waiter);
    if (s->search.tt != NULL) tt_free(s->search.tt, s->tt_mapped);
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

/* core_start_search, and the limit's should_stop swapped in last: dropping the old one may run
 * Python code. */
static void start_search(Searcher *s, double now, double deadline, long long node_limit, PyObject *should_stop,
                         double poll_seconds) {
    core_start_search(&s->search, now, deadline, node_limit, poll_seconds);
    s->helper_nodes = 0;
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
    if (s->search.tt != NULL) {
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
     * fault per new 4 KiB of table (a third of the first second's speed). A zero written every
     * 4 KiB is enough: the memory is zeroed already (calloc, or the kernel's fresh pages), and a
     * memset of it all would write the whole table a second time (the agent's 128 MiB: 25 -> 20 ms). */
    if (tt != NULL && prefault) {
        Py_BEGIN_ALLOW_THREADS
        volatile char *bytes = (volatile char *)tt;
        size_t size = slots * sizeof(TTSlot);
        for (size_t at = 0; at < size; at += 4096)
            bytes[at] = 0;
        Py_END_ALLOW_THREADS
    }
    let_go(s);
    if (tt == NULL) {
        PyMem_RawFree(can_win);
        return -1;
    }
    s->search.can_win = can_win;
    s->search.tt = tt;
    s->tt_mapped = tt_mapped;
    s->threads = (int)threads;
    s->helpers = helpers;
    s->search.tt_mask = (uint64_t)slots - 1;
    s->search.no_table = tt_slots == 0;
    core_init_search(&s->search);
    s->search.hooks = &PYTHON_HOOKS;
    s->search.host = s;
    s->search.team_stop = threads > 1 ? &s->stop_team : NULL;
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
    long long local_max = core_index_local(local, given);
    PyMem_RawFree(given);
    PyMem_RawFree(s->search.local);
    s->search.local = local;
    free(s->search.memo);
    s->search.memo = memo;
    s->search.local_max = local_max;
    s->search.free_move = free_move;
    s->search.eval_kind = EVAL_CLASSIC;
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
    static const long long highs[5] = {FITTED_MAX_SCALE, EVAL_LIMIT, EVAL_LIMIT, EVAL_LIMIT, EVAL_LIMIT};
    long long w[5];
    if (!check_ready(s, "set_fitted")) return NULL;
    if (!PyArg_ParseTuple(args, "OOOOOOOO", &sources[0], &sources[1], &sources[2], &weight_args[0],
                          &weight_args[1], &weight_args[2], &weight_args[3], &weight_args[4]))
        return NULL;
    for (int k = 0; k < 5; k++)
        if (!read_int(weight_args[k], lows[k], highs[k], weight_names[k], -1, &w[k])) return NULL;
    long long q = w[0], line = w[1], board = w[2], tempo = w[3], free_move = w[4], detail[3];
    int32_t *pattern[3] = {NULL, NULL, NULL};
    int ok = 1;
    for (int pass = 0; pass < 2 && ok; pass++) { /* the weights, then the tables they bound */
        switch (core_check_fitted(q, line, board, tempo, free_move, pattern, detail)) {
        case FITTED_BOUND:
            PyErr_Format(PyExc_ValueError, "the weights could take scores to %lld, beyond 2**30", detail[0]);
            return NULL;
        case FITTED_LINE_RANGE:
            PyErr_Format(PyExc_ValueError, "line %lld with scale %lld: line * 8 * scale**3 is beyond 64 bits", line, q);
            return NULL;
        case FITTED_TABLE_VALUE:
            PyErr_Format(PyExc_ValueError, "%s[%d] must be 0 to %lld, got %d", names[detail[0]], (int)detail[1], q,
                         (int)detail[2]);
            ok = 0;
            break;
        }
        if (pass == 0) {
            hold(s, "set_fitted");
            for (int k = 0; k < 3 && ok; k++)
                ok = (pattern[k] = copy_buffer(sources[k], PATTERNS * (Py_ssize_t)sizeof(int32_t), names[k])) != NULL;
            let_go(s);
        }
    }
    if (!ok) {
        for (int k = 0; k < 3; k++) PyMem_RawFree(pattern[k]);
        return NULL;
    }
    /* Kept in pattern order: Pos.pattern[mover] is FittedEvaluator's index of a board, and
     * Pos.pattern[other] the index of the same board seen by the other player. */
    int32_t **slots[3] = {&s->search.chance, &s->search.mover, &s->search.waiter};
    for (int k = 0; k < 3; k++) {
        PyMem_RawFree(*slots[k]);
        *slots[k] = pattern[k];
    }
    core_use_fitted(&s->search, q, line, board, tempo, free_move);
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
    uint16_t cells[2][9];
    uint8_t states[9];
    for (int b = 0; b < 9; b++) {
        cells[0][b] = (uint16_t)masks[0][b];
        cells[1][b] = (uint16_t)masks[1][b];
        states[b] = (uint8_t)status[b];
    }
    Pos p;
    int d[3];
    switch (core_check_position(&p, cells, states, (int)forced, (int)turn, (int)winner, key, (int)ply,
                                (int)drawn_lines_tie, d)) {
    case POSITION_OK:
        break;
    case POSITION_BOTH_HOLD_A_CELL:
        return PyErr_Format(PyExc_ValueError, "board %d: X and O both hold a cell", d[0]);
    case POSITION_BOTH_HAVE_A_LINE:
        return PyErr_Format(PyExc_ValueError, "board %d: both X and O have a line", d[0]);
    case POSITION_STATUS:
        return PyErr_Format(PyExc_ValueError, "status[%d] is %d (%s) but the board's cells make it %d (%s)", d[0],
                            d[1], STATUS_NAMES[d[1]], d[2], STATUS_NAMES[d[2]]);
    case POSITION_MARK_COUNT:
        return PyErr_Format(PyExc_ValueError, "X holds %d cells and O %d: X moves first, so X holds as many as O "
                            "or one more", d[0], d[1]);
    case POSITION_TURN:
        return PyErr_Format(PyExc_ValueError, "turn is %d but X holds %d cells and O %d", d[0], d[1], d[2]);
    case POSITION_PLY:
        return PyErr_Format(PyExc_ValueError, "ply is %d but %d cells are held", d[0], d[1]);
    case POSITION_FORCED_NOT_OPEN:
        return PyErr_Format(PyExc_ValueError, "forced board %d is not open", d[0]);
    case POSITION_BOTH_WON_GLOBALLY:
        return PyErr_Format(PyExc_ValueError, "both X and O have three boards in a line");
    case POSITION_WINNER:
        return PyErr_Format(PyExc_ValueError, "winner says %s but the boards say %s", RESULT_NAMES[d[0]],
                            RESULT_NAMES[d[1]]);
    default:
        return PyErr_Format(PyExc_ValueError, "key is not the Zobrist hash of the cells and the forced board");
    }
    s->search.pos = p;
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
    s->search.lmr = (int)v[1];
    s->search.age = (int)v[2];
    s->search.solve = (int)v[3];
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
    int n_legal = core_legal_moves(&s->search.pos, legal);
    for (int i = 0; i < n; i++) {
        int ok = 0;
        for (int j = 0; j < n_legal; j++) ok |= legal[j] == moves[i];
        if (!ok) {
            PyErr_Format(PyExc_ValueError, "move %d is not legal in the position", (int)moves[i]);
            return NULL;
        }
    }
    int score = 0, move = -1, done;
    s->search.stopped = 0;
    s->search.failed = 0;
    s->search.root_best_valid = 0;
    s->search.reduce = (int)reduce;
    hold(s, "root");
    s->thread = PyEval_SaveThread();
    done = search_team(s, moves, n, (int)depth, (int)alpha, (int)beta, &score, &move);
    PyEval_RestoreThread(s->thread);
    s->thread = NULL;
    let_go(s);
    if (s->helper_error != NULL) { /* a helper's call of the memo raised: raised here, unless the main one did */
        PyObject *error = s->helper_error;
        s->helper_error = NULL;
        if (s->search.failed)
            Py_DECREF(error);
        else
            raise_exception(error);
        s->search.failed = 1;
    }
    if (s->search.failed) return NULL; /* a Python callback raised; its exception is set */
    if (!done) Py_RETURN_NONE;
    return Py_BuildValue("ii", score, move);
}

static PyObject *Searcher_get_root_best(Searcher *s, void *closure) {
    if (!check_idle(s, "root_best")) return NULL;
    if (!s->search.root_best_valid) Py_RETURN_NONE;
    return Py_BuildValue("ii", s->search.root_best_move, s->search.root_best_score);
}

/* probe(key) -> (depth, flag, score, move) or None, like AlphaBeta.tt.get(key). */
static PyObject *Searcher_probe(Searcher *s, PyObject *arg) {
    uint64_t key;
    if (!check_ready(s, "probe") || !read_key(arg, "key", -1, &key)) return NULL;
    const TTEntry *e = core_probe(&s->search, key);
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
    s->search.failed = 0;
    hold(s, "evaluate");
    s->thread = PyEval_SaveThread();
    int score = core_evaluate(&s->search);
    PyEval_RestoreThread(s->thread);
    s->thread = NULL;
    let_go(s);
    if (s->search.failed) return NULL;
    return PyLong_FromLong(score);
}

static PyObject *Searcher_move_priority(Searcher *s, PyObject *seq) {
    uint8_t moves[81];
    int n, priorities[81];
    if (!check_ready(s, "move_priority") || !read_moves(seq, moves, &n)) return NULL;
    core_move_priority(&s->search, moves, n, priorities);
    PyObject *list = PyList_New(n);
    if (list == NULL) return NULL;
    for (int i = 0; i < n; i++) PyList_SET_ITEM(list, i, PyLong_FromLong(priorities[i]));
    return list;
}

static PyObject *Searcher_legal_moves(Searcher *s, PyObject *unused) {
    uint8_t moves[81];
    if (!check_ready(s, "legal_moves")) return NULL;
    return moves_list(moves, core_legal_moves(&s->search.pos, moves));
}

static PyObject *Searcher_state(Searcher *s, PyObject *unused) {
    if (!check_idle(s, "state")) return NULL;
    const Pos *p = &s->search.pos;
    return Py_BuildValue("iiiKi", p->turn, p->winner, p->forced, (unsigned long long)p->key, p->ply);
}

static PyObject *Searcher_perft(Searcher *s, PyObject *arg) {
    long long depth, total;
    if (!check_ready(s, "perft") || !read_int(arg, 0, 81 - s->search.pos.ply, "depth", -1, &depth)) return NULL;
    hold(s, "perft");
    Py_BEGIN_ALLOW_THREADS
    total = core_perft(&s->search.pos, (int)depth);
    Py_END_ALLOW_THREADS
    let_go(s);
    return PyLong_FromLongLong(total);
}

static PyObject *Searcher_push(Searcher *s, PyObject *arg) {
    long long m;
    if (!check_ready(s, "push") || !read_int(arg, 0, 80, "move", -1, &m)) return NULL;
    uint8_t moves[81];
    int n = core_legal_moves(&s->search.pos, moves), ok = 0;
    for (int i = 0; i < n; i++) ok |= moves[i] == m;
    if (!ok || s->search.pos.sp >= MAX_PLY) {
        PyErr_Format(PyExc_ValueError, "move %lld is not legal", m);
        return NULL;
    }
    core_push(&s->search.pos, (int)m);
    Py_RETURN_NONE;
}

static PyObject *Searcher_pop(Searcher *s, PyObject *unused) {
    if (!check_ready(s, "pop")) return NULL;
    if (s->search.pos.sp == 0) {
        PyErr_SetString(PyExc_IndexError, "no move to take back");
        return NULL;
    }
    core_pop(&s->search.pos);
    Py_RETURN_NONE;
}

static PyObject *Searcher_get_nodes(Searcher *s, void *c) {
    return check_idle(s, "nodes") ? PyLong_FromLongLong(s->search.nodes) : NULL;
}
static PyObject *Searcher_get_helper_nodes(Searcher *s, void *c) {
    return check_idle(s, "helper_nodes") ? PyLong_FromLongLong(s->helper_nodes) : NULL;
}
static PyObject *Searcher_get_threads(Searcher *s, void *c) {
    return check_idle(s, "threads") ? PyLong_FromLong(s->threads > 1 ? s->threads : 1) : NULL;
}
static PyObject *Searcher_get_tt_count(Searcher *s, void *c) {
    return check_idle(s, "tt_count") ? PyLong_FromLongLong(s->search.tt_count) : NULL;
}
static PyObject *Searcher_get_tt_replaced(Searcher *s, void *c) {
    return check_idle(s, "tt_replaced") ? PyLong_FromLongLong(s->search.tt_replaced) : NULL;
}
static PyObject *Searcher_get_tt_slots(Searcher *s, void *c) {
    if (!check_idle(s, "tt_slots")) return NULL;
    return PyLong_FromUnsignedLongLong(s->search.tt == NULL || s->search.no_table ? 0 : s->search.tt_mask + 1);
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
    {"set_zobrist", module_set_zobrist, METH_VARARGS, "set_zobrist(cell_x, cell_o, forced): agent.rules' keys."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef core_module = {
    PyModuleDef_HEAD_INIT, "agent._core", "Compiled search core (see agent/core.py).", -1, core_methods,
};

PyMODINIT_FUNC PyInit__core(void) {
    core_init();
    if (PyType_Ready(&SearcherType) < 0) return NULL;
    PyObject *module = PyModule_Create(&core_module);
    if (module == NULL) return NULL;
    Py_INCREF(&SearcherType);
    if (PyModule_AddObject(module, "Searcher", (PyObject *)&SearcherType) < 0) {
        Py_DECREF(&SearcherType);
        Py_DECREF(module);
        return NULL;
    }
    PyModule_AddIntConstant(module, "CORE_VERSION", CORE_VERSION);
    PyModule_AddIntConstant(module, "WIN_SCORE", WIN_SCORE);
    PyModule_AddIntConstant(module, "CLOCK_INTERVAL", CLOCK_INTERVAL);
    PyModule_AddIntConstant(module, "MAX_PLY", MAX_PLY);
    PyModule_AddIntConstant(module, "MAX_THREADS", MAX_THREADS);
    PyModule_AddIntConstant(module, "TT_ENTRY_BYTES", (int)sizeof(TTSlot));
    return module;
}
