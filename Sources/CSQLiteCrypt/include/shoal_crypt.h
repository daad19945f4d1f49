#ifndef SHOAL_CRYPT_H
#define SHOAL_CRYPT_H

/*
 * An encrypting SQLite VFS shim over the default ("unix") VFS.
 *
 * A database whose path has a key registered (shoal_crypt_set_key) is kept
 * encrypted on disk: every page of the main file and every page image of its
 * WAL is sealed with AES-256-GCM (a fresh random nonce per write); the nonce,
 * the tag, a key check value, the passphrase salt and a format marker live in
 * the page's last SHOAL_CRYPT_RESERVE bytes, which SQLite is told to reserve.
 * Rollback journals and temporary files are encrypted with AES-256-CTR.
 * Databases without a key pass straight through to the unix VFS, except that every
 * WAL file (plain or encrypted) gets a write buffer: see shoal_wal_buffer.c.
 * The format is described in docs/storage.md ("Encryption at rest").
 */

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Page size of an encrypted database (SQLite's default). */
#define SHOAL_CRYPT_PAGE 4096
/** Bytes reserved at the end of every page: nonce 12, tag 16, key check 16, salt 16, marker 4. */
#define SHOAL_CRYPT_RESERVE 64
#define SHOAL_CRYPT_KEY 32
#define SHOAL_CRYPT_SALT 16

/** What a database file holds, as seen by shoal_crypt_probe. */
typedef enum {
    SHOAL_PROBE_MISSING = 0,     /* no file, or an empty one: a new database */
    SHOAL_PROBE_PLAIN = 1,       /* an unencrypted SQLite database */
    SHOAL_PROBE_OK = 2,          /* encrypted, and the key opens it */
    SHOAL_PROBE_NEEDS_KEY = 3,   /* encrypted, and no key was given (salt filled in) */
    SHOAL_PROBE_WRONG_KEY = 4,   /* encrypted with another key */
    SHOAL_PROBE_CORRUPT = 5,     /* the key is right but page 1 fails authentication */
    SHOAL_PROBE_TRUNCATED = 6,   /* shorter than one page, or not a whole number of pages */
    SHOAL_PROBE_UNKNOWN = 7,     /* neither SQLite nor a Shoal encrypted database */
    SHOAL_PROBE_IO_ERROR = -1
} shoal_probe_result;

/** Installs the VFS as SQLite's default (once; later calls do nothing). Returns an SQLite result code. */
int shoal_crypt_register(void);

/**
 * Opens `path` (a main database file, created or not) encrypted with `key`
 * (32 bytes) from now on; `salt` (16 bytes, may be NULL for zeros) is stored
 * in every page so that a passphrase can be turned into the key again.
 * Replaces an earlier key of the same path. Returns an SQLite result code.
 */
int shoal_crypt_set_key(const char *path, const unsigned char *key, const unsigned char *salt);

/** Forgets the key of `path` (files already open keep theirs). */
void shoal_crypt_remove_key(const char *path);

/**
 * Looks at page 1 of `path` without SQLite: plain, encrypted (and with which
 * salt), whether `key` (NULL: none) is the right one, truncated or corrupt.
 */
int shoal_crypt_probe(const char *path, const unsigned char *key, unsigned char *salt_out);

/** Writes the 16-byte key check value of `key` into `out`. */
void shoal_crypt_key_check(const unsigned char *key, unsigned char *out);

/** Fills `out` with `count` cryptographically random bytes; 0 on success. */
int shoal_crypt_random(unsigned char *out, int count);

/** Page writes sealed since the process started (all databases). */
unsigned long long shoal_crypt_pages_sealed(void);

struct sqlite3;

/**
 * The WAL write buffer (every WAL file opened through this VFS, plain or encrypted): for
 * the WAL file of connection `db`, the writes SQLite asked for against the writes that
 * reached the file since it was opened (returns 0 when `db` has no buffered WAL).
 */
int shoal_wal_buffer_connection_stats(struct sqlite3 *db, unsigned long long *taken, unsigned long long *issued);

#ifdef __cplusplus
}
#endif

#endif
