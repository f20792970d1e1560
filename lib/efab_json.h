/* JSON output helpers shared by the writers of meta.json, probe and node files. */
#ifndef EFAB_JSON_H
#define EFAB_JSON_H

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* s as a JSON string literal (quotes, backslashes and control characters escaped). */
void efab_json_str(FILE *f, const char *s);

#ifdef __cplusplus
}
#endif

#endif
