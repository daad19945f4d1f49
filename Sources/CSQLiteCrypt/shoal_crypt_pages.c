/*
 * The page format of Shoal's encrypting VFS: sealing and opening pages (AES-256-GCM),
 * the stream cipher of journals and temporary files (AES-256-CTR), the key check, and
 * the probe that reads page 1 without SQLite. See include/shoal_crypt.h and
 * docs/storage.md ("Encryption at rest").
 *
 * A sealed page: bytes [0, PAGE-RESERVE) are ciphertext, the trailer holds
 * nonce(12) tag(16) keycheck(16) salt(16) "SHE1". The additional data is the
 * page's place (kind and index), so pages cannot be moved around unnoticed.
 */
#include "crypt_internal.h"

static const unsigned char marker[4] = {'S', 'H', 'E', '1'};
static const char checkLabel[] = "shoal-encryption-key-check-v1";
const char shoalJournalLabel[] = "shoal-encryption-journal-v1";
static unsigned long long pagesSealed = 0;

void shoal_crypt_key_check(const unsigned char *key, unsigned char *out) {
    unsigned char mac[32];
    unsigned int length = sizeof(mac);
    HMAC(EVP_sha256(), key, SHOAL_CRYPT_KEY, (const unsigned char *)checkLabel, sizeof(checkLabel) - 1, mac, &length);
    memcpy(out, mac, 16);
    OPENSSL_cleanse(mac, sizeof(mac));
}

int shoal_crypt_random(unsigned char *out, int count) {
    return RAND_bytes(out, count) == 1 ? 0 : -1;
}

unsigned long long shoal_crypt_pages_sealed(void) {
    return __atomic_load_n(&pagesSealed, __ATOMIC_RELAXED);
}

/* ---- page sealing --------------------------------------------------------- */

static void placeData(unsigned char aad[8], int kind, uint64_t index) {
    uint64_t value = index | ((uint64_t)kind << 56);
    for (int i = 0; i < 8; i++) aad[i] = (unsigned char)(value >> (8 * i));
}

/* Seals plaintext page `in` into `out`. Returns SQLITE_OK or an I/O error code. */
int shoal_crypt_seal_page(EVP_CIPHER_CTX *ctx, const KeyEntry *key, int kind, uint64_t index,
                    const unsigned char *in, unsigned char *out) {
    unsigned char aad[8];
    unsigned char *trailer = out + BODY;
    int length = 0;
    placeData(aad, kind, index);
    if (RAND_bytes(trailer + T_NONCE, 12) != 1) return SQLITE_IOERR_WRITE;
    if (EVP_EncryptInit_ex(ctx, EVP_aes_256_gcm(), NULL, key->key, trailer + T_NONCE) != 1 ||
        EVP_EncryptUpdate(ctx, NULL, &length, aad, sizeof(aad)) != 1 ||
        EVP_EncryptUpdate(ctx, out, &length, in, BODY) != 1 ||
        EVP_EncryptFinal_ex(ctx, out + length, &length) != 1 ||
        EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, 16, trailer + T_TAG) != 1) {
        return SQLITE_IOERR_WRITE;
    }
    memcpy(trailer + T_CHECK, key->check, 16);
    memcpy(trailer + T_SALT, key->salt, SHOAL_CRYPT_SALT);
    memcpy(trailer + T_MARK, marker, 4);
    __atomic_add_fetch(&pagesSealed, 1, __ATOMIC_RELAXED);
    return SQLITE_OK;
}


int shoal_crypt_all_zero(const unsigned char *bytes, int count) {
    for (int i = 0; i < count; i++) if (bytes[i]) return 0;
    return 1;
}

