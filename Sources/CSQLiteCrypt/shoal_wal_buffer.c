/*
 * The WAL write buffer: a file wrapper the Shoal VFS puts around every WAL file
 * (plain or encrypted). SQLite appends each WAL frame with two writes, the 24-byte
 * frame header and then the page, each a pwrite(2) of its own; for a group commit
 * of 2,000 documents that is thousands of system calls whose fixed cost (the file
 * system's per-write work) is larger than the copy of the bytes. The wrapper keeps
 * a contiguous run of writes in memory and hands it to the file in one write:
 *
 *   - at the end of every commit: when the page of a commit frame (a frame header
 *     whose "database size after commit" field is not zero) has been added, the run
 *     is written before xWrite returns, so a failure (a full disk) fails the commit
 *     and SQLite publishes the frames in the wal-index only once they are in the file
 *     (other connections read frames with their own file handles);
 *   - before anything else touches the file through this handle (read, sync,
 *     truncate, size, file control, close), so the handle reads what it wrote;
 *   - when a write does not continue the run or lies inside it, and when the run
 *     reaches SHOAL_WAL_BUFFER_BYTES.
 *
 * Frames of a transaction that has not committed may stay in memory until then; a
 * crash loses them, as SQLite would ignore them anyway. What is durable is still
 * decided by xSync, which writes the run first. See docs/storage.md.
 */
#include "crypt_internal.h"

typedef struct WalBufferFile {
    ShimFile shim;            /* SQLite's file, then the file it wraps (`real`) */
    unsigned char *bytes;     /* SHOAL_WAL_BUFFER_BYTES, allocated at the first write */
    sqlite3_int64 start;      /* file offset of bytes[0] */
    int length;               /* bytes held */
    int commitPending;        /* a commit frame's header is held; its page ends the commit */
    int enabled;              /* 0 when the run could not be allocated: writes go straight through */
    unsigned long long taken; /* writes SQLite asked for */
    unsigned long long issued; /* writes handed to the file */
} WalBufferFile;

size_t shoal_wal_buffer_file_size(void) { return (sizeof(WalBufferFile) + 15) & ~(size_t)15; }

#define W(f) ((WalBufferFile *)(f))
/* Writes the held run to the file. */
static int flush(WalBufferFile *p) {
    if (p->length == 0) return SQLITE_OK;
    int rc = p->shim.real->pMethods->xWrite(p->shim.real, p->bytes, p->length, p->start);
    p->issued++;
    p->length = 0;
    p->commitPending = 0;
    return rc;
}

/* Whether `in` (a 24-byte write at a frame header's place) is the header of a commit frame. */
static int isCommitFrameHeader(const unsigned char *in, int amount, sqlite3_int64 offset) {
    if (amount != FRAME_HEADER || offset < WAL_HEADER) return 0;
    return in[4] | in[5] | in[6] | in[7];
}

static int bufferWrite(sqlite3_file *file, const void *in, int amount, sqlite3_int64 offset) {
    WalBufferFile *p = W(file);
    p->taken++;
    if (!p->enabled || amount > SHOAL_WAL_BUFFER_BYTES) {
        int rc = flush(p);
        if (rc != SQLITE_OK) return rc;
        p->issued++;
        return p->shim.real->pMethods->xWrite(p->shim.real, in, amount, offset);
    }
    if (!p->bytes) {
        p->bytes = sqlite3_malloc(SHOAL_WAL_BUFFER_BYTES);
        if (!p->bytes) {
            p->enabled = 0;
            p->issued++;
            return p->shim.real->pMethods->xWrite(p->shim.real, in, amount, offset);
        }
    }
    int commitEnds = p->commitPending && amount > FRAME_HEADER;
    if (p->length > 0 && offset >= p->start && offset + amount <= p->start + p->length) {
        /* A rewrite inside the run (SQLite rewrites frames of the open transaction). */
        memcpy(p->bytes + (offset - p->start), in, (size_t)amount);
    } else {
        if (p->length > 0 && (offset != p->start + p->length || p->length + amount > SHOAL_WAL_BUFFER_BYTES)) {
            int rc = flush(p);
            if (rc != SQLITE_OK) return rc;
        }
        if (p->length == 0) p->start = offset;
        memcpy(p->bytes + p->length, in, (size_t)amount);
        p->length += amount;
    }
    if (isCommitFrameHeader(in, amount, offset)) {
        p->commitPending = 1;
    } else if (commitEnds) {
        return flush(p);
    }
    return SQLITE_OK;
}

