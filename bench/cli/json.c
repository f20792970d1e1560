#include "efab_json.h"

void efab_json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p == '\n')
			fputs("\\n", f);
		else if (*p == '\t')
			fputs("\\t", f);
		else if (*p < 0x20)
			fprintf(f, "\\u%04x", *p);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

void efab_json_kv(FILE *f, const char *sep, const char *key, const char *value)
{
	fputs(sep, f);
	efab_json_str(f, key);
	fputs(": ", f);
	efab_json_str(f, value);
}
