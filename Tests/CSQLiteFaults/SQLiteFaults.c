#include "SQLiteFaults.h"

#include <pthread.h>
#include <sqlite3.h>
#include <string.h>

typedef struct {
    sqlite3_file base;
    char path[1024];
    sqlite3_file *real; /* the wrapped VFS's file, allocated right after this struct */
} FaultFile;

enum { mode_off = 0, mode_full = 1, mode_once = 2 };

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static sqlite3_vfs *underlying = NULL;
static sqlite3_vfs fault_vfs;
static int installed = 0;

static char armed_prefix[1024];
static size_t armed_prefix_length = 0;
static int mode = mode_off;
static int64_t growth_left = 0;
static replica_fault_operation once_operation = replica_fault_write;
static int64_t once_skip = 0;
static int once_code = SQLITE_IOERR;
static int once_stays = 0;
static int64_t fired = 0;

static int watched(const FaultFile *file) {
    return mode != mode_off && armed_prefix_length > 0 && strncmp(file->path, armed_prefix, armed_prefix_length) == 0;
}

/* The code the operation fails with, or SQLITE_OK. Called with the lock held. */
static int one_shot(const FaultFile *file, replica_fault_operation operation) {
    if (mode != mode_once || !watched(file) || operation != once_operation) return SQLITE_OK;
    if (once_skip > 0) {
        once_skip -= 1;
        return SQLITE_OK;
    }
    if (!once_stays) mode = mode_off;
    fired += 1;
    return once_code;
}

static int fault_close(sqlite3_file *file) {
    FaultFile *p = (FaultFile *)file;
    return p->real->pMethods->xClose(p->real);
}

static int fault_read(sqlite3_file *file, void *buffer, int amount, sqlite3_int64 offset) {
    FaultFile *p = (FaultFile *)file;
    pthread_mutex_lock(&lock);
    int code = one_shot(p, replica_fault_read);
    pthread_mutex_unlock(&lock);
    if (code != SQLITE_OK) return code;
    return p->real->pMethods->xRead(p->real, buffer, amount, offset);
}

static int fault_write(sqlite3_file *file, const void *buffer, int amount, sqlite3_int64 offset) {
    FaultFile *p = (FaultFile *)file;
    pthread_mutex_lock(&lock);
    int code = one_shot(p, replica_fault_write);
    if (code == SQLITE_OK && mode == mode_full && watched(p)) {
        sqlite3_int64 size = 0;
        if (p->real->pMethods->xFileSize(p->real, &size) != SQLITE_OK) size = 0;
        sqlite3_int64 growth = offset + amount > size ? offset + amount - size : 0;
        if (growth > growth_left) {
            fired += 1;
            code = SQLITE_FULL;
        } else {
            growth_left -= growth;
        }
    }
    pthread_mutex_unlock(&lock);
    if (code != SQLITE_OK) return code;
    return p->real->pMethods->xWrite(p->real, buffer, amount, offset);
}

static int fault_truncate(sqlite3_file *file, sqlite3_int64 size) {
    FaultFile *p = (FaultFile *)file;
    return p->real->pMethods->xTruncate(p->real, size);
}

static int fault_sync(sqlite3_file *file, int flags) {
    FaultFile *p = (FaultFile *)file;
    pthread_mutex_lock(&lock);
    int code = one_shot(p, replica_fault_sync);
    pthread_mutex_unlock(&lock);
    if (code != SQLITE_OK) return code;
    return p->real->pMethods->xSync(p->real, flags);
}

static int fault_file_size(sqlite3_file *file, sqlite3_int64 *size) {
    FaultFile *p = (FaultFile *)file;
    return p->real->pMethods->xFileSize(p->real, size);
}

static int fault_lock(sqlite3_file *file, int level) {
    FaultFile *p = (FaultFile *)file;
    return p->real->pMethods->xLock(p->real, level);
}

static int fault_unlock(sqlite3_file *file, int level) {
    FaultFile *p = (FaultFile *)file;
    return p->real->pMethods->xUnlock(p->real, level);
}

static int fault_check_reserved_lock(sqlite3_file *file, int *out) {
    FaultFile *p = (FaultFile *)file;
    return p->real->pMethods->xCheckReservedLock(p->real, out);
}

