/*
 * What the VFS's two file wrappers (the encrypting file, shoal_crypt.c, and the WAL
 * write buffer, shoal_wal_buffer.c) share: the methods that go straight to the file
 * they wrap, and no memory-mapped reads. Both wrappers start with a ShimFile.
 */
#include "crypt_internal.h"

#define REAL(f) (((ShimFile *)(f))->real)

int shoal_shim_lock(sqlite3_file *f, int level) { return REAL(f)->pMethods->xLock(REAL(f), level); }
int shoal_shim_unlock(sqlite3_file *f, int level) { return REAL(f)->pMethods->xUnlock(REAL(f), level); }
int shoal_shim_check_reserved_lock(sqlite3_file *f, int *out) {
    return REAL(f)->pMethods->xCheckReservedLock(REAL(f), out);
}
int shoal_shim_sector_size(sqlite3_file *f) { return REAL(f)->pMethods->xSectorSize(REAL(f)); }
int shoal_shim_shm_map(sqlite3_file *f, int region, int size, int extend, void volatile **out) {
    return REAL(f)->pMethods->xShmMap(REAL(f), region, size, extend, out);
}
int shoal_shim_shm_lock(sqlite3_file *f, int offset, int count, int flags) {
    return REAL(f)->pMethods->xShmLock(REAL(f), offset, count, flags);
}
void shoal_shim_shm_barrier(sqlite3_file *f) { REAL(f)->pMethods->xShmBarrier(REAL(f)); }
int shoal_shim_shm_unmap(sqlite3_file *f, int deleteFlag) { return REAL(f)->pMethods->xShmUnmap(REAL(f), deleteFlag); }

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
