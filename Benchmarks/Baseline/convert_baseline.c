/*
 * The baseline for Graft's conversion benchmark: the same raw work done directly with libsqlite3 and
 * libxml2, with no model, no snapshots and no checks.
 *
 *   convert_baseline sqlite-to-xml IN.sqlite OUT.xml   read every row, write Core Data-style XML
 *   convert_baseline xml-to-sqlite IN.xml OUT.sqlite   parse with SAX, insert rows with prepared
 *                                                      statements in one transaction, into the store
 *                                                      Core Data (and Graft) lays out for the model
 *   convert_baseline xml-to-sqlite-bare IN.xml OUT.sqlite   the same rows into the two entity tables
 *                                                      and their two to-one indexes only
 *
 * It knows the benchmark's Company document by heart: Department(name, code, budget) and Employee /
 * Manager(name, employeeID, salary, hireDate, isRemote, rating, department, manager).
 *
 * xml-to-sqlite writes what `graft convert` writes, the same way: Core Data's SQLite settings (4096-byte
 * pages, incremental auto-vacuum), every table of the Company model (ZPROJECT and the Z_2PROJECTS join
 * table included, empty here) with the same columns, Z_PRIMARYKEY with each entity's highest key,
 * a Z_METADATA row (a fixed metadata dictionary of the size Graft writes) and a Z_MODELCACHE row (fixed
 * bytes of the model cache's size); rows inserted with the journal off, then the seven indexes Core Data
 * declares built after the rows (with the same 8 MiB cache for sorting), WAL switched on at the end, and
 * the file built under a temporary name and renamed into place.
 */
#include <libxml/parser.h>
#include <libxml/SAX2.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void die(const char *what, const char *detail) {
    fprintf(stderr, "convert_baseline: %s: %s\n", what, detail ? detail : "");
    exit(1);
}

/* ---- SQLite to XML -------------------------------------------------------------------------- */

static void write_escaped(FILE *out, const unsigned char *text) {
    for (; *text; text++) {
        switch (*text) {
        case '&': fputs("&amp;", out); break;
        case '<': fputs("&lt;", out); break;
        case '>': fputs("&gt;", out); break;
        case '"': fputs("&quot;", out); break;
        default: fputc(*text, out);
        }
    }
}

