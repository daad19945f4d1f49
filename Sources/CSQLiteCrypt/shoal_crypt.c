/*
 * Shoal's encrypting SQLite VFS: keys by path, the file methods, registration. The
 * page format is in shoal_crypt_pages.c. See include/shoal_crypt.h and docs/storage.md.
 *
 * Files of a database that has a key:
 *   main database  page-aligned pages, each sealed with AES-256-GCM
 *   WAL            32-byte header and 24-byte frame headers in clear (SQLite's
 *                  salts and checksums), every frame's page image sealed like a
 *                  database page
 *   journals       AES-256-CTR under a key derived from the database key
 * Temporary files (sorter, temp tables, statement journals) of a process that
 * has any key use AES-256-CTR under a random key that exists only in memory.
 *
 * A sealed page: bytes [0, PAGE-RESERVE) are ciphertext, the trailer holds
 * nonce(12) tag(16) keycheck(16) salt(16) "SHE1". The additional data is the
 * page's place (kind and index), so pages cannot be moved around unnoticed.
 * SQLite keeps the reserved bytes zero (Shoal sets reserve_bytes to
 * SHOAL_CRYPT_RESERVE and nothing else writes there); reads give them back as
 * zeros so that SQLite's WAL checksums, computed over its in-memory page, match.
 */
#include "crypt_internal.h"

/* ---- keys registered by path ------------------------------------------ */

static pthread_mutex_t registryLock = PTHREAD_MUTEX_INITIALIZER;
static KeyEntry *registry = NULL;
static int registeredKeys = 0;
static sqlite3_vfs *original = NULL;
static sqlite3_vfs cryptVfs;

/* The absolute path SQLite will hand to xOpen for `path`. */
static char *fullPath(const char *path) {
    int size = original->mxPathname + 1;
    char *out = sqlite3_malloc(size);
    if (!out) return NULL;
    if (original->xFullPathname(original, path, size, out) != SQLITE_OK) {
        sqlite3_free(out);
        return NULL;
    }
    return out;
}

/* Copies the entry of `path` into `found`; 1 when there is one. Caller holds no lock. */
static int lookupKey(const char *path, KeyEntry *found) {
    int hit = 0;
    if (!path) return 0;
    pthread_mutex_lock(&registryLock);
    for (KeyEntry *entry = registry; entry; entry = entry->next) {
        if (strcmp(entry->path, path) == 0) {
            *found = *entry;
            found->path = NULL;
            found->next = NULL;
            hit = 1;
            break;
        }
    }
    pthread_mutex_unlock(&registryLock);
    return hit;
}

int shoal_crypt_set_key(const char *path, const unsigned char *key, const unsigned char *salt) {
    int rc = shoal_crypt_register();
    if (rc != SQLITE_OK) return rc;
    char *full = fullPath(path);
    if (!full) return SQLITE_CANTOPEN;
    pthread_mutex_lock(&registryLock);
    KeyEntry *entry = registry;
    while (entry && strcmp(entry->path, full) != 0) entry = entry->next;
    if (entry) {
        sqlite3_free(full);
    } else {
        entry = calloc(1, sizeof(KeyEntry));
        if (!entry) {
            pthread_mutex_unlock(&registryLock);
            sqlite3_free(full);
            return SQLITE_NOMEM;
        }
        entry->path = full;
        entry->next = registry;
        registry = entry;
        registeredKeys++;
    }
    memcpy(entry->key, key, SHOAL_CRYPT_KEY);
    if (salt) memcpy(entry->salt, salt, SHOAL_CRYPT_SALT);
    else memset(entry->salt, 0, SHOAL_CRYPT_SALT);
    shoal_crypt_key_check(key, entry->check);
    pthread_mutex_unlock(&registryLock);
    return SQLITE_OK;
}

