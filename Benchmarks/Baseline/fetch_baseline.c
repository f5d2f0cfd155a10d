// The fetch benchmark's baseline: the SQL Graft runs for the benchmark's fetch, with libsqlite3 directly.
//
//   fetch_baseline STORE FIRST_ID LIMIT RUNS
//
// Each run reads the employees with ZEMPLOYEEID >= FIRST_ID in ZEMPLOYEEID order, LIMIT rows, every
// column of each row copied out (text and blobs into memory of their own, as an object would hold
// them), then reads the row of each distinct department and manager those employees refer to, once
// each, every column copied out likewise. Statements are prepared once, before the runs; the copies are
// freed after each run's timer stops. Prints the
// time of every run, the rows read and the median time of a run, in microseconds:
// "times_us=T1,T2,… cpu_us=C1,C2,… rows=N related=M median_us=T" (cpu: the thread's processor time).

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

// Processor time of this thread: what a run costs, whatever else the machine is running.
static double cpu_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

// Copies every column of the current row, as a decoder filling an object would.
static void copy_row(sqlite3_stmt *statement, void **scratch, int *scratch_count) {
    int columns = sqlite3_column_count(statement);
    for (int i = 0; i < columns; i++) {
        switch (sqlite3_column_type(statement, i)) {
        case SQLITE_INTEGER: (void)sqlite3_column_int64(statement, i); break;
        case SQLITE_FLOAT: (void)sqlite3_column_double(statement, i); break;
        case SQLITE_TEXT:
        case SQLITE_BLOB: {
            const void *bytes = sqlite3_column_type(statement, i) == SQLITE_TEXT
                ? (const void *)sqlite3_column_text(statement, i) : sqlite3_column_blob(statement, i);
            int size = sqlite3_column_bytes(statement, i);
            void *copy = malloc((size_t)size + 1);
            memcpy(copy, bytes, (size_t)size);
            scratch[(*scratch_count)++] = copy;
            break;
        }
        default: break;
        }
    }
}

static int column_index(sqlite3_stmt *statement, const char *name) {
    for (int i = 0; i < sqlite3_column_count(statement); i++) {
        if (strcmp(sqlite3_column_name(statement, i), name) == 0) return i;
    }
    return -1;
}

static int compare_doubles(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int seen(sqlite3_int64 *keys, int count, sqlite3_int64 key) {
    for (int i = 0; i < count; i++) {
        if (keys[i] == key) return 1;
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: fetch_baseline STORE FIRST_ID LIMIT RUNS\n");
        return 64;
    }
    sqlite3 *db;
    if (sqlite3_open_v2(argv[1], &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        fprintf(stderr, "cannot open %s\n", argv[1]);
        return 1;
    }
    sqlite3_int64 first = atoll(argv[2]);
    int limit = atoi(argv[3]), runs = atoi(argv[4]);
    sqlite3_stmt *fetch, *department, *manager;
    if (sqlite3_prepare_v2(db,
            "SELECT * FROM ZEMPLOYEE t WHERE (t.ZEMPLOYEEID >= ?) ORDER BY t.ZEMPLOYEEID ASC, t.Z_PK LIMIT ?", -1,
            &fetch, NULL) != SQLITE_OK
        || sqlite3_prepare_v2(db, "SELECT * FROM ZDEPARTMENT t WHERE t.Z_PK = ?", -1, &department, NULL) != SQLITE_OK
        || sqlite3_prepare_v2(db, "SELECT * FROM ZEMPLOYEE t WHERE t.Z_PK = ?", -1, &manager, NULL) != SQLITE_OK) {
        fprintf(stderr, "cannot prepare: %s\n", sqlite3_errmsg(db));
        return 1;
    }
    int department_column = column_index(fetch, "ZDEPARTMENT"), manager_column = column_index(fetch, "ZMANAGER");
    if (department_column < 0 || manager_column < 0) {
        fprintf(stderr, "the store has no ZDEPARTMENT or ZMANAGER column\n");
        return 1;
    }
    double *times = calloc((size_t)runs, sizeof(double));
    double *cpu = calloc((size_t)runs, sizeof(double));
    void **scratch = malloc(sizeof(void *) * (size_t)(limit * 3 + 16) * 32);
    sqlite3_int64 *departments = malloc(sizeof(sqlite3_int64) * (size_t)limit);
    sqlite3_int64 *managers = malloc(sizeof(sqlite3_int64) * (size_t)limit);
    int rows = 0, related = 0;
    for (int run = 0; run < runs; run++) {
        int scratch_count = 0, department_count = 0, manager_count = 0;
        double start = now_us(), cpu_start = cpu_us();
        rows = 0;
        related = 0;
        sqlite3_int64 *department_keys = malloc(sizeof(sqlite3_int64) * (size_t)limit);
        sqlite3_int64 *manager_keys = malloc(sizeof(sqlite3_int64) * (size_t)limit);
        sqlite3_bind_int64(fetch, 1, first);
        sqlite3_bind_int(fetch, 2, limit);
        while (sqlite3_step(fetch) == SQLITE_ROW) {
            copy_row(fetch, scratch, &scratch_count);
            department_keys[rows] = sqlite3_column_type(fetch, department_column) == SQLITE_NULL
                ? 0 : sqlite3_column_int64(fetch, department_column);
            manager_keys[rows] = sqlite3_column_type(fetch, manager_column) == SQLITE_NULL
                ? 0 : sqlite3_column_int64(fetch, manager_column);
            rows++;
        }
        sqlite3_reset(fetch);
        // Fault in each related object once, as a context's uniquing does.
        for (int i = 0; i < rows; i++) {
            sqlite3_int64 key = department_keys[i];
            if (key && !seen(departments, department_count, key)) {
                departments[department_count++] = key;
                sqlite3_bind_int64(department, 1, key);
                if (sqlite3_step(department) == SQLITE_ROW) {
                    copy_row(department, scratch, &scratch_count);
                    related++;
                }
                sqlite3_reset(department);
            }
            key = manager_keys[i];
            if (key && !seen(managers, manager_count, key)) {
                managers[manager_count++] = key;
                sqlite3_bind_int64(manager, 1, key);
                if (sqlite3_step(manager) == SQLITE_ROW) {
                    copy_row(manager, scratch, &scratch_count);
                    related++;
                }
                sqlite3_reset(manager);
            }
        }
        times[run] = now_us() - start;
        cpu[run] = cpu_us() - cpu_start;
        // The copies are freed after the timer stops, as Graft's context is torn down after its own.
        for (int i = 0; i < scratch_count; i++) free(scratch[i]);
        free(department_keys);
        free(manager_keys);
    }
    printf("times_us=");
    for (int run = 0; run < runs; run++) printf(run ? ",%.1f" : "%.1f", times[run]);
    printf(" cpu_us=");
    for (int run = 0; run < runs; run++) printf(run ? ",%.1f" : "%.1f", cpu[run]);
    qsort(times, (size_t)runs, sizeof(double), compare_doubles);
    printf(" rows=%d related=%d median_us=%.0f\n", rows, related, times[runs / 2]);
    sqlite3_finalize(fetch);
    sqlite3_finalize(department);
    sqlite3_finalize(manager);
    sqlite3_close(db);
    return 0;
}