static int sqlite_to_xml(const char *in, const char *outPath) {
    sqlite3 *db;
    if (sqlite3_open_v2(in, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) die("open", sqlite3_errmsg(db));
    FILE *out = fopen(outPath, "w");
    if (!out) die("create", outPath);
    setvbuf(out, NULL, _IOFBF, 1 << 20);
    fputs("<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n"
          "<!DOCTYPE database SYSTEM \"file:///System/Library/DTDs/CoreData.dtd\">\n\n<database>\n"
          "    <databaseInfo>\n        <version>134481920</version>\n    </databaseInfo>\n", out);

    /* Employees of each department, in key order, for the departments' to-many. */
    sqlite3_stmt *members;
    sqlite3_prepare_v2(db, "SELECT Z_PK FROM ZEMPLOYEE WHERE ZDEPARTMENT = ? ORDER BY Z_PK", -1, &members, NULL);
    sqlite3_stmt *reports;
    sqlite3_prepare_v2(db, "SELECT Z_PK FROM ZEMPLOYEE WHERE ZMANAGER = ? ORDER BY Z_PK", -1, &reports, NULL);

    sqlite3_stmt *departments;
    sqlite3_prepare_v2(db, "SELECT Z_PK, ZNAME, ZCODE, ZBUDGET FROM ZDEPARTMENT ORDER BY Z_PK", -1, &departments, NULL);
    while (sqlite3_step(departments) == SQLITE_ROW) {
        long long key = sqlite3_column_int64(departments, 0);
        fprintf(out, "    <object type=\"DEPARTMENT\" id=\"z%lld\">\n", key);
        fputs("        <attribute name=\"name\" type=\"string\">", out);
        write_escaped(out, sqlite3_column_text(departments, 1));
        fputs("</attribute>\n", out);
        fprintf(out, "        <attribute name=\"code\" type=\"int16\">%lld</attribute>\n", sqlite3_column_int64(departments, 2));
        fprintf(out, "        <attribute name=\"budget\" type=\"decimal\">%.17g</attribute>\n", sqlite3_column_double(departments, 3));
        fputs("        <relationship name=\"employees\" type=\"0/0\" destination=\"EMPLOYEE\" idrefs=\"", out);
        sqlite3_bind_int64(members, 1, key);
        int first = 1;
        while (sqlite3_step(members) == SQLITE_ROW) {
            fprintf(out, first ? "z%lld" : " z%lld", sqlite3_column_int64(members, 0) + 10000000LL);
            first = 0;
        }
        sqlite3_reset(members);
        fputs("\"></relationship>\n        <relationship name=\"projects\" type=\"0/0\" destination=\"PROJECT\"></relationship>\n"
              "    </object>\n", out);
    }
    sqlite3_finalize(departments);

    sqlite3_stmt *employees;
    sqlite3_prepare_v2(db, "SELECT Z_PK, Z_ENT, ZNAME, ZEMPLOYEEID, ZSALARY, ZHIREDATE, ZISREMOTE, ZRATING, ZDEPARTMENT, ZMANAGER "
                           "FROM ZEMPLOYEE ORDER BY Z_PK", -1, &employees, NULL);
    while (sqlite3_step(employees) == SQLITE_ROW) {
        long long key = sqlite3_column_int64(employees, 0);
        int isManager = sqlite3_column_int(employees, 1) == 4;
        fprintf(out, "    <object type=\"%s\" id=\"z%lld\">\n", isManager ? "MANAGER" : "EMPLOYEE", key + 10000000LL);
        fputs("        <attribute name=\"name\" type=\"string\">", out);
        write_escaped(out, sqlite3_column_text(employees, 2));
        fputs("</attribute>\n", out);
        fprintf(out, "        <attribute name=\"employeeid\" type=\"int64\">%lld</attribute>\n", sqlite3_column_int64(employees, 3));
        fprintf(out, "        <attribute name=\"salary\" type=\"decimal\">%.17g</attribute>\n", sqlite3_column_double(employees, 4));
        fprintf(out, "        <attribute name=\"hiredate\" type=\"date\">%.20f</attribute>\n", sqlite3_column_double(employees, 5));
        fprintf(out, "        <attribute name=\"isremote\" type=\"bool\">%d</attribute>\n", sqlite3_column_int(employees, 6));
        fprintf(out, "        <attribute name=\"rating\" type=\"float\">%.9g</attribute>\n", sqlite3_column_double(employees, 7));
        fprintf(out, "        <relationship name=\"department\" type=\"1/1\" destination=\"DEPARTMENT\" idrefs=\"z%lld\"></relationship>\n",
                sqlite3_column_int64(employees, 8));
        if (sqlite3_column_type(employees, 9) != SQLITE_NULL)
            fprintf(out, "        <relationship name=\"manager\" type=\"0/1\" destination=\"MANAGER\" idrefs=\"z%lld\"></relationship>\n",
                    sqlite3_column_int64(employees, 9) + 10000000LL);
        else
            fputs("        <relationship name=\"manager\" type=\"0/1\" destination=\"MANAGER\"></relationship>\n", out);
        fputs("        <relationship name=\"projects\" type=\"0/0\" destination=\"PROJECT\"></relationship>\n", out);
        if (isManager) {
            fputs("        <relationship name=\"directreports\" type=\"0/0\" destination=\"EMPLOYEE\" idrefs=\"", out);
            sqlite3_bind_int64(reports, 1, key);
            int first = 1;
            while (sqlite3_step(reports) == SQLITE_ROW) {
                fprintf(out, first ? "z%lld" : " z%lld", sqlite3_column_int64(reports, 0) + 10000000LL);
                first = 0;
            }
            sqlite3_reset(reports);
            fputs("\"></relationship>\n", out);
        }
        fputs("    </object>\n", out);
    }
    sqlite3_finalize(employees);
    sqlite3_finalize(members);
    sqlite3_finalize(reports);
    fputs("</database>\n", out);
    if (fclose(out) != 0) die("write", outPath);
    sqlite3_close(db);
    return 0;
}

/* ---- XML to SQLite -------------------------------------------------------------------------- */

enum { MAX_TEXT = 256 };

typedef struct {
    sqlite3 *db;
    sqlite3_stmt *department, *employee;
    int isDepartment, isManager;
    long long key;
    char name[MAX_TEXT], attribute[64], relationship[64];
    char text[MAX_TEXT];
    int textLength, inAttribute;
    long long code, employeeID, departmentKey, managerKey;
    double budget, salary, hireDate, rating;
    int isRemote;
    long long maxDepartment, maxEmployee;
} Loader;

static const char *attr(const xmlChar **attributes, int count, const char *name) {
    for (int i = 0; i < count; i++) {
        if (strcmp((const char *)attributes[i * 5], name) == 0) {
            static char value[MAX_TEXT];
            int length = (int)(attributes[i * 5 + 4] - attributes[i * 5 + 3]);
            if (length >= MAX_TEXT) length = MAX_TEXT - 1;
            memcpy(value, attributes[i * 5 + 3], length);
            value[length] = 0;
            return value;
        }
    }
    return NULL;
}

static long long id_value(const char *idref) { return idref && idref[0] == 'z' ? atoll(idref + 1) : 0; }

static void start(void *context, const xmlChar *localname, const xmlChar *prefix, const xmlChar *uri, int namespaces,
                  const xmlChar **ns, int count, int defaulted, const xmlChar **attributes) {
    Loader *loader = context;
    const char *name = (const char *)localname;
    if (strcmp(name, "object") == 0) {
        const char *type = attr(attributes, count, "type");
        loader->isDepartment = type && strcmp(type, "DEPARTMENT") == 0;
        loader->isManager = type && strcmp(type, "MANAGER") == 0;
        loader->key = id_value(attr(attributes, count, "id"));
        loader->managerKey = 0;
        loader->departmentKey = 0;
    } else if (strcmp(name, "attribute") == 0) {
        const char *attributeName = attr(attributes, count, "name");
        snprintf(loader->attribute, sizeof loader->attribute, "%s", attributeName ? attributeName : "");
        loader->textLength = 0;
        loader->inAttribute = 1;
    } else if (strcmp(name, "relationship") == 0) {
        /* attr() returns one static buffer: keep the name before looking up idrefs. */
        const char *found = attr(attributes, count, "name");
        char relationshipName[64];
        snprintf(relationshipName, sizeof relationshipName, "%s", found ? found : "");
        const char *idrefs = attr(attributes, count, "idrefs");
        if (found && idrefs) {
            if (strcmp(relationshipName, "department") == 0) loader->departmentKey = id_value(idrefs);
            if (strcmp(relationshipName, "manager") == 0) loader->managerKey = id_value(idrefs);
        }
    }
}

static void characters(void *context, const xmlChar *text, int length) {
    Loader *loader = context;
    if (!loader->inAttribute) return;
    if (loader->textLength + length >= MAX_TEXT) length = MAX_TEXT - 1 - loader->textLength;
    memcpy(loader->text + loader->textLength, text, length);
    loader->textLength += length;
}

static void end(void *context, const xmlChar *localname, const xmlChar *prefix, const xmlChar *uri) {
    Loader *loader = context;
    const char *name = (const char *)localname;
    if (strcmp(name, "attribute") == 0) {
        loader->text[loader->textLength] = 0;
        loader->inAttribute = 0;
        const char *a = loader->attribute;
        if (strcmp(a, "name") == 0) memcpy(loader->name, loader->text, loader->textLength + 1);
        else if (strcmp(a, "code") == 0) loader->code = atoll(loader->text);
        else if (strcmp(a, "budget") == 0) loader->budget = atof(loader->text);
        else if (strcmp(a, "employeeid") == 0) loader->employeeID = atoll(loader->text);
        else if (strcmp(a, "salary") == 0) loader->salary = atof(loader->text);
        else if (strcmp(a, "hiredate") == 0) loader->hireDate = atof(loader->text);
        else if (strcmp(a, "isremote") == 0) loader->isRemote = atoi(loader->text);
        else if (strcmp(a, "rating") == 0) loader->rating = (float)atof(loader->text); /* a Float attribute */
    } else if (strcmp(name, "object") == 0) {
        sqlite3_stmt *statement;
        if (loader->isDepartment) {
            statement = loader->department;
            sqlite3_bind_int64(statement, 1, loader->key);
            sqlite3_bind_text(statement, 2, loader->name, -1, SQLITE_STATIC);
            sqlite3_bind_int64(statement, 3, loader->code);
            sqlite3_bind_double(statement, 4, loader->budget);
        } else {
            statement = loader->employee;
            sqlite3_bind_int64(statement, 1, loader->key);
            sqlite3_bind_int(statement, 2, loader->isManager ? 4 : 2);
            sqlite3_bind_text(statement, 3, loader->name, -1, SQLITE_STATIC);
            sqlite3_bind_int64(statement, 4, loader->employeeID);
            sqlite3_bind_double(statement, 5, loader->salary);
            sqlite3_bind_double(statement, 6, loader->hireDate);
            sqlite3_bind_int(statement, 7, loader->isRemote);
            sqlite3_bind_double(statement, 8, loader->rating);
            sqlite3_bind_int64(statement, 9, loader->departmentKey);
            if (loader->managerKey) sqlite3_bind_int64(statement, 10, loader->managerKey);
            else sqlite3_bind_null(statement, 10);
        }
        if (sqlite3_step(statement) != SQLITE_DONE) die("insert", sqlite3_errmsg(loader->db));
        sqlite3_reset(statement);
        long long *max = loader->isDepartment ? &loader->maxDepartment : &loader->maxEmployee;
        if (loader->key > *max) *max = loader->key;
    }
}

/* Core Data's tables for the Company model, as Graft creates them (indexes come after the rows). */
static const char *const core_data_tables =
    "CREATE TABLE ZDEPARTMENT ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZCODE INTEGER, ZBUDGET DECIMAL,"
    " ZNAME VARCHAR );"
    "CREATE TABLE ZEMPLOYEE ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZEMPLOYEEID INTEGER, ZISREMOTE INTEGER,"
    " ZYEARSOFSERVICE INTEGER, ZDEPARTMENT INTEGER, ZMANAGER INTEGER, ZPARKINGSPOT INTEGER, ZHIREDATE TIMESTAMP,"
    " ZSALARY DECIMAL, ZRATING FLOAT, ZWORKLOAD FLOAT, ZEMAIL VARCHAR, ZHOMEPAGE VARCHAR, ZNAME VARCHAR,"
    " ZCOFFEEORDER VARCHAR, ZBADGE BLOB, ZPHOTO BLOB, ZPREFERENCES BLOB );"
    "CREATE TABLE ZPROJECT ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZDEPARTMENT INTEGER,"
    " Z_FOK_DEPARTMENT INTEGER, ZDEADLINE TIMESTAMP, ZTITLE VARCHAR );"
    "CREATE TABLE Z_2PROJECTS ( Z_2MEMBERS INTEGER, Z_5PROJECTS INTEGER, PRIMARY KEY (Z_2MEMBERS, Z_5PROJECTS) );"
    "CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER);"
    "CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB);"
    "CREATE TABLE Z_MODELCACHE (Z_CONTENT BLOB);";

static const char *const core_data_indexes =
    "CREATE INDEX ZEMPLOYEE_ZDEPARTMENT_INDEX ON ZEMPLOYEE (ZDEPARTMENT);"
    "CREATE INDEX ZEMPLOYEE_ZMANAGER_INDEX ON ZEMPLOYEE (ZMANAGER);"
    "CREATE INDEX ZEMPLOYEE_Z_ENT_INDEX ON ZEMPLOYEE (Z_ENT);"
    "CREATE INDEX ZPROJECT_ZDEPARTMENT_INDEX ON ZPROJECT (ZDEPARTMENT);"
    "CREATE INDEX Z_2PROJECTS_Z_5PROJECTS_INDEX ON Z_2PROJECTS (Z_5PROJECTS, Z_2MEMBERS);"
    "CREATE UNIQUE INDEX Z_Department_UNIQUE_name ON ZDEPARTMENT (ZNAME COLLATE BINARY ASC);"
    "CREATE UNIQUE INDEX Z_Employee_UNIQUE_employeeID ON ZEMPLOYEE (ZEMPLOYEEID COLLATE BINARY ASC);";

/* A Core Data metadata dictionary (binary property list) of the size Graft writes for this model. */
static const char *const metadata_hex =
    "62706C6973743030D80102030405060708090A0B0C0D0E0F105B4E5353746F7265547970655F10194E5353746F72654D6F64656C56657273"
    "696F6E4861736865735F10204E5353746F72654D6F64656C56657273696F6E48617368657356657273696F6E5F101F4E5353746F72654D6F"
    "64656C56657273696F6E4861736865734469676573745F101E4E5353746F72654D6F64656C56657273696F6E436865636B73756D4B65795F"
    "101E4E5353746F72654D6F64656C56657273696F6E4964656E746966696572735F101D4E5350657273697374656E63654672616D65776F72"
    "6B56657273696F6E5F10125F4E534175746F56616375756D4C6576656C5653514C697465D51112131415161718191A10035F10584473776C"
    "6533435549506E4742414161446466665668392F2B4347513878565A6D525A4B2B6A616A707155493672417A72327165485A654253433634"
    "4865745278506577346C664D2F776D2B5279686C5A33533676773D3D5F102C396C48764D696954784133466A747267375274306F48426962"
    "4637766341635243645941467874763946673DA11B11054051325A4465706172746D656E7458456D706C6F79656556466C756E6B79574D61"
    "6E616765725750726F6A6563744F1020FABB28F333DDC8E6A48E495FE3663CBA4AEF15A27915FBCA6C544B46DA6868034F1020AD15A816D5"
    "45079F1AB3F3E34F400D4F1E1C78CD35D0649ED416D428C19824084F1020490794082B8150DE536E1D367316E240B5E9068F7E685418140E"
    "1C51D7F1E6494F1020E1E6C6574572F21A956442E101C8A3E5FF638569EB0251413C5AA766343A23C04F1020B5A4DB27D33AC7F933FA0003"
    "442C1112E17781B82BFD493F1105B26048B18498513100080019002500410064008600A700C800E800FD0104010F0111016C019B019D01A0"
    "01A201AD01B601BD01C501CD01F0021302360259027C0000000000000201000000000000001C0000000000000000000000000000027E";

/* Bytes standing for the model cache: the size of Graft's for the Company model, as little compressible. */
enum { MODEL_CACHE_SIZE = 6067 };

static void exec(sqlite3 *db, const char *sql) {
    char *message = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &message) != SQLITE_OK) die("sql", message);
}

