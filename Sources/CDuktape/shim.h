// The system Duktape 2.7 (Debian: duktape-dev), an ES5 JavaScript engine, as used by the
// JSEngine module.
//
// Duktape reports errors with longjmp. A longjmp must never cross a Swift frame, so every
// Duktape call that can throw runs in the C helpers below, inside duk_safe_call; Swift only
// calls these helpers, duk_get_lstring (which never throws) and duk_set_top(ctx, 0).
// Duktape's function-like macros (duk_compile_lstring_filename, duk_is_error, duk_error...)
// are not importable into Swift either; the helpers expand them.
//
// Each helper leaves exactly one value on an otherwise empty value stack and returns:
//   SHOAL_DUK_OK      the result as JSON text (a string)
//   SHOAL_DUK_THROWN  the thrown value as JSON text; an Error object becomes
//                     {"name", "message", "lineNumber", ...its own enumerable properties}
//   SHOAL_DUK_FAILED  a plain message (the thrown value could not even be converted)
// Strings that Duktape returns are CESU-8: a non-BMP character is a surrogate pair of two
// 3-byte sequences. The Swift side turns them back into UTF-8.
#ifndef SHOAL_CDUKTAPE_SHIM_H
#define SHOAL_CDUKTAPE_SHIM_H

#include <duktape.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/prctl.h>
#endif

#define SHOAL_DUK_OK 0
#define SHOAL_DUK_THROWN 1
#define SHOAL_DUK_FAILED 2

// MARK: - Heap with a memory limit

/// Per-heap allocator state: bytes in use, the limit (0 = none) and the "refuse" flag that
/// makes every later allocation fail (set when a call overran its time budget).
typedef struct shoal_duk_heap_state {
    size_t used;
    size_t limit;
    int refuse;
} shoal_duk_heap_state;

// Every block carries its size in a 16-byte header (keeps malloc's alignment).
#define SHOAL_DUK_HEADER 16

static void *shoal_duk__alloc(void *udata, duk_size_t size) {
    shoal_duk_heap_state *st = (shoal_duk_heap_state *) udata;
    if (__atomic_load_n(&st->refuse, __ATOMIC_RELAXED)) return NULL;
    if (st->limit != 0 && st->used + size > st->limit) return NULL;
    unsigned char *block = (unsigned char *) malloc(size + SHOAL_DUK_HEADER);
    if (block == NULL) return NULL;
    *(size_t *) block = size;
    st->used += size;
    return block + SHOAL_DUK_HEADER;
}

static void shoal_duk__free(void *udata, void *ptr) {
    if (ptr == NULL) return;
    shoal_duk_heap_state *st = (shoal_duk_heap_state *) udata;
    unsigned char *block = (unsigned char *) ptr - SHOAL_DUK_HEADER;
    st->used -= *(size_t *) block;
    free(block);
}

static void *shoal_duk__realloc(void *udata, void *ptr, duk_size_t size) {
    shoal_duk_heap_state *st = (shoal_duk_heap_state *) udata;
    if (ptr == NULL) return shoal_duk__alloc(udata, size);
    if (size == 0) { shoal_duk__free(udata, ptr); return NULL; }
    unsigned char *block = (unsigned char *) ptr - SHOAL_DUK_HEADER;
    size_t old = *(size_t *) block;
    if (size > old) {
        if (__atomic_load_n(&st->refuse, __ATOMIC_RELAXED)) return NULL;
        if (st->limit != 0 && st->used + (size - old) > st->limit) return NULL;
    }
    unsigned char *grown = (unsigned char *) realloc(block, size + SHOAL_DUK_HEADER);
    if (grown == NULL) return NULL;
    *(size_t *) grown = size;
    st->used = st->used - old + size;
    return grown + SHOAL_DUK_HEADER;
}

// A fatal error means an error escaped every protected call (a bug) or Duktape's internal
// state is broken; the handler must not return. Rather than abort the whole node, it reports
// and parks the heap's own (worker) thread forever: the caller then gets a timeout and the
// function is wedged, exactly as for an endless loop.
static void shoal_duk__fatal(void *udata, const char *msg) {
    (void) udata;
    fprintf(stderr, "Duktape fatal error (JavaScript worker thread parked): %s\n", msg ? msg : "(no message)");
    for (;;) pause();
}

