/* The search core as a WebAssembly module: agent/data/core.wasm, built from this file and
 * agent/core_search.c by scripts/build_wasm.py (zig cc -target wasm32-freestanding).
 *
 * One module, two hosts: agent/core_wasm.py runs it with wasmtime where no C compiler built
 * agent._core, and the browser page (ref_sim/views/board_page.py) runs it in a Web Worker. Both
 * drive the same calls: write inputs into the module's buffers (uttt_buffer), call, read results
 * from the buffers. Plain numbers only cross; errors are codes the host turns into words.
 *
 * One search per instance (a host makes an instance per searcher): its memory is this module's
 * linear memory, the table and the classic memo taken from it by growing it, never given back
 * (the instance goes as a whole). Single-threaded: no helpers, no atomics needed.
 *
 * What it imports: WASI's monotonic clock (wasmtime's own, native; a line of JavaScript in the
 * page), and from "env" the host's poll (a stop asked from outside, every poll interval) and the
 * classic evaluation's memo (Python only; the page uses the fitted evaluation).
 */

#include "core_search.h"

#define EXPORT(name) __attribute__((export_name(#name)))
#define IMPORT(module, name) __attribute__((import_module(module), import_name(name)))

/* The host drives this version of the calls below: raised with every change to them. */
#define WASM_VERSION 1

IMPORT("wasi_snapshot_preview1", "clock_time_get")
int32_t clock_time_get(int32_t clock_id, int64_t precision, uint64_t *nanoseconds);
/* 1: stop the search, 0: go on, -1: stop it, failed (the host keeps why). */
IMPORT("env", "poll") int32_t host_poll(void);
/* The memo's ten values for these won and drawn boards into buffer MEMO: 1, or 0 (failed). */
IMPORT("env", "memo") int32_t host_memo(int32_t won_x, int32_t won_o, int32_t drawn);

#define CLOCK_MONOTONIC 1

/* -- buffers: what the host writes and reads ------------------------------------------------------ */

enum { /* uttt_buffer's kinds */
    BUFFER_MOVES,     /* 81 bytes: moves in (root, move_priority), legal moves out */
    BUFFER_INTS,      /* 81 int32: results out, priorities out */
    BUFFER_CAN_WIN,   /* 2^18 bytes (evaluation.build_can_win_table, or uttt_fill_can_win) */
    BUFFER_ZOBRIST,   /* 172 uint64: agent.rules' ZOBRIST_CELL[0], [1], ZOBRIST_FORCED */
    BUFFER_FITTED,    /* 3 * 3^9 int32: chance, mover, waiter */
    BUFFER_LOCAL,     /* 2^18 int32: the classic local table as Python gives it */
    BUFFER_MEMO,      /* 10 int32: the memo's answer */
    BUFFER_POSITION,  /* 27 uint16: masks X (9), masks O (9), status (9) */
    BUFFER_CELLS,     /* 81 + 9 bytes: each cell (0 empty, 1 X, 2 O), each board's status */
};

static uint8_t moves_buffer[81];
static int32_t ints_buffer[81];
static uint8_t can_win_buffer[CAN_WIN_BYTES];
static uint64_t zobrist_buffer[172];
static int32_t fitted_buffer[3 * PATTERNS];
static int32_t local_buffer[LOCAL_GIVEN];
static int32_t memo_buffer[10];
static uint16_t position_buffer[27];
static uint8_t cells_buffer[90];

EXPORT(uttt_buffer) void *uttt_buffer(int32_t kind) {
    switch (kind) {
    case BUFFER_MOVES: return moves_buffer;
    case BUFFER_INTS: return ints_buffer;
    case BUFFER_CAN_WIN: return can_win_buffer;
    case BUFFER_ZOBRIST: return zobrist_buffer;
    case BUFFER_FITTED: return fitted_buffer;
    case BUFFER_LOCAL: return local_buffer;
    case BUFFER_MEMO: return memo_buffer;
    case BUFFER_POSITION: return position_buffer;
    case BUFFER_CELLS: return cells_buffer;
    default: return 0;
    }
}

EXPORT(uttt_version) int32_t uttt_version(void) { return WASM_VERSION; }

/* -- memory: taken from the end of linear memory, never given back ------------------------------ */

extern unsigned char __heap_base;
static uintptr_t heap_top = 0;