void shoal_crypt_remove_key(const char *path) {
    if (!original) return;
    char *full = fullPath(path);
    if (!full) return;
    pthread_mutex_lock(&registryLock);
    KeyEntry **link = &registry;
    while (*link) {
        KeyEntry *entry = *link;
        if (strcmp(entry->path, full) == 0) {
            *link = entry->next;
            OPENSSL_cleanse(entry->key, sizeof(entry->key));
            sqlite3_free(entry->path);
            free(entry);
            registeredKeys--;
            break;
        }
        link = &entry->next;
    }
    pthread_mutex_unlock(&registryLock);
    sqlite3_free(full);
}

/* ---- the file ------------------------------------------------------------------ */

typedef struct CryptFile {
    ShimFile shim;                /* SQLite's file, then the file it wraps (`real`) */
    int kind;
    KeyEntry key;                 /* a copy: path and next are NULL */
    unsigned char streamKey[32];
    EVP_CIPHER_CTX *ctx;
    unsigned char *scratch;       /* two pages */
} CryptFile;

static int cryptClose(sqlite3_file *file) {
    CryptFile *p = (CryptFile *)file;
    int rc = p->shim.real->pMethods ? p->shim.real->pMethods->xClose(p->shim.real) : SQLITE_OK;
    if (p->ctx) EVP_CIPHER_CTX_free(p->ctx);
    if (p->scratch) sqlite3_free(p->scratch);
    OPENSSL_cleanse(&p->key, sizeof(p->key));
    OPENSSL_cleanse(p->streamKey, sizeof(p->streamKey));
    return rc;
}

/* Bytes of the file at or after `offset` that exist (for short reads). */
static sqlite3_int64 bytesPresent(sqlite3_file *real, sqlite3_int64 offset, int count) {
    sqlite3_int64 size = 0;
    if (real->pMethods->xFileSize(real, &size) != SQLITE_OK) return count;
    if (size <= offset) return 0;
    return size - offset < count ? size - offset : count;
}

/* Reads one sealed page at `at` of kind/index and copies [from, from+count) of its plaintext to `out`. */
static int readSealed(CryptFile *p, sqlite3_int64 at, int kind, uint64_t index, int from, int count,
                      unsigned char *out, int *sawShort) {
    unsigned char *raw = p->scratch;
    unsigned char *plain = p->scratch + PAGE;
    int rc = p->shim.real->pMethods->xRead(p->shim.real, raw, PAGE, at);
    if (rc == SQLITE_IOERR_SHORT_READ) {
        *sawShort = 1;
    } else if (rc != SQLITE_OK) {
        return rc;
    }
    switch (shoal_crypt_open_page(p->ctx, &p->key, kind, index, raw, plain)) {
    case OPEN_OK:
    case OPEN_ZERO:
        break;
    case OPEN_WRONG_KEY:
        return SQLITE_NOTADB;
    default:
        if (kind == KIND_WAL) {
            /* A torn or foreign frame: hand SQLite zeros and let its frame checksum reject it. */
            memset(plain, 0, PAGE);
            break;
        }
        return SQLITE_IOERR_DATA;
    }
    memcpy(out, plain + from, count);
    return SQLITE_OK;
}

static int writeSealed(CryptFile *p, sqlite3_int64 at, int kind, uint64_t index, const unsigned char *in) {
    unsigned char *sealed = p->scratch;
    if (!shoal_crypt_all_zero(in + BODY, RESERVE)) return SQLITE_IOERR_WRITE; /* SQLite must leave the reserve alone */
    int rc = shoal_crypt_seal_page(p->ctx, &p->key, kind, index, in, sealed);
    if (rc != SQLITE_OK) return rc;
    return p->shim.real->pMethods->xWrite(p->shim.real, sealed, PAGE, at);
}