/// A new heap whose allocations stop at `memory_limit` bytes (0 = no limit). Writes the
/// allocator state to `*out_state` (freed by shoal_duk_destroy_heap). NULL on failure.
static inline duk_context *shoal_duk_create_heap(size_t memory_limit, shoal_duk_heap_state **out_state) {
    shoal_duk_heap_state *st = (shoal_duk_heap_state *) calloc(1, sizeof(shoal_duk_heap_state));
    if (st == NULL) return NULL;
    st->limit = memory_limit;
    duk_context *ctx = duk_create_heap(shoal_duk__alloc, shoal_duk__realloc, shoal_duk__free, st, shoal_duk__fatal);
    if (ctx == NULL) { free(st); return NULL; }
    *out_state = st;
    return ctx;
}

static inline void shoal_duk_destroy_heap(duk_context *ctx, shoal_duk_heap_state *state) {
    duk_destroy_heap(ctx);
    free(state);
}

/// Called from another thread when the heap is abandoned: later allocations fail, so a
/// runaway script that allocates soon ends with an error and its thread can clean up.
static inline void shoal_duk_abandon(shoal_duk_heap_state *state) {
    __atomic_store_n(&state->refuse, 1, __ATOMIC_RELAXED);
}

/// Lets an abandoned worker thread (stuck in an endless loop) run only when a CPU would
/// otherwise be idle: Linux's SCHED_IDLE policy (5; glibc hides the name without _GNU_SOURCE).
/// Lowering a thread's policy needs no privilege. Returns 0 on success.
static inline int shoal_duk_idle_priority(pthread_t thread) {
#if defined(__linux__)
    struct sched_param param;
    memset(&param, 0, sizeof param);
    return pthread_setschedparam(thread, 5 /* SCHED_IDLE */, &param);
#else
    (void) thread;
    return -1;
#endif
}

/// Names the calling thread (shown by top -H, gdb): at most 15 characters.
static inline void shoal_duk_name_thread(const char *name) {
#if defined(__linux__)
    prctl(PR_SET_NAME, (unsigned long) name, 0, 0, 0);
#else
    (void) name;
#endif
}

/// Empties the value stack (never throws for index 0).
static inline void shoal_duk_reset(duk_context *ctx) {
    duk_set_top(ctx, 0);
}

// MARK: - Running a body safely

// Replaces the value on top of the stack by its JSON text. An Error object is described as
// its own enumerable properties plus name, message and lineNumber (JSON.stringify would
// give "{}"). undefined and functions become null. May throw (a cyclic value): callers run it
// inside duk_safe_call.
static void shoal_duk__to_json(duk_context *ctx, int describe_errors) {
    duk_idx_t value = duk_get_top_index(ctx);
    if (describe_errors && duk_is_error(ctx, value)) {
        duk_dup(ctx, value);
        duk_json_encode(ctx, -1);
        if (duk_is_string(ctx, -1)) {
            duk_json_decode(ctx, -1);
        } else {
            duk_pop(ctx);
            duk_push_object(ctx);
        }
        duk_get_prop_string(ctx, value, "name");
        duk_put_prop_string(ctx, -2, "name");
        duk_get_prop_string(ctx, value, "message");
        duk_put_prop_string(ctx, -2, "message");
        duk_get_prop_string(ctx, value, "lineNumber");
        if (duk_is_number(ctx, -1)) {
            duk_put_prop_string(ctx, -2, "lineNumber");
        } else {
            duk_pop(ctx);
        }
        duk_remove(ctx, value);
    }
    duk_json_encode(ctx, -1);
    if (!duk_is_string(ctx, -1)) {
        duk_pop(ctx);
        duk_push_string(ctx, "null");
    }
}

static duk_ret_t shoal_duk__error_to_json(duk_context *ctx, void *udata) {
    (void) udata;
    shoal_duk__to_json(ctx, 1);
    return 1;
}

