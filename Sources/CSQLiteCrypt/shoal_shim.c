/*
 * What the VFS's two file wrappers (the encrypting file, shoal_crypt.c, and the WAL
 * write buffer, shoal_wal_buffer.c) share: the methods that go straight to the file
 * they wrap, and no memory-mapped reads. Both wrappers start with a ShimFile.
 */
#include "crypt_internal.h"

int shoal_shim_lock(sqlite3_file *f, int level) { return SHIM_REAL(f)->pMethods->xLock(SHIM_REAL(f), level); }
int shoal_shim_unlock(sqlite3_file *f, int level) { return SHIM_REAL(f)->pMethods->xUnlock(SHIM_REAL(f), level); }
int shoal_shim_check_reserved_lock(sqlite3_file *f, int *out) {
    return SHIM_REAL(f)->pMethods->xCheckReservedLock(SHIM_REAL(f), out);
}
int shoal_shim_sector_size(sqlite3_file *f) { return SHIM_REAL(f)->pMethods->xSectorSize(SHIM_REAL(f)); }
int shoal_shim_shm_map(sqlite3_file *f, int region, int size, int extend, void volatile **out) {
    return SHIM_REAL(f)->pMethods->xShmMap(SHIM_REAL(f), region, size, extend, out);
}
int shoal_shim_shm_lock(sqlite3_file *f, int offset, int count, int flags) {
    return SHIM_REAL(f)->pMethods->xShmLock(SHIM_REAL(f), offset, count, flags);
}
void shoal_shim_shm_barrier(sqlite3_file *f) { SHIM_REAL(f)->pMethods->xShmBarrier(SHIM_REAL(f)); }
int shoal_shim_shm_unmap(sqlite3_file *f, int deleteFlag) { return SHIM_REAL(f)->pMethods->xShmUnmap(SHIM_REAL(f), deleteFlag); }

/* No memory-mapped reads through a wrapper: SQLite falls back to xRead. */
int shoal_shim_no_fetch(sqlite3_file *f, sqlite3_int64 offset, int amount, void **out) {
    (void)f; (void)offset; (void)amount;
    *out = NULL;
    return SQLITE_OK;
}
int shoal_shim_no_unfetch(sqlite3_file *f, sqlite3_int64 offset, void *page) {
    (void)f; (void)offset; (void)page;
    return SQLITE_OK;
}