static int fault_file_control(sqlite3_file *file, int op, void *argument) {
    FaultFile *p = (FaultFile *)file;
    return p->real->pMethods->xFileControl(p->real, op, argument);
}

static int fault_sector_size(sqlite3_file *file) {
    FaultFile *p = (FaultFile *)file;
    return p->real->pMethods->xSectorSize(p->real);
}

static int fault_device_characteristics(sqlite3_file *file) {
    FaultFile *p = (FaultFile *)file;
    return p->real->pMethods->xDeviceCharacteristics(p->real);
}

static int fault_shm_map(sqlite3_file *file, int page, int size, int extend, void volatile **out) {
    FaultFile *p = (FaultFile *)file;
    return p->real->pMethods->xShmMap(p->real, page, size, extend, out);
}

static int fault_shm_lock(sqlite3_file *file, int offset, int n, int flags) {
    FaultFile *p = (FaultFile *)file;
    return p->real->pMethods->xShmLock(p->real, offset, n, flags);
}

static void fault_shm_barrier(sqlite3_file *file) {
    FaultFile *p = (FaultFile *)file;
    p->real->pMethods->xShmBarrier(p->real);
}

static int fault_shm_unmap(sqlite3_file *file, int delete_flag) {
    FaultFile *p = (FaultFile *)file;
    return p->real->pMethods->xShmUnmap(p->real, delete_flag);
}

static int fault_fetch(sqlite3_file *file, sqlite3_int64 offset, int amount, void **out) {
    FaultFile *p = (FaultFile *)file;
    /* No memory-mapped reads: every read goes through fault_read. */
    (void)p; (void)offset; (void)amount;
    *out = NULL;
    return SQLITE_OK;
}

static int fault_unfetch(sqlite3_file *file, sqlite3_int64 offset, void *pointer) {
    (void)file; (void)offset; (void)pointer;
    return SQLITE_OK;
}

static const sqlite3_io_methods fault_methods = {
    3,
    fault_close,
    fault_read,
    fault_write,
    fault_truncate,
    fault_sync,
    fault_file_size,
    fault_lock,
    fault_unlock,
    fault_check_reserved_lock,
    fault_file_control,
    fault_sector_size,
    fault_device_characteristics,
    fault_shm_map,
    fault_shm_lock,
    fault_shm_barrier,
    fault_shm_unmap,
    fault_fetch,
    fault_unfetch,
};

static int fault_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *file, int flags, int *out_flags) {
    (void)vfs;
    FaultFile *p = (FaultFile *)file;
    memset(p, 0, sizeof(FaultFile));
    p->real = (sqlite3_file *)&p[1];
    if (name) {
        strncpy(p->path, name, sizeof(p->path) - 1);
    }
    int code = underlying->xOpen(underlying, name, p->real, flags, out_flags);
    if (code != SQLITE_OK || p->real->pMethods == NULL) {
        p->base.pMethods = NULL;
        return code;
    }
    p->base.pMethods = &fault_methods;
    return SQLITE_OK;
}

static int fault_delete(sqlite3_vfs *vfs, const char *name, int sync_dir) {
    (void)vfs;
    return underlying->xDelete(underlying, name, sync_dir);
}

static int fault_access(sqlite3_vfs *vfs, const char *name, int flags, int *out) {
    (void)vfs;
    return underlying->xAccess(underlying, name, flags, out);
}

static int fault_full_pathname(sqlite3_vfs *vfs, const char *name, int size, char *out) {
    (void)vfs;
    return underlying->xFullPathname(underlying, name, size, out);
}

static void *fault_dl_open(sqlite3_vfs *vfs, const char *name) {
    (void)vfs;
    return underlying->xDlOpen(underlying, name);
}

static void fault_dl_error(sqlite3_vfs *vfs, int size, char *out) {
    (void)vfs;
    underlying->xDlError(underlying, size, out);
}

static void (*fault_dl_sym(sqlite3_vfs *vfs, void *handle, const char *symbol))(void) {
    (void)vfs;
    return underlying->xDlSym(underlying, handle, symbol);
}