// Runs `body` (which must leave one JSON string on top) protected, then converts a thrown
// value, protected too. Leaves exactly one string on an otherwise empty stack.
static int shoal_duk__run(duk_context *ctx, duk_safe_call_function body, void *udata) {
    duk_set_top(ctx, 0);
    if (duk_safe_call(ctx, body, udata, 0, 1) == DUK_EXEC_SUCCESS) return SHOAL_DUK_OK;
    if (duk_safe_call(ctx, shoal_duk__error_to_json, NULL, 1, 1) == DUK_EXEC_SUCCESS) return SHOAL_DUK_THROWN;
    duk_safe_to_lstring(ctx, -1, NULL);
    return SHOAL_DUK_FAILED;
}

// MARK: - Compiling the function

typedef struct {
    const char *source;
    size_t source_len;
    const char *filename;
} shoal_duk__compile_request;

static duk_ret_t shoal_duk__compile_body(duk_context *ctx, void *udata) {
    shoal_duk__compile_request *req = (shoal_duk__compile_request *) udata;
    duk_push_string(ctx, req->filename);
    duk_compile_lstring_filename(ctx, DUK_COMPILE_EVAL, req->source, req->source_len);
    duk_call(ctx, 0);
    if (!duk_is_function(ctx, -1)) {
        duk_push_string(ctx, "false");
        return 1;
    }
    duk_push_global_stash(ctx);
    duk_dup(ctx, -2);
    duk_put_prop_string(ctx, -2, "shoal.fn");
    duk_push_string(ctx, "true");
    return 1;
}

/// Evaluates `source` (an expression, e.g. "(function(doc) {...}\n)") as eval code and keeps
/// the resulting function for shoal_duk_call. OK with "true", or with "false" when the value
/// is not a function. A syntax error is SHOAL_DUK_THROWN with the SyntaxError described as
/// JSON (its lineNumber is the line in `source`).
static inline int shoal_duk_compile(duk_context *ctx, const char *source, size_t len, const char *filename) {
    shoal_duk__compile_request req = { source, len, filename };
    return shoal_duk__run(ctx, shoal_duk__compile_body, &req);
}

// MARK: - Calling the function

typedef struct {
    const char *args;
    size_t args_len;
} shoal_duk__call_request;

static duk_ret_t shoal_duk__call_body(duk_context *ctx, void *udata) {
    shoal_duk__call_request *req = (shoal_duk__call_request *) udata;
    duk_push_global_stash(ctx);
    duk_get_prop_string(ctx, -1, "shoal.fn");
    duk_push_lstring(ctx, req->args, req->args_len);
    duk_json_decode(ctx, -1);
    duk_idx_t array = duk_get_top_index(ctx);
    duk_idx_t count = (duk_idx_t) duk_get_length(ctx, array);
    duk_require_stack(ctx, count + 8);
    for (duk_idx_t i = 0; i < count; i++) {
        duk_get_prop_index(ctx, array, (duk_uarridx_t) i);
    }
    duk_remove(ctx, array);
    duk_call(ctx, count);
    shoal_duk__to_json(ctx, 0);
    return 1;
}

/// Calls the compiled function with the elements of `args` (a JSON array) as arguments.
/// The result (undefined becomes null) or the thrown value is left on the stack as JSON.
static inline int shoal_duk_call(duk_context *ctx, const char *args, size_t len) {
    shoal_duk__call_request req = { args, len };
    return shoal_duk__run(ctx, shoal_duk__call_body, &req);
}

// MARK: - Host functions

#define SHOAL_HOST_RETURN 0      /* out: JSON text of the result, or NULL for undefined */
#define SHOAL_HOST_THROW_VALUE 1 /* out: JSON text of the value to throw */
#define SHOAL_HOST_THROW_ERROR 2 /* out: message of an Error to throw */