/* ``bytes`` of zeroed memory aligned to 64, or 0 when memory cannot grow that far. */
static void *take(size_t bytes) {
    if (heap_top == 0) heap_top = (uintptr_t)&__heap_base;
    uintptr_t start = (heap_top + 63) & ~(uintptr_t)63;
    if (bytes > UINTPTR_MAX - start - 65536) return 0;
    uintptr_t end = start + bytes, have = (uintptr_t)__builtin_wasm_memory_size(0) * 65536;
    if (end > have && __builtin_wasm_memory_grow(0, (end - have + 65535) / 65536) == (size_t)-1) return 0;
    heap_top = end;
    return (void *)start; /* grown memory is zeroed; memory is never reused */
}

/* -- the hooks ------------------------------------------------------------------------------------ */

enum { /* uttt_failure: why the last call failed */
    FAILED_NOTHING,
    FAILED_HOST,       /* the host's poll or memo failed: it knows why */
    FAILED_MEMO_RANGE, /* the memo's answer could take scores beyond EVAL_LIMIT (ints: won x, o, drawn) */
};
static int32_t failure = FAILED_NOTHING;

static double wasi_now(Search *s) {
    (void)s;
    uint64_t nanoseconds = 0;
    clock_time_get(CLOCK_MONOTONIC, 1000, &nanoseconds);
    return (double)nanoseconds * 1e-9;
}

static int poll_host(Search *s) {
    (void)s;
    int32_t answer = host_poll();
    if (answer < 0) failure = FAILED_HOST;
    return answer;
}

static int fill_memo(Search *s, Memo *m) {
    const Pos *p = &s->pos;
    if (!host_memo(p->won[0], p->won[1], p->drawn)) {
        failure = FAILED_HOST;
        return 0;
    }
    long long v[10];
    for (int i = 0; i < 10; i++) v[i] = memo_buffer[i]; /* the host checked each is within +-EVAL_LIMIT */
    if (!core_memo_fits(s, v)) {
        failure = FAILED_MEMO_RANGE;
        ints_buffer[0] = p->won[0];
        ints_buffer[1] = p->won[1];
        ints_buffer[2] = p->drawn;
        return 0;
    }
    for (int i = 0; i < 10; i++) m->values[i] = (int32_t)v[i];
    m->ready = 1;
    return 1;
}

static const SearchHooks WASM_HOOKS = {wasi_now, poll_host, fill_memo};

/* -- the searcher --------------------------------------------------------------------------------- */

static Search search;
static int32_t *local_table; /* the classic local table by pattern (core_index_local) */

EXPORT(uttt_failure) int32_t uttt_failure(void) { return failure; }

/* The searcher, once per instance, after the host wrote BUFFER_ZOBRIST and BUFFER_CAN_WIN: a table
 * of tt_slots (a power of two of at least TT_WINDOW, or 0 for none). 0, or -1 when memory cannot
 * hold the table. */
EXPORT(uttt_init) int32_t uttt_init(uint32_t tt_slots) {
    if (search.tt != 0) return 0;
    core_init();
    core_set_zobrist(zobrist_buffer, zobrist_buffer + 81, zobrist_buffer + 162);
    size_t slots = tt_slots ? tt_slots : TT_WINDOW;
    TTSlot *tt = take(slots * sizeof(TTSlot));
    if (tt == 0) return -1;
    search.tt = tt;
    search.tt_mask = (uint64_t)slots - 1;
    search.no_table = tt_slots == 0;
    search.can_win = can_win_buffer;
    search.hooks = &WASM_HOOKS;
    core_init_search(&search);
    core_start_search(&search, wasi_now(&search), -1, -1, 0.01); /* no limits until uttt_new_search */
    return 0;
}

/* The searcher as uttt_init left it, its position and evaluation kept: an empty table, no history.
 * The page searches each position afresh, so that the same position and depth give the same
 * answer whatever was searched before, as the Python search made for it does. */
EXPORT(uttt_reset) void uttt_reset(void) {
    __builtin_memset(search.tt, 0, (size_t)(search.tt_mask + 1) * sizeof(TTSlot));
    __builtin_memset(search.history, 0, sizeof search.history);
    search.tt_count = search.tt_replaced = 0;
    search.gen = 1; /* as after uttt_init's core_start_search */
}

/* Touch the table's pages before any clock runs (the extension's prefault). */
EXPORT(uttt_prefault) void uttt_prefault(void) {
    __builtin_memset(search.tt, 0, (size_t)(search.tt_mask + 1) * sizeof(TTSlot));
}

EXPORT(uttt_set_features) void uttt_set_features(int32_t lmr, int32_t age, int32_t solve) {
    search.lmr = lmr;
    search.age = age;
    search.solve = solve;
}

