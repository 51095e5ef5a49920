#ifndef REPLICA_SQLITE_FAULTS_H
#define REPLICA_SQLITE_FAULTS_H

#include <stdint.h>

/// A fault-injecting SQLite VFS for tests: it wraps the default VFS and passes every call
/// through, except for files whose path starts with the armed prefix, where it makes the disk
/// full or fails one operation with a chosen result code. Installed once per process as the
/// default VFS (connections opened afterwards use it); disarmed, it changes nothing.

/// Which file operation an armed one-shot fault fails.
typedef enum {
    replica_fault_write = 0,
    replica_fault_read = 1,
    replica_fault_sync = 2,
} replica_fault_operation;

/// Makes the fault VFS the process's default VFS (idempotent). Returns SQLITE_OK or an error code.
int replica_faults_install(void);

/// Files under `prefix` see a full disk: writes that would grow those files by more than
/// `growth_budget` bytes in all fail with SQLITE_FULL (overwrites inside a file's size succeed,
/// as on a real full disk).
void replica_faults_arm_full_disk(const char *prefix, int64_t growth_budget);

/// Files under `prefix` fail one operation: the `(skip + 1)`-th `operation` after arming returns
/// `result_code`; every operation before and after it succeeds.
void replica_faults_arm_once(const char *prefix, replica_fault_operation operation, int64_t skip, int result_code);

/// Files under `prefix` fail from an operation on: the `(skip + 1)`-th `operation` after arming
/// and every one after it return `result_code` (SQLite retries a busy lock; this one stays).
void replica_faults_arm_from(const char *prefix, replica_fault_operation operation, int64_t skip, int result_code);

/// Ends any fault; returns how many operations failed since the last arming.
int64_t replica_faults_disarm(void);

#endif