/// The Swift side of every host function. It receives the arguments as a JSON array and
/// must not call Duktape. `*out` stays valid until the next dispatch on the same heap.
typedef int (*shoal_duk_host_dispatch)(void *udata, int index, const char *args, size_t args_len,
                                       const char **out, size_t *out_len);

typedef struct {
    shoal_duk_host_dispatch dispatch;
    void *udata;
} shoal_duk_host_binding;

static duk_ret_t shoal_duk__host_trampoline(duk_context *ctx) {
    duk_idx_t argc = duk_get_top(ctx);
    duk_push_array(ctx);
    for (duk_idx_t i = 0; i < argc; i++) {
        duk_dup(ctx, i);
        duk_put_prop_index(ctx, argc, (duk_uarridx_t) i);
    }
    duk_json_encode(ctx, argc);
    duk_size_t args_len = 0;
    const char *args = duk_get_lstring(ctx, argc, &args_len);
    duk_push_global_stash(ctx);
    duk_get_prop_string(ctx, -1, "shoal.host");
    shoal_duk_host_binding *binding = (shoal_duk_host_binding *) duk_get_pointer(ctx, -1);
    duk_pop_2(ctx);
    if (binding == NULL) return duk_error(ctx, DUK_ERR_ERROR, "host functions are not bound");
    const char *out = NULL;
    size_t out_len = 0;
    int rc = binding->dispatch(binding->udata, (int) duk_get_current_magic(ctx), args, args_len, &out, &out_len);
    if (rc == SHOAL_HOST_RETURN) {
        if (out == NULL) return 0;
        duk_push_lstring(ctx, out, out_len);
        duk_json_decode(ctx, -1);
        return 1;
    }
    if (rc == SHOAL_HOST_THROW_VALUE) {
        duk_push_lstring(ctx, out, out_len);
        duk_json_decode(ctx, -1);
        return duk_throw(ctx);
    }
    duk_get_global_string(ctx, "Error");
    duk_push_lstring(ctx, out, out_len);
    duk_new(ctx, 1);
    return duk_throw(ctx);
}

typedef struct {
    shoal_duk_host_binding *binding;
} shoal_duk__bind_request;

static duk_ret_t shoal_duk__bind_body(duk_context *ctx, void *udata) {
    shoal_duk__bind_request *req = (shoal_duk__bind_request *) udata;
    duk_push_global_stash(ctx);
    duk_push_pointer(ctx, req->binding);
    duk_put_prop_string(ctx, -2, "shoal.host");
    duk_push_string(ctx, "null");
    return 1;
}

/// Makes `binding` (owned by the caller, alive as long as the heap) the dispatcher of all
/// host functions of this heap.
static inline int shoal_duk_bind_host(duk_context *ctx, shoal_duk_host_binding *binding) {
    shoal_duk__bind_request req = { binding };
    return shoal_duk__run(ctx, shoal_duk__bind_body, &req);
}

typedef struct {
    const char *object;
    const char *name;
    int index;
} shoal_duk__define_request;

static duk_ret_t shoal_duk__define_body(duk_context *ctx, void *udata) {
    shoal_duk__define_request *req = (shoal_duk__define_request *) udata;
    duk_push_global_object(ctx);
    if (req->object != NULL) {
        if (!duk_get_prop_string(ctx, -1, req->object) || !duk_is_object(ctx, -1)) {
            duk_pop(ctx);
            duk_push_object(ctx);
            duk_dup(ctx, -1);
            duk_put_prop_string(ctx, -3, req->object);
        }
    }
    duk_push_c_function(ctx, shoal_duk__host_trampoline, DUK_VARARGS);
    duk_set_magic(ctx, -1, req->index);
    duk_put_prop_string(ctx, -2, req->name);
    duk_push_string(ctx, "null");
    return 1;
}

/// Defines global `name` (or `object.name`, creating the global object `object` if needed)
/// as a host function whose calls reach the dispatcher with `index` (0...32767).
static inline int shoal_duk_define_host(duk_context *ctx, const char *object, const char *name, int index) {
    shoal_duk__define_request req = { object, name, index };
    return shoal_duk__run(ctx, shoal_duk__define_body, &req);
}

#endif