/* The fitted evaluation from BUFFER_FITTED: core_check_fitted's code, its details in BUFFER_INTS. */
EXPORT(uttt_set_fitted)
int32_t uttt_set_fitted(int64_t q, int64_t line, int64_t board, int64_t tempo, int64_t free_move) {
    int32_t *tables[3] = {fitted_buffer, fitted_buffer + PATTERNS, fitted_buffer + 2 * PATTERNS};
    long long detail[3] = {0, 0, 0};
    int code = core_check_fitted(q, line, board, tempo, free_move, tables, detail);
    for (int i = 0; i < 3; i++) ints_buffer[i] = (int32_t)detail[i];
    if (code != FITTED_OK) return code;
    search.chance = tables[0];
    search.mover = tables[1];
    search.waiter = tables[2];
    core_use_fitted(&search, q, line, board, tempo, free_move);
    return FITTED_OK;
}

/* The classic evaluation from BUFFER_LOCAL; its memo is the host's (import "memo"), kept here.
 * 0, or -1 when memory cannot hold the memo. */
EXPORT(uttt_set_classic) int32_t uttt_set_classic(int64_t free_move) {
    if (search.memo == 0) {
        Memo *memo = take((size_t)STATUS_CODES * sizeof(Memo));
        int32_t *local = take(PATTERNS * sizeof(int32_t));
        if (memo == 0 || local == 0) return -1;
        search.memo = memo;
        local_table = local;
    } else { /* another evaluator: its memo starts empty */
        __builtin_memset(search.memo, 0, (size_t)STATUS_CODES * sizeof(Memo));
    }
    search.local_max = core_index_local(local_table, local_buffer);
    search.local = local_table;
    search.free_move = free_move;
    search.eval_kind = EVAL_CLASSIC;
    return 0;
}

/* The position in BUFFER_POSITION and these fields, each in range (core_check_position): its code,
 * the details in BUFFER_INTS; the searcher keeps its position unless the code is POSITION_OK. */
EXPORT(uttt_set_position)
int32_t uttt_set_position(int32_t forced, int32_t turn, int32_t winner, uint64_t key, int32_t ply,
                          int32_t drawn_lines_tie) {
    uint16_t masks[2][9];
    uint8_t status[9];
    for (int b = 0; b < 9; b++) {
        masks[0][b] = position_buffer[b];
        masks[1][b] = position_buffer[9 + b];
        status[b] = (uint8_t)position_buffer[18 + b];
    }
    Pos p;
    int detail[3] = {0, 0, 0};
    int code = core_check_position(&p, masks, status, forced, turn, winner, key, ply, drawn_lines_tie, detail);
    for (int i = 0; i < 3; i++) ints_buffer[i] = detail[i];
    if (code == POSITION_OK) search.pos = p;
    return code;
}

/* A search's limits: a deadline seconds_left from now (has_deadline 0: none; <= 0: stop at the first
 * look), node_limit (< 0: none), the host polled every poll_seconds. */
EXPORT(uttt_new_search)
void uttt_new_search(int32_t has_deadline, double seconds_left, int64_t node_limit, double poll_seconds) {
    double now = wasi_now(&search);
    core_start_search(&search, now, has_deadline ? now + (seconds_left > 0 ? seconds_left : 0) : -1, node_limit,
                      poll_seconds);
}

/* One depth of the root search over the n moves in BUFFER_MOVES: 1 with (score, move) in
 * BUFFER_INTS, 0 when a limit stopped it (uttt_root_best), -1 when a hook failed (uttt_failure). */
EXPORT(uttt_root) int32_t uttt_root(int32_t n, int32_t depth, int32_t alpha, int32_t beta, int32_t reduce) {
    int score = 0, move = -1;
    search.stopped = 0;
    search.failed = 0;
    search.root_best_valid = 0;
    search.reduce = reduce;
    failure = FAILED_NOTHING;
    int done = core_search_root(&search, moves_buffer, n, depth, alpha, beta, &score, &move);
    if (search.failed) return -1;
    ints_buffer[0] = score;
    ints_buffer[1] = move;
    return done;
}

/* 1 with (move, score) in BUFFER_INTS when the stopped depth proved a move better than its first. */
EXPORT(uttt_root_best) int32_t uttt_root_best(void) {
    ints_buffer[0] = search.root_best_move;
    ints_buffer[1] = search.root_best_score;
    return search.root_best_valid;
}

