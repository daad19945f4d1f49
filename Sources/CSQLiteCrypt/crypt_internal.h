/*
 * Shared by the two halves of the encrypting VFS: the page format (shoal_crypt_pages.c)
 * and the VFS itself (shoal_crypt.c). Not part of the module's public header.
 */
#ifndef SHOAL_CRYPT_INTERNAL_H
#define SHOAL_CRYPT_INTERNAL_H

#include "shoal_crypt.h"

#include <fcntl.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#define PAGE SHOAL_CRYPT_PAGE
#define RESERVE SHOAL_CRYPT_RESERVE
#define BODY (PAGE - RESERVE)
#define T_NONCE 0
#define T_TAG 12
#define T_CHECK 28
#define T_SALT 44
#define T_MARK 60
#define WAL_HEADER 32
#define FRAME_HEADER 24
#define FRAME (FRAME_HEADER + PAGE)

extern const char shoalJournalLabel[];

enum { KIND_MAIN = 1, KIND_WAL = 2, KIND_STREAM = 3 };

/* A key as installed for one database path (a copy is kept by each open file). */
typedef struct KeyEntry {
    char *path;
    unsigned char key[SHOAL_CRYPT_KEY];
    unsigned char salt[SHOAL_CRYPT_SALT];
    unsigned char check[16];
    struct KeyEntry *next;
} KeyEntry;


enum { OPEN_OK = 0, OPEN_ZERO = 1, OPEN_WRONG_KEY = 2, OPEN_FAILED = 3 };

int shoal_crypt_all_zero(const unsigned char *bytes, int count);
int shoal_crypt_seal_page(EVP_CIPHER_CTX *ctx, const KeyEntry *key, int kind, uint64_t index,
                          const unsigned char *in, unsigned char *out);
int shoal_crypt_open_page(EVP_CIPHER_CTX *ctx, const KeyEntry *key, int kind, uint64_t index,
                          const unsigned char *in, unsigned char *out);
int shoal_crypt_stream(EVP_CIPHER_CTX *ctx, const unsigned char *key, sqlite3_int64 offset,
                       const unsigned char *in, unsigned char *out, int count);

/* What both file wrappers start with (shoal_shim.c): SQLite's file and the file it wraps;
 * and the methods they share, which go straight to that file or refuse memory mapping. */
typedef struct ShimFile {
    sqlite3_file base;
    sqlite3_file *real;
} ShimFile;
#define SHIM_REAL(f) (((ShimFile *)(f))->real)
int shoal_shim_lock(sqlite3_file *f, int level);
int shoal_shim_unlock(sqlite3_file *f, int level);
int shoal_shim_check_reserved_lock(sqlite3_file *f, int *out);
int shoal_shim_sector_size(sqlite3_file *f);
int shoal_shim_shm_map(sqlite3_file *f, int region, int size, int extend, void volatile **out);
int shoal_shim_shm_lock(sqlite3_file *f, int offset, int count, int flags);
void shoal_shim_shm_barrier(sqlite3_file *f);
int shoal_shim_shm_unmap(sqlite3_file *f, int deleteFlag);
int shoal_shim_no_fetch(sqlite3_file *f, sqlite3_int64 offset, int amount, void **out);
int shoal_shim_no_unfetch(sqlite3_file *f, sqlite3_int64 offset, void *page);

/* The WAL write buffer (shoal_wal_buffer.c): the bytes of a run it holds at most (the
 * unix VFS writes at most 0x1ffff bytes per call and reports a longer write as a full
 * disk), the size of its file object (the wrapped file follows it), and its xOpen. */
#define SHOAL_WAL_BUFFER_BYTES (31 * 4096)
size_t shoal_wal_buffer_file_size(void);
/* The file an encrypted file wraps, or `file` itself when it is not encrypted. */
sqlite3_file *shoal_crypt_inner_file(sqlite3_file *file);
int shoal_wal_buffer_open(sqlite3_vfs *vfs, sqlite3_filename name, sqlite3_file *file, int flags, int *outFlags);

#endif