static int mainRead(CryptFile *p, unsigned char *out, int amount, sqlite3_int64 offset) {
    int sawShort = 0;
    while (amount > 0) {
        uint64_t index = (uint64_t)offset / PAGE;
        int from = (int)((uint64_t)offset % PAGE);
        int count = PAGE - from < amount ? PAGE - from : amount;
        int rc = readSealed(p, (sqlite3_int64)(index * PAGE), KIND_MAIN, index, from, count, out, &sawShort);
        if (rc != SQLITE_OK) return rc;
        out += count;
        offset += count;
        amount -= count;
    }
    return sawShort ? SQLITE_IOERR_SHORT_READ : SQLITE_OK;
}

static int mainWrite(CryptFile *p, const unsigned char *in, int amount, sqlite3_int64 offset) {
    if (offset % PAGE != 0 || amount % PAGE != 0) return SQLITE_IOERR_WRITE;
    if (offset == 0) {
        /* Page 1: the header must say 4096-byte pages with the reserve the seal needs. */
        int pageSize = (in[16] << 8) | in[17];
        if (pageSize != PAGE || in[20] != RESERVE) return SQLITE_IOERR_WRITE;
    }
    for (int done = 0; done < amount; done += PAGE) {
        uint64_t index = (uint64_t)(offset + done) / PAGE;
        int rc = writeSealed(p, offset + done, KIND_MAIN, index, in + done);
        if (rc != SQLITE_OK) return rc;
    }
    return SQLITE_OK;
}

/* WAL: walk the request in segments that are either clear (headers) or a frame's page image. */
static int walRead(CryptFile *p, unsigned char *out, int amount, sqlite3_int64 offset) {
    int sawShort = 0;
    while (amount > 0) {
        int count;
        if (offset < WAL_HEADER) {
            count = (int)(WAL_HEADER - offset) < amount ? (int)(WAL_HEADER - offset) : amount;
            int rc = p->shim.real->pMethods->xRead(p->shim.real, out, count, offset);
            if (rc == SQLITE_IOERR_SHORT_READ) sawShort = 1; else if (rc != SQLITE_OK) return rc;
        } else {
            uint64_t frame = (uint64_t)(offset - WAL_HEADER) / FRAME;
            int within = (int)((uint64_t)(offset - WAL_HEADER) % FRAME);
            sqlite3_int64 start = WAL_HEADER + (sqlite3_int64)frame * FRAME;
            if (within < FRAME_HEADER) {
                count = FRAME_HEADER - within < amount ? FRAME_HEADER - within : amount;
                int rc = p->shim.real->pMethods->xRead(p->shim.real, out, count, offset);
                if (rc == SQLITE_IOERR_SHORT_READ) sawShort = 1; else if (rc != SQLITE_OK) return rc;
            } else {
                int from = within - FRAME_HEADER;
                count = PAGE - from < amount ? PAGE - from : amount;
                int rc = readSealed(p, start + FRAME_HEADER, KIND_WAL, frame, from, count, out, &sawShort);
                if (rc != SQLITE_OK) return rc;
            }
        }
        out += count;
        offset += count;
        amount -= count;
    }
    return sawShort ? SQLITE_IOERR_SHORT_READ : SQLITE_OK;
}

static int walWrite(CryptFile *p, const unsigned char *in, int amount, sqlite3_int64 offset) {
    while (amount > 0) {
        int count;
        if (offset < WAL_HEADER) {
            count = (int)(WAL_HEADER - offset) < amount ? (int)(WAL_HEADER - offset) : amount;
            if (offset == 0 && count >= 12) {
                uint32_t pageSize = ((uint32_t)in[8] << 24) | ((uint32_t)in[9] << 16) | ((uint32_t)in[10] << 8) | in[11];
                if (pageSize != PAGE) return SQLITE_IOERR_WRITE;
            }
            int rc = p->shim.real->pMethods->xWrite(p->shim.real, in, count, offset);
            if (rc != SQLITE_OK) return rc;
        } else {
            uint64_t frame = (uint64_t)(offset - WAL_HEADER) / FRAME;
            int within = (int)((uint64_t)(offset - WAL_HEADER) % FRAME);
            sqlite3_int64 start = WAL_HEADER + (sqlite3_int64)frame * FRAME;
            if (within < FRAME_HEADER) {
                count = FRAME_HEADER - within < amount ? FRAME_HEADER - within : amount;
                int rc = p->shim.real->pMethods->xWrite(p->shim.real, in, count, offset);
                if (rc != SQLITE_OK) return rc;
            } else {
                if (within != FRAME_HEADER || amount < PAGE) return SQLITE_IOERR_WRITE;
                count = PAGE;
                int rc = writeSealed(p, start + FRAME_HEADER, KIND_WAL, frame, in);
                if (rc != SQLITE_OK) return rc;
            }
        }
        in += count;
        offset += count;
        amount -= count;
    }
    return SQLITE_OK;
}