/* 1 with (depth, flag, score, move) in BUFFER_INTS when the table holds the key. */
EXPORT(uttt_probe) int32_t uttt_probe(uint64_t key) {
    const TTEntry *e = core_probe(&search, key);
    if (e == 0) return 0;
    ints_buffer[0] = e->depth;
    ints_buffer[1] = e->flag;
    ints_buffer[2] = e->score;
    ints_buffer[3] = e->move;
    return 1;
}

/* The evaluation here (uttt_failure says whether the memo failed). */
EXPORT(uttt_evaluate) int32_t uttt_evaluate(void) {
    failure = FAILED_NOTHING;
    search.failed = search.stopped = 0;
    return core_evaluate(&search);
}

EXPORT(uttt_move_priority) void uttt_move_priority(int32_t n) {
    int priorities[81];
    core_move_priority(&search, moves_buffer, n, priorities);
    for (int i = 0; i < n; i++) ints_buffer[i] = priorities[i];
}

/* The legal moves into BUFFER_MOVES; their number. */
EXPORT(uttt_legal_moves) int32_t uttt_legal_moves(void) { return core_legal_moves(&search.pos, moves_buffer); }

/* (turn, winner, forced, ply, plies left at most) into BUFFER_INTS; the key is uttt_key's. */
EXPORT(uttt_state) void uttt_state(void) {
    ints_buffer[0] = search.pos.turn;
    ints_buffer[1] = search.pos.winner;
    ints_buffer[2] = search.pos.forced;
    ints_buffer[3] = search.pos.ply;
    ints_buffer[4] = search.pos.left;
}

EXPORT(uttt_key) uint64_t uttt_key(void) { return search.pos.key; }

/* Each cell (0 empty, 1 X, 2 O) and each board's status into BUFFER_CELLS: for drawing. */
EXPORT(uttt_cells) void uttt_cells(void) {
    for (int b = 0; b < 9; b++) {
        for (int spot = 0; spot < 9; spot++)
            cells_buffer[b * 9 + spot] = (uint8_t)((search.pos.masks[0][b] >> spot & 1)   ? 1
                                                   : (search.pos.masks[1][b] >> spot & 1) ? 2
                                                                                          : 0);
        cells_buffer[81 + b] = search.pos.status[b];
    }
}

/* Leaves at a depth of at most 81 - ply. */
EXPORT(uttt_perft) int64_t uttt_perft(int32_t depth) { return core_perft(&search.pos, depth); }

/* 0 when the move (0..80) is legal and made, 1 when it is not legal here. */
EXPORT(uttt_push) int32_t uttt_push(int32_t move) {
    uint8_t legal[81];
    int n = core_legal_moves(&search.pos, legal), ok = 0;
    for (int i = 0; i < n; i++) ok |= legal[i] == move;
    if (!ok || search.pos.sp >= MAX_PLY) return 1;
    core_push(&search.pos, move);
    return 0;
}

/* 0 when the last move is taken back, 1 when none was made since the position was set. */
EXPORT(uttt_pop) int32_t uttt_pop(void) {
    if (search.pos.sp == 0) return 1;
    core_pop(&search.pos);
    return 0;
}

EXPORT(uttt_nodes) int64_t uttt_nodes(void) { return search.nodes; }
EXPORT(uttt_tt_count) int64_t uttt_tt_count(void) { return search.tt_count; }
EXPORT(uttt_tt_replaced) int64_t uttt_tt_replaced(void) { return search.tt_replaced; }

/* evaluation.build_can_win_table into BUFFER_CAN_WIN, for a host without Python (the page):
 * CAN_WIN[(mover << 9) | other], the mover completing a line on the board in one move. */
EXPORT(uttt_fill_can_win) void uttt_fill_can_win(void) {
    static const int lines[8] = {0x007, 0x038, 0x1C0, 0x049, 0x092, 0x124, 0x111, 0x054};
    uint8_t wins[512];
    for (int m = 0; m < 512; m++) {
        wins[m] = 0;
        for (int l = 0; l < 8; l++)
            if ((m & lines[l]) == lines[l]) wins[m] = 1;
    }
    for (unsigned mover = 0; mover < 512; mover++)
        for (unsigned other = 0; other < 512; other++) {
            uint8_t can = 0;
            if (!(mover & other) && !wins[mover] && !wins[other])
                for (int s = 0; s < 9; s++)
                    if (!((mover | other) >> s & 1) && wins[mover | 1u << s]) can = 1;
            can_win_buffer[mover << 9 | other] = can;
        }
}