static void fault_dl_close(sqlite3_vfs *vfs, void *handle) {
    (void)vfs;
    underlying->xDlClose(underlying, handle);
}

static int fault_randomness(sqlite3_vfs *vfs, int size, char *out) {
    (void)vfs;
    return underlying->xRandomness(underlying, size, out);
}

static int fault_sleep(sqlite3_vfs *vfs, int microseconds) {
    (void)vfs;
    return underlying->xSleep(underlying, microseconds);
}

static int fault_current_time(sqlite3_vfs *vfs, double *out) {
    (void)vfs;
    return underlying->xCurrentTime(underlying, out);
}

static int fault_get_last_error(sqlite3_vfs *vfs, int size, char *out) {
    (void)vfs;
    return underlying->xGetLastError ? underlying->xGetLastError(underlying, size, out) : 0;
}

static int fault_current_time_int64(sqlite3_vfs *vfs, sqlite3_int64 *out) {
    (void)vfs;
    return underlying->xCurrentTimeInt64(underlying, out);
}

int replica_faults_install(void) {
    pthread_mutex_lock(&lock);
    if (installed) {
        pthread_mutex_unlock(&lock);
        return SQLITE_OK;
    }
    underlying = sqlite3_vfs_find(NULL);
    if (underlying == NULL || underlying->iVersion < 2) {
        pthread_mutex_unlock(&lock);
        return SQLITE_ERROR;
    }
    memset(&fault_vfs, 0, sizeof(fault_vfs));
    fault_vfs.iVersion = 2;
    fault_vfs.szOsFile = (int)sizeof(FaultFile) + underlying->szOsFile;
    fault_vfs.mxPathname = underlying->mxPathname;
    fault_vfs.zName = "replica-faults";
    fault_vfs.xOpen = fault_open;
    fault_vfs.xDelete = fault_delete;
    fault_vfs.xAccess = fault_access;
    fault_vfs.xFullPathname = fault_full_pathname;
    fault_vfs.xDlOpen = fault_dl_open;
    fault_vfs.xDlError = fault_dl_error;
    fault_vfs.xDlSym = fault_dl_sym;
    fault_vfs.xDlClose = fault_dl_close;
    fault_vfs.xRandomness = fault_randomness;
    fault_vfs.xSleep = fault_sleep;
    fault_vfs.xCurrentTime = fault_current_time;
    fault_vfs.xGetLastError = fault_get_last_error;
    fault_vfs.xCurrentTimeInt64 = fault_current_time_int64;
    int code = sqlite3_vfs_register(&fault_vfs, 1);
    if (code == SQLITE_OK) installed = 1;
    pthread_mutex_unlock(&lock);
    return code;
}

static void set_prefix(const char *prefix) {
    strncpy(armed_prefix, prefix, sizeof(armed_prefix) - 1);
    armed_prefix[sizeof(armed_prefix) - 1] = 0;
    armed_prefix_length = strlen(armed_prefix);
}

void replica_faults_arm_full_disk(const char *prefix, int64_t growth_budget) {
    pthread_mutex_lock(&lock);
    set_prefix(prefix);
    mode = mode_full;
    growth_left = growth_budget;
    fired = 0;
    pthread_mutex_unlock(&lock);
}

static void arm(const char *prefix, replica_fault_operation operation, int64_t skip, int result_code, int stays) {
    pthread_mutex_lock(&lock);
    set_prefix(prefix);
    mode = mode_once;
    once_stays = stays;
    once_operation = operation;
    once_skip = skip;
    once_code = result_code;
    fired = 0;
    pthread_mutex_unlock(&lock);
}

void replica_faults_arm_once(const char *prefix, replica_fault_operation operation, int64_t skip, int result_code) {
    arm(prefix, operation, skip, result_code, 0);
}

void replica_faults_arm_from(const char *prefix, replica_fault_operation operation, int64_t skip, int result_code) {
    arm(prefix, operation, skip, result_code, 1);
}

int64_t replica_faults_disarm(void) {
    pthread_mutex_lock(&lock);
    mode = mode_off;
    armed_prefix_length = 0;
    int64_t count = fired;
    fired = 0;
    pthread_mutex_unlock(&lock);
    return count;
}