static int streamRead(CryptFile *p, unsigned char *out, int amount, sqlite3_int64 offset) {
    int rc = p->shim.real->pMethods->xRead(p->shim.real, out, amount, offset);
    if (rc != SQLITE_OK && rc != SQLITE_IOERR_SHORT_READ) return rc;
    int present = rc == SQLITE_OK ? amount : (int)bytesPresent(p->shim.real, offset, amount);
    int crc = shoal_crypt_stream(p->ctx, p->streamKey, offset, out, out, present);
    return crc != SQLITE_OK ? crc : rc;
}

static int streamWrite(CryptFile *p, const unsigned char *in, int amount, sqlite3_int64 offset) {
    unsigned char *buffer = amount <= 2 * PAGE ? p->scratch : sqlite3_malloc(amount);
    if (!buffer) return SQLITE_IOERR_NOMEM;
    int rc = shoal_crypt_stream(p->ctx, p->streamKey, offset, in, buffer, amount);
    if (rc == SQLITE_OK) rc = p->shim.real->pMethods->xWrite(p->shim.real, buffer, amount, offset);
    if (buffer != p->scratch) sqlite3_free(buffer);
    return rc;
}

static int cryptRead(sqlite3_file *file, void *out, int amount, sqlite3_int64 offset) {
    CryptFile *p = (CryptFile *)file;
    switch (p->kind) {
    case KIND_MAIN: return mainRead(p, out, amount, offset);
    case KIND_WAL: return walRead(p, out, amount, offset);
    default: return streamRead(p, out, amount, offset);
    }
}

static int cryptWrite(sqlite3_file *file, const void *in, int amount, sqlite3_int64 offset) {
    CryptFile *p = (CryptFile *)file;
    switch (p->kind) {
    case KIND_MAIN: return mainWrite(p, in, amount, offset);
    case KIND_WAL: return walWrite(p, in, amount, offset);
    default: return streamWrite(p, in, amount, offset);
    }
}

static int cryptTruncate(sqlite3_file *f, sqlite3_int64 size) { return SHIM_REAL(f)->pMethods->xTruncate(SHIM_REAL(f), size); }
static int cryptSync(sqlite3_file *f, int flags) { return SHIM_REAL(f)->pMethods->xSync(SHIM_REAL(f), flags); }
static int cryptFileSize(sqlite3_file *f, sqlite3_int64 *size) { return SHIM_REAL(f)->pMethods->xFileSize(SHIM_REAL(f), size); }
static int cryptFileControl(sqlite3_file *f, int op, void *arg) {
    if (op == SQLITE_FCNTL_VFSNAME) {
        char *inner = NULL;
        SHIM_REAL(f)->pMethods->xFileControl(SHIM_REAL(f), op, &inner);
        *(char **)arg = sqlite3_mprintf("shoal-crypt/%z", inner);
        return SQLITE_OK;
    }
    return SHIM_REAL(f)->pMethods->xFileControl(SHIM_REAL(f), op, arg);
}
static int cryptDeviceCharacteristics(sqlite3_file *f) {
    /* Whole pages are rewritten sealed: a partial-page write never happens. */
    return SHIM_REAL(f)->pMethods->xDeviceCharacteristics(SHIM_REAL(f)) | SQLITE_IOCAP_POWERSAFE_OVERWRITE;
}
static const sqlite3_io_methods cryptMethods = {
    3, cryptClose, cryptRead, cryptWrite, cryptTruncate, cryptSync, cryptFileSize, shoal_shim_lock, shoal_shim_unlock,
    shoal_shim_check_reserved_lock, cryptFileControl, shoal_shim_sector_size, cryptDeviceCharacteristics,
    shoal_shim_shm_map, shoal_shim_shm_lock, shoal_shim_shm_barrier, shoal_shim_shm_unmap, shoal_shim_no_fetch,
    shoal_shim_no_unfetch,
};

