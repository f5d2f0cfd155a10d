#include <libxml/xmlversion.h>
// Debian builds libxml2 with ICU; its encoding header would then pull the system's ICU headers into
// this module, where they clash with the copy Foundation carries. Graft never uses libxml2's ICU
// converters, so their declarations are left out.
#undef LIBXML_ICU_ENABLED
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/xmlerror.h>
#include <libxml/xmlreader.h>
#include <libxml/xmlsave.h>
#include <libxml/xmlwriter.h>
#include <libxml/SAX2.h>
#include <libxml/parserInternals.h>
#include <libxml/hash.h>

/// `xmlFree` is a global function-pointer variable, which Swift 6 treats as shared mutable state.
static inline void cxml_free(void *pointer) { xmlFree(pointer); }
