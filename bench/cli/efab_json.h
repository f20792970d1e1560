/* JSON output helpers shared by the writers of meta.json, probe and node files. */
#ifndef EFAB_JSON_H
#define EFAB_JSON_H

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* s as a JSON string literal (quotes, backslashes and control characters escaped). */
void efab_json_str(FILE *f, const char *s);

/* One string member of an object: sep (the caller's punctuation and layout
 * before it: "", ", ", ",\n  "), then "key": "value", both quoted as by
 * efab_json_str (so a NULL value is written as ""). */
void efab_json_kv(FILE *f, const char *sep, const char *key, const char *value);

#ifdef __cplusplus
}
#endif

#endif