/* Z_PRIMARYKEY, Z_METADATA and Z_MODELCACHE, as Core Data fills them. */
static void write_bookkeeping(sqlite3 *db, long long maxDepartment, long long maxEmployee) {
    sqlite3_stmt *keys;
    sqlite3_prepare_v2(db, "INSERT INTO Z_PRIMARYKEY (Z_ENT, Z_NAME, Z_SUPER, Z_MAX) VALUES (?, ?, ?, ?)", -1, &keys, NULL);
    const char *names[] = {"Department", "Employee", "Flunky", "Manager", "Project"};
    const long long supers[] = {0, 0, 2, 2, 0};
    const long long maxima[] = {maxDepartment, maxEmployee, 0, 0, 0};
    for (int i = 0; i < 5; i++) {
        sqlite3_bind_int64(keys, 1, i + 1);
        sqlite3_bind_text(keys, 2, names[i], -1, SQLITE_STATIC);
        sqlite3_bind_int64(keys, 3, supers[i]);
        sqlite3_bind_int64(keys, 4, maxima[i]);
        if (sqlite3_step(keys) != SQLITE_DONE) die("insert", sqlite3_errmsg(db));
        sqlite3_reset(keys);
    }
    sqlite3_finalize(keys);

    size_t length = strlen(metadata_hex) / 2;
    unsigned char *plist = malloc(length);
    for (size_t i = 0; i < length; i++) {
        unsigned int byte;
        sscanf(metadata_hex + 2 * i, "%2x", &byte);
        plist[i] = (unsigned char)byte;
    }
    sqlite3_stmt *metadata;
    sqlite3_prepare_v2(db, "INSERT INTO Z_METADATA (Z_VERSION, Z_UUID, Z_PLIST) VALUES (1, ?, ?)", -1, &metadata, NULL);
    sqlite3_bind_text(metadata, 1, "E8616712-3E7D-4B0A-818D-FD2159847E5E", -1, SQLITE_STATIC);
    sqlite3_bind_blob(metadata, 2, plist, (int)length, SQLITE_STATIC);
    if (sqlite3_step(metadata) != SQLITE_DONE) die("insert", sqlite3_errmsg(db));
    sqlite3_finalize(metadata);
    free(plist);

    unsigned char cache[MODEL_CACHE_SIZE];
    unsigned int state = 2463534242u;
    for (int i = 0; i < MODEL_CACHE_SIZE; i++) {
        state ^= state << 13, state ^= state >> 17, state ^= state << 5;
        cache[i] = (unsigned char)state;
    }
    sqlite3_stmt *model;
    sqlite3_prepare_v2(db, "INSERT INTO Z_MODELCACHE (Z_CONTENT) VALUES (?)", -1, &model, NULL);
    sqlite3_bind_blob(model, 1, cache, MODEL_CACHE_SIZE, SQLITE_STATIC);
    if (sqlite3_step(model) != SQLITE_DONE) die("insert", sqlite3_errmsg(db));
    sqlite3_finalize(model);
}