sqlite3_file *shoal_crypt_inner_file(sqlite3_file *file) {
    return file->pMethods == &cryptMethods ? SHIM_REAL(file) : file;
}

static int cryptOpen(sqlite3_vfs *vfs, sqlite3_filename name, sqlite3_file *file, int flags, int *outFlags) {
    (void)vfs;
    KeyEntry key;
    int kind = 0;
    int haveKeys;
    pthread_mutex_lock(&registryLock);
    haveKeys = registeredKeys > 0;
    pthread_mutex_unlock(&registryLock);
    if (haveKeys) {
        if (flags & SQLITE_OPEN_MAIN_DB) {
            if (lookupKey(name, &key)) kind = KIND_MAIN;
        } else if (flags & SQLITE_OPEN_WAL) {
            if (lookupKey(sqlite3_filename_database(name), &key)) kind = KIND_WAL;
        } else if (flags & (SQLITE_OPEN_MAIN_JOURNAL | SQLITE_OPEN_SUPER_JOURNAL)) {
            if (lookupKey(sqlite3_filename_database(name), &key)) kind = KIND_STREAM;
        } else {
            kind = KIND_STREAM; /* temp database, temp and statement journals, transient */
            memset(&key, 0, sizeof(key));
        }
    }
    if (kind == 0) {
        /* No key: the unix VFS's own file; a WAL gets the write buffer. */
        if (flags & SQLITE_OPEN_WAL) return shoal_wal_buffer_open(original, name, file, flags, outFlags);
        return original->xOpen(original, name, file, flags, outFlags);
    }
    CryptFile *p = (CryptFile *)file;
    memset(p, 0, sizeof(CryptFile));
    p->shim.real = (sqlite3_file *)(p + 1);
    int rc = kind == KIND_WAL ? shoal_wal_buffer_open(original, name, p->shim.real, flags, outFlags)
                              : original->xOpen(original, name, p->shim.real, flags, outFlags);
    if (rc != SQLITE_OK) {
        OPENSSL_cleanse(&key, sizeof(key));
        return rc;
    }
    p->kind = kind;
    p->key = key;
    OPENSSL_cleanse(&key, sizeof(key));
    if (kind == KIND_STREAM) {
        if (flags & (SQLITE_OPEN_MAIN_JOURNAL | SQLITE_OPEN_SUPER_JOURNAL)) {
            unsigned int length = 32;
            HMAC(EVP_sha256(), p->key.key, SHOAL_CRYPT_KEY, (const unsigned char *)shoalJournalLabel,
                 strlen(shoalJournalLabel), p->streamKey, &length);
        } else if (RAND_bytes(p->streamKey, 32) != 1) {
            rc = SQLITE_CANTOPEN;
        }
    }
    p->ctx = EVP_CIPHER_CTX_new();
    p->scratch = sqlite3_malloc(2 * PAGE);
    if (!p->ctx || !p->scratch) rc = SQLITE_NOMEM;
    p->shim.base.pMethods = &cryptMethods;
    if (rc != SQLITE_OK) {
        cryptClose(file);
        p->shim.base.pMethods = NULL;
    }
    return rc;
}