static int bufferClose(sqlite3_file *file) {
    WalBufferFile *p = W(file);
    int rc = flush(p);
    int closed = p->shim.real->pMethods ? p->shim.real->pMethods->xClose(p->shim.real) : SQLITE_OK;
    sqlite3_free(p->bytes);
    p->bytes = NULL;
    return rc != SQLITE_OK ? rc : closed;
}

static int bufferRead(sqlite3_file *f, void *out, int amount, sqlite3_int64 offset) {
    int rc = flush(W(f));
    return rc != SQLITE_OK ? rc : SHIM_REAL(f)->pMethods->xRead(SHIM_REAL(f), out, amount, offset);
}
static int bufferTruncate(sqlite3_file *f, sqlite3_int64 size) {
    int rc = flush(W(f));
    return rc != SQLITE_OK ? rc : SHIM_REAL(f)->pMethods->xTruncate(SHIM_REAL(f), size);
}
static int bufferSync(sqlite3_file *f, int flags) {
    int rc = flush(W(f));
    return rc != SQLITE_OK ? rc : SHIM_REAL(f)->pMethods->xSync(SHIM_REAL(f), flags);
}
static int bufferFileSize(sqlite3_file *f, sqlite3_int64 *size) {
    int rc = flush(W(f));
    return rc != SQLITE_OK ? rc : SHIM_REAL(f)->pMethods->xFileSize(SHIM_REAL(f), size);
}
static int bufferFileControl(sqlite3_file *f, int op, void *arg) {
    int rc = flush(W(f));
    return rc != SQLITE_OK ? rc : SHIM_REAL(f)->pMethods->xFileControl(SHIM_REAL(f), op, arg);
}
static int bufferDeviceCharacteristics(sqlite3_file *f) {
    return SHIM_REAL(f)->pMethods->xDeviceCharacteristics(SHIM_REAL(f));
}
static const sqlite3_io_methods bufferMethods = {
    3, bufferClose, bufferRead, bufferWrite, bufferTruncate, bufferSync, bufferFileSize, shoal_shim_lock,
    shoal_shim_unlock, shoal_shim_check_reserved_lock, bufferFileControl, shoal_shim_sector_size,
    bufferDeviceCharacteristics, shoal_shim_shm_map, shoal_shim_shm_lock, shoal_shim_shm_barrier, shoal_shim_shm_unmap,
    shoal_shim_no_fetch, shoal_shim_no_unfetch, /* SQLite never maps a WAL */
};

int shoal_wal_buffer_open(sqlite3_vfs *vfs, sqlite3_filename name, sqlite3_file *file, int flags, int *outFlags) {
    WalBufferFile *p = W(file);
    memset(p, 0, sizeof(WalBufferFile));
    p->shim.real = (sqlite3_file *)((unsigned char *)file + shoal_wal_buffer_file_size());
    int rc = vfs->xOpen(vfs, name, p->shim.real, flags, outFlags);
    if (rc != SQLITE_OK) return rc;
    p->enabled = 1;
    p->shim.base.pMethods = &bufferMethods;
    return SQLITE_OK;
}

int shoal_wal_buffer_connection_stats(sqlite3 *db, unsigned long long *taken, unsigned long long *issued) {
    sqlite3_file *file = NULL;
    if (sqlite3_file_control(db, "main", SQLITE_FCNTL_JOURNAL_POINTER, &file) != SQLITE_OK || !file) return 0;
    file = shoal_crypt_inner_file(file);
    if (!file || file->pMethods != &bufferMethods) return 0;
    *taken = W(file)->taken;
    *issued = W(file)->issued;
    return 1;
}