static int xml_to_sqlite(const char *in, const char *out, int coreDataLayout) {
    Loader loader = {0};
    char temporary[4096];
    snprintf(temporary, sizeof temporary, "%s.baseline-tmp", out);
    remove(temporary);
    if (!coreDataLayout) remove(out);
    const char *path = coreDataLayout ? temporary : out;
    if (sqlite3_open(path, &loader.db) != SQLITE_OK) die("create", sqlite3_errmsg(loader.db));
    if (coreDataLayout) {
        exec(loader.db, "PRAGMA page_size = 4096; PRAGMA auto_vacuum = 2; PRAGMA journal_mode = OFF;"
                        " PRAGMA synchronous = OFF; BEGIN;");
        exec(loader.db, core_data_tables);
    } else {
        exec(loader.db, "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; BEGIN;"
                        "CREATE TABLE ZDEPARTMENT (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZCODE INTEGER,"
                        " ZBUDGET DECIMAL, ZNAME VARCHAR);"
                        "CREATE TABLE ZEMPLOYEE (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZEMPLOYEEID INTEGER,"
                        " ZISREMOTE INTEGER, ZDEPARTMENT INTEGER, ZMANAGER INTEGER, ZHIREDATE TIMESTAMP, ZSALARY DECIMAL,"
                        " ZRATING FLOAT, ZNAME VARCHAR);");
    }
    sqlite3_prepare_v2(loader.db, "INSERT INTO ZDEPARTMENT (Z_PK, Z_ENT, Z_OPT, ZNAME, ZCODE, ZBUDGET) VALUES (?, 1, 1, ?, ?, ?)",
                       -1, &loader.department, NULL);
    sqlite3_prepare_v2(loader.db, "INSERT INTO ZEMPLOYEE (Z_PK, Z_ENT, Z_OPT, ZNAME, ZEMPLOYEEID, ZSALARY, ZHIREDATE, ZISREMOTE, ZRATING,"
                                  " ZDEPARTMENT, ZMANAGER) VALUES (?, ?, 1, ?, ?, ?, ?, ?, ?, ?, ?)",
                       -1, &loader.employee, NULL);
    xmlSAXHandler handler;
    memset(&handler, 0, sizeof handler);
    handler.initialized = XML_SAX2_MAGIC;
    handler.startElementNs = start;
    handler.endElementNs = end;
    handler.characters = characters;
    if (xmlSAXUserParseFile(&handler, &loader, in) != 0) die("parse", in);
    sqlite3_finalize(loader.department);
    sqlite3_finalize(loader.employee);
    if (coreDataLayout) {
        write_bookkeeping(loader.db, loader.maxDepartment, loader.maxEmployee);
        exec(loader.db, "PRAGMA cache_size = -8192");
        exec(loader.db, core_data_indexes);
        exec(loader.db, "COMMIT; PRAGMA journal_mode = WAL;");
    } else {
        exec(loader.db, "CREATE INDEX ZEMPLOYEE_ZDEPARTMENT_INDEX ON ZEMPLOYEE (ZDEPARTMENT);"
                        "CREATE INDEX ZEMPLOYEE_ZMANAGER_INDEX ON ZEMPLOYEE (ZMANAGER); COMMIT;");
    }
    if (sqlite3_close(loader.db) != SQLITE_OK) die("close", out);
    if (coreDataLayout && rename(temporary, out) != 0) die("rename", out);
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 4) die("usage", "convert_baseline sqlite-to-xml|xml-to-sqlite|xml-to-sqlite-bare IN OUT");
    if (strcmp(argv[1], "sqlite-to-xml") == 0) return sqlite_to_xml(argv[2], argv[3]);
    if (strcmp(argv[1], "xml-to-sqlite") == 0) return xml_to_sqlite(argv[2], argv[3], 1);
    if (strcmp(argv[1], "xml-to-sqlite-bare") == 0) return xml_to_sqlite(argv[2], argv[3], 0);
    die("unknown mode", argv[1]);
    return 1;
}