static int vDelete(sqlite3_vfs *v, const char *n, int s) { (void)v; return original->xDelete(original, n, s); }
static int vAccess(sqlite3_vfs *v, const char *n, int f, int *o) { (void)v; return original->xAccess(original, n, f, o); }
static int vFullPathname(sqlite3_vfs *v, const char *n, int s, char *o) { (void)v; return original->xFullPathname(original, n, s, o); }
static void *vDlOpen(sqlite3_vfs *v, const char *n) { (void)v; return original->xDlOpen(original, n); }
static void vDlError(sqlite3_vfs *v, int s, char *o) { (void)v; original->xDlError(original, s, o); }
static void (*vDlSym(sqlite3_vfs *v, void *h, const char *s))(void) { (void)v; return original->xDlSym(original, h, s); }
static void vDlClose(sqlite3_vfs *v, void *h) { (void)v; original->xDlClose(original, h); }
static int vRandomness(sqlite3_vfs *v, int n, char *o) { (void)v; return original->xRandomness(original, n, o); }
static int vSleep(sqlite3_vfs *v, int us) { (void)v; return original->xSleep(original, us); }
static int vCurrentTime(sqlite3_vfs *v, double *o) { (void)v; return original->xCurrentTime(original, o); }
static int vGetLastError(sqlite3_vfs *v, int n, char *o) { (void)v; return original->xGetLastError(original, n, o); }
static int vCurrentTimeInt64(sqlite3_vfs *v, sqlite3_int64 *o) { (void)v; return original->xCurrentTimeInt64(original, o); }
static int vSetSystemCall(sqlite3_vfs *v, const char *n, sqlite3_syscall_ptr p) { (void)v; return original->xSetSystemCall(original, n, p); }
static sqlite3_syscall_ptr vGetSystemCall(sqlite3_vfs *v, const char *n) { (void)v; return original->xGetSystemCall(original, n); }
static const char *vNextSystemCall(sqlite3_vfs *v, const char *n) { (void)v; return original->xNextSystemCall(original, n); }

static pthread_once_t registerOnce = PTHREAD_ONCE_INIT;
static int registerResult = SQLITE_OK;

static void registerNow(void) {
    registerResult = sqlite3_initialize();
    if (registerResult != SQLITE_OK) return;
    original = sqlite3_vfs_find(NULL);
    if (!original || original->iVersion < 3) {
        registerResult = SQLITE_ERROR;
        return;
    }
    memset(&cryptVfs, 0, sizeof(cryptVfs));
    cryptVfs.iVersion = 3;
    cryptVfs.szOsFile = (int)(sizeof(CryptFile) + shoal_wal_buffer_file_size()) + original->szOsFile;
    cryptVfs.mxPathname = original->mxPathname;
    cryptVfs.zName = "shoal-crypt";
    cryptVfs.xOpen = cryptOpen;
    cryptVfs.xDelete = vDelete;
    cryptVfs.xAccess = vAccess;
    cryptVfs.xFullPathname = vFullPathname;
    cryptVfs.xDlOpen = vDlOpen;
    cryptVfs.xDlError = vDlError;
    cryptVfs.xDlSym = vDlSym;
    cryptVfs.xDlClose = vDlClose;
    cryptVfs.xRandomness = vRandomness;
    cryptVfs.xSleep = vSleep;
    cryptVfs.xCurrentTime = vCurrentTime;
    cryptVfs.xGetLastError = vGetLastError;
    cryptVfs.xCurrentTimeInt64 = vCurrentTimeInt64;
    cryptVfs.xSetSystemCall = vSetSystemCall;
    cryptVfs.xGetSystemCall = vGetSystemCall;
    cryptVfs.xNextSystemCall = vNextSystemCall;
    registerResult = sqlite3_vfs_register(&cryptVfs, 1);
}

int shoal_crypt_register(void) {
    pthread_once(&registerOnce, registerNow);
    return registerResult;
}