/* Opens sealed page `in` into `out` (PAGE bytes, reserved area zeroed). */
int shoal_crypt_open_page(EVP_CIPHER_CTX *ctx, const KeyEntry *key, int kind, uint64_t index,
                    const unsigned char *in, unsigned char *out) {
    const unsigned char *trailer = in + BODY;
    unsigned char aad[8];
    unsigned char tag[16];
    int length = 0;
    if (shoal_crypt_all_zero(in, PAGE)) {
        memset(out, 0, PAGE);
        return OPEN_ZERO;
    }
    if (memcmp(trailer + T_MARK, marker, 4) != 0) return OPEN_FAILED;
    if (CRYPTO_memcmp(trailer + T_CHECK, key->check, 16) != 0) return OPEN_WRONG_KEY;
    placeData(aad, kind, index);
    memcpy(tag, trailer + T_TAG, 16);
    if (EVP_DecryptInit_ex(ctx, EVP_aes_256_gcm(), NULL, key->key, trailer + T_NONCE) != 1 ||
        EVP_DecryptUpdate(ctx, NULL, &length, aad, sizeof(aad)) != 1 ||
        EVP_DecryptUpdate(ctx, out, &length, in, BODY) != 1 ||
        EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, 16, tag) != 1 ||
        EVP_DecryptFinal_ex(ctx, out + length, &length) != 1) {
        return OPEN_FAILED;
    }
    memset(out + BODY, 0, RESERVE);
    return OPEN_OK;
}

/* AES-256-CTR over bytes at file offset `offset` (encryption and decryption are the same). */
int shoal_crypt_stream(EVP_CIPHER_CTX *ctx, const unsigned char *key, sqlite3_int64 offset,
                        const unsigned char *in, unsigned char *out, int count) {
    unsigned char iv[16] = {0};
    unsigned char skip[16];
    uint64_t block = (uint64_t)offset / 16;
    int within = (int)((uint64_t)offset % 16);
    int length = 0;
    for (int i = 0; i < 8; i++) iv[15 - i] = (unsigned char)(block >> (8 * i));
    if (EVP_EncryptInit_ex(ctx, EVP_aes_256_ctr(), NULL, key, iv) != 1) return SQLITE_IOERR;
    if (within && EVP_EncryptUpdate(ctx, skip, &length, skip, within) != 1) return SQLITE_IOERR;
    if (count && EVP_EncryptUpdate(ctx, out, &length, in, count) != 1) return SQLITE_IOERR;
    return SQLITE_OK;
}

/* ---- probing a file without SQLite ------------------------------------------------- */

int shoal_crypt_probe(const char *path, const unsigned char *key, unsigned char *salt_out) {
    static const char sqliteMagic[16] = "SQLite format 3";
    unsigned char page[PAGE];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return SHOAL_PROBE_MISSING;
    off_t size = lseek(fd, 0, SEEK_END);
    if (size < 0) { close(fd); return SHOAL_PROBE_IO_ERROR; }
    if (size == 0) { close(fd); return SHOAL_PROBE_MISSING; }
    ssize_t got = pread(fd, page, size < PAGE ? (size_t)size : PAGE, 0);
    close(fd);
    if (got < 0) return SHOAL_PROBE_IO_ERROR;
    if (got >= 16 && memcmp(page, sqliteMagic, 16) == 0) return SHOAL_PROBE_PLAIN;
    if (size < PAGE) return SHOAL_PROBE_TRUNCATED;
    const unsigned char *trailer = page + BODY;
    if (memcmp(trailer + T_MARK, marker, 4) != 0) return SHOAL_PROBE_UNKNOWN;
    if (salt_out) memcpy(salt_out, trailer + T_SALT, SHOAL_CRYPT_SALT);
    if (!key) return SHOAL_PROBE_NEEDS_KEY;
    KeyEntry entry;
    memset(&entry, 0, sizeof(entry));
    memcpy(entry.key, key, SHOAL_CRYPT_KEY);
    shoal_crypt_key_check(key, entry.check);
    if (CRYPTO_memcmp(trailer + T_CHECK, entry.check, 16) != 0) {
        OPENSSL_cleanse(&entry, sizeof(entry));
        return SHOAL_PROBE_WRONG_KEY;
    }
    unsigned char plain[PAGE];
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    int opened = ctx ? shoal_crypt_open_page(ctx, &entry, KIND_MAIN, 0, page, plain) : OPEN_FAILED;
    if (ctx) EVP_CIPHER_CTX_free(ctx);
    OPENSSL_cleanse(&entry, sizeof(entry));
    OPENSSL_cleanse(plain, sizeof(plain));
    if (opened != OPEN_OK) return SHOAL_PROBE_CORRUPT;
    if (size % PAGE != 0) return SHOAL_PROBE_TRUNCATED;
    return SHOAL_PROBE_OK;
}
