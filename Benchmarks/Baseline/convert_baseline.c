/*
 * The baseline for Graft's conversion benchmark: the same raw work done directly with libsqlite3 and
 * libxml2, with no model, no snapshots and no checks.
 *
 *   convert_baseline sqlite-to-xml IN.sqlite OUT.xml   read every row, write Core Data-style XML
 *   convert_baseline xml-to-sqlite IN.xml OUT.sqlite   parse with SAX, insert rows with prepared
 *                                                      statements in one transaction
 *
 * It knows the benchmark's Company document by heart: Department(name, code, budget) and Employee /
 * Manager(name, employeeID, salary, hireDate, isRemote, rating, department, manager).
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
        else if (strcmp(a, "rating") == 0) loader->rating = atof(loader->text);
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
    }
}

static int xml_to_sqlite(const char *in, const char *out) {
    remove(out);
    Loader loader = {0};
    if (sqlite3_open(out, &loader.db) != SQLITE_OK) die("create", sqlite3_errmsg(loader.db));
    sqlite3_exec(loader.db, "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; BEGIN;"
                            "CREATE TABLE ZDEPARTMENT (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZCODE INTEGER, ZBUDGET DECIMAL, ZNAME VARCHAR);"
                            "CREATE TABLE ZEMPLOYEE (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZEMPLOYEEID INTEGER, ZISREMOTE INTEGER,"
                            " ZDEPARTMENT INTEGER, ZMANAGER INTEGER, ZHIREDATE TIMESTAMP, ZSALARY DECIMAL, ZRATING FLOAT, ZNAME VARCHAR);",
                 NULL, NULL, NULL);
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
    sqlite3_exec(loader.db, "CREATE INDEX ZEMPLOYEE_ZDEPARTMENT_INDEX ON ZEMPLOYEE (ZDEPARTMENT);"
                            "CREATE INDEX ZEMPLOYEE_ZMANAGER_INDEX ON ZEMPLOYEE (ZMANAGER); COMMIT;", NULL, NULL, NULL);
    sqlite3_close(loader.db);
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 4) die("usage", "convert_baseline sqlite-to-xml|xml-to-sqlite IN OUT");
    if (strcmp(argv[1], "sqlite-to-xml") == 0) return sqlite_to_xml(argv[2], argv[3]);
    if (strcmp(argv[1], "xml-to-sqlite") == 0) return xml_to_sqlite(argv[2], argv[3]);
    die("unknown mode", argv[1]);
    return 1;
}
