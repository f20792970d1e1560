/* Row family -> the operation's callbacks. */
#include "atomic.h"
#include "family.h"
#include "rma.h"
#include "rows.h"

extern const efab_family_t efab_family_connect, efab_family_scan;

static const efab_family_t no_family;

const efab_family_t *efab_family(int id)
{
	static const efab_family_t *const table[EFAB_N_FAMILIES] = {
		[EFAB_FAMILY_NONE] = &no_family,
		[EFAB_FAMILY_RMA] = &efab_family_rma,
		[EFAB_FAMILY_ATOMIC] = &efab_family_atomic,
		[EFAB_FAMILY_CONNECT] = &efab_family_connect,
		[EFAB_FAMILY_SCAN] = &efab_family_scan,
	};
	return id >= 0 && id < EFAB_N_FAMILIES ? table[id] : &no_family;
}
